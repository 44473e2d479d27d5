package hass

import (
	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
)

// MaxResponseBytes bounds one answer from Home Assistant: /api/states of a
// large home runs to a few megabytes.
const MaxResponseBytes = 16 << 20

// Module provides the Home Assistant client from HA_URL, HA_TOKEN_FILE,
// HA_CA_FILE, HA_ALLOW_HTTP and HA_TIMEOUT, and the readiness check.
var Module = fx.Module("hass",
	toolkit.Upstream(App, func(c *upstream.Config) {
		c.UserAgent = "toolgate-homeassistant"
		c.MaxBytes = MaxResponseBytes
	}),
	fx.Provide(New),
	fx.Provide(func(h *Client) toolkit.ReadyFunc { return h.Ping }),
)
