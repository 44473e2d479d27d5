package arrapi

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// AppModule is the fx module of one application: it builds the app's
// Client from the environment (nil when the app is not configured) and
// keeps it private to the module, so Sonarr's and Radarr's Clients do not
// clash; it contributes the API key to the redactor and the app's
// readiness check. opts add the app's own constructors and tools; every
// one of them must accept a nil Client and then contribute nothing.
func AppModule(app, apiRoot string, opts ...fx.Option) fx.Option {
	all := []fx.Option{
		fx.Provide(fx.Private, func(log *slog.Logger) (*Client, error) {
			return FromEnv(app, apiRoot, log)
		}),
	}
	all = append(all, opts...)
	all = append(all,
		toolkit.ProvideSecret((*Client).Secret),
		ProvideCheck((*Client).Check),
	)
	return fx.Module(app, all...)
}
