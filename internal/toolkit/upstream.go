package toolkit

import (
	"fmt"
	"log/slog"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/upstream"
)

// Upstream provides a service's one upstream application from the
// environment (upstream.App names the settings): its upstream.Settings, an
// *upstream.Client built from them, and its credential as a Secret for
// redaction. edit, when not nil, adjusts the client's Config before it is
// built (byte cap, user agent). A service with several applications (arr)
// loads each App itself.
func Upstream(app upstream.App, edit func(*upstream.Config)) fx.Option {
	return fx.Options(
		fx.Provide(func(log *slog.Logger) (upstream.Settings, *upstream.Client, error) {
			return NewUpstream(config.FromEnv(), app, edit, log)
		}),
		ProvideSecret(func(s upstream.Settings) Secret { return Secret(s.Secret) }),
	)
}

// NewUpstream is Upstream without fx: it loads app's settings through l
// and builds the client. Every bad setting is reported at once, named and
// without its value.
func NewUpstream(l *config.Loader, app upstream.App, edit func(*upstream.Config), log *slog.Logger) (upstream.Settings, *upstream.Client, error) {
	s, _ := app.Load(l)
	if err := l.Err(); err != nil {
		return s, nil, fmt.Errorf("configuration: %w", err)
	}
	cfg := s.Config()
	cfg.Logger = log
	if edit != nil {
		edit(&cfg)
	}
	c, err := upstream.New(cfg)
	if err != nil {
		return s, nil, err
	}
	return s, c, nil
}
