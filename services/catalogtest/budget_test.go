package catalogtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// listBytes returns the size of the tools/list result an MCP client gets
// at path, as the admin client (who sees every tool), and the tool names.
func listBytes(t *testing.T, g *gatewaytest.Gateway, path string) (int, []string) {
	t.Helper()
	post := func(sid, body string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodPost, g.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+g.Tokens["admin"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("%s: initialize: %s", path, body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, body = post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || len(msg.Result) == 0 {
		t.Fatalf("%s: tools/list: %s", path, body)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	_ = json.Unmarshal(msg.Result, &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	compact := &bytes.Buffer{}
	if err := json.Compact(compact, msg.Result); err != nil {
		t.Fatal(err)
	}
	return compact.Len(), names
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
				n, names := listBytes(t, g, "/mcp/"+ep)
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
			n, names := listBytes(t, g, "/mcp/"+s.Name)
			if !slices.Contains(Recommended(s.Name), s.Name) {
				table = append(table, fmt.Sprintf("| `/mcp/%s` (all of it; not recommended) | %d | %.1f KB |", s.Name, len(names), float64(n)/1024))
			}
			n, names = listBytes(t, g, "/mcp/"+router.DiscoveryEndpoint)
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

// TestInstallPrintsEveryDefaultToolset: install.sh tells users the
// toolset endpoints, not the services they split.
func TestInstallPrintsEveryDefaultToolset(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range app.DefaultToolsets {
		if !regexp.MustCompile(`parts=\([^)]*\b` + regexp.QuoteMeta(ts.Name) + `\b`).Match(b) {
			t.Errorf("install.sh does not print /mcp/%s", ts.Name)
		}
	}
}
