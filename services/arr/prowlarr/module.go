package prowlarr

import (
	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// APIRoot is Prowlarr's versioned API path.
const APIRoot = "/api/v1"

// Module contributes the prowlarr_ tools, the API key for the redactor and
// Prowlarr's readiness check when PROWLARR_URL and PROWLARR_API_KEY_FILE
// are set; otherwise nothing.
var Module = arrapi.AppModule("prowlarr", APIRoot,
	fx.Provide(fx.Private, New),
	toolkit.ProvideTools(Tools),
)
