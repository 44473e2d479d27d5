package catalogtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// Budgets, in bytes of a tools/list result: every endpoint a user is
// told to add goes into every prompt of every conversation.
const (
	endpointBudget  = 12 << 10
	discoveryBudget = 4 << 10
)

// Recommended are the endpoints of a service users are told to add: its
// default toolsets when it has any (arr: sonarr, radarr, prowlarr), else
// /mcp/<service>.
func Recommended(service string) []string {
	var out []string
	for _, ts := range app.DefaultToolsetsOf([]string{service}) {
		out = append(out, ts.Name)
	}
	if len(out) == 0 {
		out = []string{service}
	}
	return out
}

// TestEveryRecommendedEndpointFitsTheBudget: every endpoint a user is told
// to add, of every service in the repository with every application
// configured and writes on, lists at most 12 KB of tools; the discovery
// endpoint at most 4 KB. The table it logs is the one in
// docs/performance.md (go test -v -run Budget ./services/catalogtest/).
func TestEveryRecommendedEndpointFitsTheBudget(t *testing.T) {
	var table []string
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			tools, instructions := Tools(t, s)
			if len(tools) == 0 {
				t.Fatal("no tools")
			}
			g := gatewaytest.Start(t, gatewaytest.Options{Service: s.Name, Tools: tools, AllowWrites: true, Instructions: instructions})
			covered := map[string]bool{}
			for _, ep := range Recommended(s.Name) {
				n, names := g.ToolsListSize("admin", "/mcp/"+ep)
				table = append(table, fmt.Sprintf("| `/mcp/%s` | %d | %.1f KB |", ep, len(names), float64(n)/1024))
				if len(names) == 0 {
					t.Errorf("/mcp/%s lists no tools", ep)
				}
				if n > endpointBudget {
					t.Errorf("/mcp/%s lists %d bytes of tools, over the budget of %d: split it into toolsets (app.DefaultToolsets) or tighten descriptions", ep, n, endpointBudget)
				}
				for _, name := range names {
					covered[name] = true
				}
			}
			// The recommended endpoints together offer every tool.
			for _, tl := range tools {
				if !covered[tl.Name] {
					t.Errorf("tool %s is on no recommended endpoint", tl.Name)
				}
			}
			n, names := g.ToolsListSize("admin", "/mcp/"+s.Name)
			if !slices.Contains(Recommended(s.Name), s.Name) {
				table = append(table, fmt.Sprintf("| `/mcp/%s` (all of it; not recommended) | %d | %.1f KB |", s.Name, len(names), float64(n)/1024))
			}
			n, names = g.ToolsListSize("admin", "/mcp/"+router.DiscoveryEndpoint)
			if n > discoveryBudget || len(names) != 3 {
				t.Errorf("/mcp/%s lists %d tools in %d bytes, over the budget of %d", router.DiscoveryEndpoint, len(names), n, discoveryBudget)
			}
			if s.Name == "demo" {
				table = append(table, fmt.Sprintf("| `/mcp/%s` (any number of services) | %d | %.1f KB |", router.DiscoveryEndpoint, len(names), float64(n)/1024))
			}
		})
	}
	t.Log("\n| endpoint | tools | tools/list |\n|---|---|---|\n" + strings.Join(table, "\n"))
}

// wholeWithWritesOff are the services whose whole endpoint must also fit
// the budget with writes off, for users who add it rather than its
// toolsets: ErsatzTV (issue 14: 48 tools, split only because of its
// writes).
var wholeWithWritesOff = []string{"ersatztv"}

// TestWholeEndpointWithWritesOffFitsTheBudget: with the service's writes
// off, /mcp/<service> as a whole lists at most 12 KB of tools for the
// services above; the log has every service's figure with writes off and
// on (go test -v -run WritesOff ./services/catalogtest/).
func TestWholeEndpointWithWritesOffFitsTheBudget(t *testing.T) {
	var table []string
	for _, s := range All() {
		t.Run(s.Name, func(t *testing.T) {
			tools, instructions := Tools(t, s)
			var size [2]int
			var count [2]int
			for i, writes := range []bool{false, true} {
				g := gatewaytest.Start(t, gatewaytest.Options{Service: s.Name, Tools: tools, AllowWrites: writes, Instructions: instructions})
				n, names := g.ToolsListSize("admin", "/mcp/"+s.Name)
				size[i], count[i] = n, len(names)
			}
			table = append(table, fmt.Sprintf("| `/mcp/%s` | %d tools, %d bytes | %d tools, %d bytes |", s.Name, count[0], size[0], count[1], size[1]))
			if slices.Contains(wholeWithWritesOff, s.Name) && size[0] > endpointBudget {
				t.Errorf("/mcp/%s with writes off lists %d bytes of tools, over the budget of %d", s.Name, size[0], endpointBudget)
			}
		})
	}
	t.Log("\n| endpoint | writes off | writes on |\n|---|---|---|\n" + strings.Join(table, "\n"))
}

// TestInstallPrintsEveryDefaultToolset: install.sh tells users the
// toolset endpoints, not the services they split.
func TestInstallPrintsEveryDefaultToolset(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// endpoints_of names the endpoints install.sh prints for each service.
	fn := regexp.MustCompile(`(?s)\nendpoints_of\(\) \{.*?\n\}`).Find(b)
	if fn == nil {
		t.Fatal("install.sh has no endpoints_of function")
	}
	for _, ts := range app.DefaultToolsets {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(ts.Name) + `\b`).Match(fn) {
			t.Errorf("install.sh does not print /mcp/%s", ts.Name)
		}
	}
}
