// Command homeassistant is the toolgate tool service for Home Assistant:
// read-only tools over its REST API, a relay of its own MCP server whose
// writes go through preview → ticket → confirm, and a guarded editor of
// automations, scripts and scenes. The long-lived access token never
// leaves this service.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
	"github.com/toolgate/toolgate/services/homeassistant/notify"
	"github.com/toolgate/toolgate/services/homeassistant/reads"
	"github.com/toolgate/toolgate/services/homeassistant/relay"
	"github.com/toolgate/toolgate/services/homeassistant/yamlguard"
)

func main() {
	toolkit.Run("homeassistant",
		hass.Module,
		reads.Module,
		relay.Module,
		notify.Module,
		yamlguard.Module,
	)
}
