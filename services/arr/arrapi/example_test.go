package arrapi_test

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// An app module builds its Client from the environment (nil when the app is
// not configured), keeps it private to the module (Sonarr and Radarr both
// have one), and contributes tools, the API key for the redactor and a
// readiness check; AppModule does all but the tools. An unconfigured app
// contributes nothing: every constructor must accept a nil Client.
func Example_module() {
	tools := func(c *arrapi.Client) []toolkit.Tool {
		if c == nil {
			return nil
		}
		return []toolkit.Tool{ /* radarr_… tools using c.Get, c.GetSlow, c.Post */ }
	}
	module := arrapi.AppModule("radarr", "/api/v3", toolkit.ProvideTools(tools))
	_ = module
	// main.go: toolkit.Run("arr", arrapi.Module, sonarr.Module, radarr.Module, prowlarr.Module)
}
