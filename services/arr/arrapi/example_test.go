package arrapi_test

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// An app module builds its Client from the environment (nil when the app is
// not configured), keeps it private to the module (Sonarr and Radarr both
// have one), and contributes tools, the API key for the redactor and a
// readiness check. An unconfigured app contributes nothing: every
// constructor must accept a nil Client.
func Example_module() {
	tools := func(c *arrapi.Client) []toolkit.Tool {
		if c == nil {
			return nil
		}
		return []toolkit.Tool{ /* radarr_… tools using c.Get, c.GetSlow, c.Post */ }
	}
	module := fx.Module("radarr",
		fx.Provide(fx.Private, func(log *slog.Logger) (*arrapi.Client, error) {
			return arrapi.FromEnv("radarr", "/api/v3", log)
		}),
		toolkit.ProvideTools(tools),
		toolkit.ProvideSecret((*arrapi.Client).Secret),
		arrapi.ProvideCheck((*arrapi.Client).Check),
	)
	_ = module
	// main.go: toolkit.Run("arr", arrapi.Module, sonarr.Module, radarr.Module, prowlarr.Module)
}
