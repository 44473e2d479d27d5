// Command unraid is the toolgate tool service for Unraid: read-only
// diagnosis of the NAS over Unraid's official GraphQL API with a VIEWER
// key, and optional managed actions behind UNRAID_ALLOW_WRITES.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/unraid/tools"
)

func main() {
	toolkit.Run("unraid", tools.Module)
}
