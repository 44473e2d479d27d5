// Command unraid-ssh is the toolgate tool service for extended Unraid
// diagnosis over SSH: fixed diagnostics through a forced-command script on
// the server (deploy/unraid/toolgate-diag.sh), a pinned host key, no
// command strings. Profile extended; never part of the default start.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/unraid-ssh/diag"
)

func main() {
	toolkit.Run("unraid-ssh", diag.Module)
}
