// Command frigate is the toolgate tool service for Frigate, the network
// video recorder: read-only status, cameras, events, semantic search,
// snapshots and latest frames. It never changes anything in Frigate.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/frigate/tools"
)

func main() {
	toolkit.Run("frigate", tools.Module)
}
