// Command arr is the tool service for Sonarr, Radarr and Prowlarr. Each
// application is configured on its own (<APP>_URL and <APP>_API_KEY_FILE);
// one that is not configured contributes no tools. Writes (an episode or
// movie search for exact items, the grab of one exact release) exist only
// with ARR_ALLOW_WRITES=true and always go through the gateway's
// preview → ticket → confirm flow.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/prowlarr"
	"github.com/toolgate/toolgate/services/arr/radarr"
	"github.com/toolgate/toolgate/services/arr/sonarr"
)

func main() {
	toolkit.Run("arr",
		arrapi.Module,
		sonarr.Module,
		radarr.Module,
		prowlarr.Module,
	)
}
