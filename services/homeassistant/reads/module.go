package reads

import (
	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

// Module provides the read tools.
var Module = fx.Module("reads",
	fx.Provide(func(h *hass.Client) *Service { return New(h, nil) }),
	toolkit.ProvideTools((*Service).Tools),
)
