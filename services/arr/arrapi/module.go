package arrapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// Check is the readiness probe of one configured application.
type Check struct {
	App   string
	Ready func(ctx context.Context) error
}

// Check returns c's readiness probe (GET /system/status with the key). A
// nil Client (unconfigured app) returns the zero Check, which is skipped.
func (c *Client) Check() Check {
	if c == nil {
		return Check{}
	}
	return Check{App: c.cfg.App, Ready: func(ctx context.Context) error {
		_, err := c.SystemStatus(ctx)
		return err
	}}
}

// ProvideCheck registers a constructor whose Check result joins the
// service's readiness probe.
func ProvideCheck(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.ResultTags(`group:"arr.checks"`)))
}

// Module provides the arr service's toolkit.ReadyFunc: ready when at
// least one application is configured and every configured one answers
// with its key accepted. Each app module adds its Check with ProvideCheck.
var Module = fx.Module("arrapi",
	fx.Provide(fx.Annotate(Ready, fx.ParamTags(`group:"arr.checks"`))),
)

// Ready combines checks into one toolkit.ReadyFunc; zero Checks
// (unconfigured apps) are skipped. The error names each failing app.
func Ready(checks []Check) toolkit.ReadyFunc {
	var live []Check
	for _, c := range checks {
		if c.Ready != nil {
			live = append(live, c)
		}
	}
	return func(ctx context.Context) error {
		if len(live) == 0 {
			return errors.New("no application configured: set SONARR_URL, RADARR_URL or PROWLARR_URL and its _API_KEY_FILE")
		}
		var errs []error
		for _, c := range live {
			if err := c.Ready(ctx); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.App, err))
			}
		}
		return errors.Join(errs...)
	}
}

// FromEnv builds the Client of app from the process environment, or
// returns (nil, nil) when the app is not configured. Every bad setting is
// reported at once; no message contains a value.
func FromEnv(app, apiRoot string, logger *slog.Logger) (*Client, error) {
	return fromLoader(config.FromEnv(), app, apiRoot, logger)
}

func fromLoader(l *config.Loader, app, apiRoot string, logger *slog.Logger) (*Client, error) {
	cfg, ok := LoadConfig(l, app, apiRoot)
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("%s: configuration: %w", app, err)
	}
	if !ok {
		if logger != nil {
			logger.Info("application not configured; its tools are absent", "app", app, "set", EnvFor(app).URL)
		}
		return nil, nil
	}
	if logger != nil {
		cfg.Logger = logger.With("app", app)
	}
	c, err := New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", app, err)
	}
	return c, nil
}
