// Command web is the web tool service: compact web search through SearXNG,
// a guarded fetch of one public page as Markdown, and a comparison of the
// top sources for a question. It is the only service on the egress network;
// every page fetch goes through the SSRF guard.
package main

import (
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/web/app"
)

func main() {
	toolkit.Run("web", app.Module)
}
