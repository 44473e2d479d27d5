// Command ersatztv is the toolgate tool service for ErsatzTV, the live TV
// channel server: the seed's read tools and, with ERSATZTV_ALLOW_WRITES,
// its write tools, over the /api/v1 API of ErsatzTV forks or upstream
// ErsatzTV's /api (detected at start).
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/ersatztv/tools"
)

func main() {
	toolkit.Run("ersatztv", tools.Module)
}
