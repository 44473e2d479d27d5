package sonarr

import (
	"time"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// App is the application name; it prefixes the settings (SONARR_URL …).
const App = "sonarr"

// Module adds the Sonarr tools when SONARR_URL and SONARR_API_KEY_FILE
// are set; without them it adds nothing.
var Module = arrapi.AppModule(App, "/api/v3",
	toolkit.ProvideTools(func(api *arrapi.Client) []toolkit.Tool {
		if api == nil {
			return nil
		}
		return Tools(NewClient(api), time.Now)
	}),
)
