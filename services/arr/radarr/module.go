package radarr

import (
	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// Module contributes the radarr_ tools (the writes only take effect with
// ARR_ALLOW_WRITES=true), the API key for the redactor and Radarr's
// readiness check when RADARR_URL and RADARR_API_KEY_FILE are set;
// otherwise nothing.
var Module = arrapi.AppModule("radarr", APIRoot,
	fx.Provide(fx.Private, New),
	toolkit.ProvideTools(Tools),
)
