package sonarr

import (
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// App is the application name; it prefixes the settings (SONARR_URL …).
const App = "sonarr"

// Module adds the Sonarr tools when SONARR_URL and SONARR_API_KEY_FILE
// are set; without them it adds nothing.
var Module = fx.Module(App,
	fx.Provide(fx.Private, func(log *slog.Logger) (*arrapi.Client, error) {
		return arrapi.FromEnv(App, "/api/v3", log)
	}),
	toolkit.ProvideTools(func(api *arrapi.Client) []toolkit.Tool {
		if api == nil {
			return nil
		}
		return Tools(NewClient(api), time.Now)
	}),
	toolkit.ProvideSecret((*arrapi.Client).Secret),
	arrapi.ProvideCheck((*arrapi.Client).Check),
)
