package relay

import (
	"context"
	"fmt"
	"log/slog"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

// Module relays Home Assistant's MCP server (HA_MCP_PATH, HA_MCP_TOOLS,
// HA_MCP_REFRESH) on the service; HA_MCP_PATH=off leaves it out.
var Module = fx.Module("relay",
	fx.Provide(func(h *hass.Client, log *slog.Logger) (*Relay, error) {
		l := config.FromEnv()
		set := LoadSettings(l)
		if err := l.Err(); err != nil {
			return nil, fmt.Errorf("configuration: %w", err)
		}
		return New(set, h, log.With("component", "relay")), nil
	}),
	fx.Invoke(start),
)

func start(lc fx.Lifecycle, r *Relay, svc *toolkit.Service) {
	if r.set.Path == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			r.Attach(svc)
			go func() {
				defer close(done)
				r.Run(ctx)
			}()
			return nil
		},
		OnStop: func(stop context.Context) error {
			cancel()
			select {
			case <-done:
			case <-stop.Done():
			}
			return nil
		},
	})
}
