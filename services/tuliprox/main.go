// Command tuliprox is the toolgate tool service for Tuliprox, the IPTV
// proxy: the seed's 14 read tools over Tuliprox's REST API as a Web UI
// user, and with TULIPROX_ALLOW_WRITES its 2 write tools (playlist and
// GeoIP updates) through the gateway's preview → ticket → confirm.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

func main() {
	toolkit.Run("tuliprox", tools.Module)
}
