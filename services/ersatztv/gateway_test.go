package main

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
	"github.com/toolgate/toolgate/services/ersatztv/tools"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// gwKey is the planted machine key of the gateway tests.
const gwKey = "etv-Planted-gateway-key-3c9d44"

// catalogBudget is every endpoint's tools/list budget.
const catalogBudget = 12 << 10

var gwNow = time.Unix(1_750_000_000, 0)

type stack struct {
	store  *fakeersatztv.Store
	v1     *fakeersatztv.V1
	legacy *fakeersatztv.Legacy
	g      *gatewaytest.Gateway
	set    tools.Settings
}

// startStack runs a fake ErsatzTV (v1 or legacy), the ersatztv tools over
// it and a real gateway in front, with the service's own writes switch.
func startStack(t *testing.T, mode string, writes bool) *stack {
	t.Helper()
	st := &stack{store: fakeersatztv.NewDemoStore(gwNow)}
	var h http.Handler
	if mode == "v1" {
		st.v1 = fakeersatztv.NewV1(st.store, gwKey)
		h = st.v1
	} else {
		st.legacy = fakeersatztv.NewLegacy(st.store)
		h = st.legacy.Handler(true)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(gwKey), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ERSATZTV_URL": srv.URL, "ERSATZTV_ALLOW_HTTP": "true", "ERSATZTV_API_KEY_FILE": keyFile,
		"ERSATZTV_ALLOW_WRITES": map[bool]string{true: "true", false: "false"}[writes]}
	set, err := tools.LoadSettings(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	st.set = set
	logs := &capture.Buffer{}
	svc, err := tools.Start(t.Context(), set, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	st.g = gatewaytest.Start(t, gatewaytest.Options{
		Service: "ersatztv", Tools: svc.Tools(), AllowWrites: writes, Secrets: [][]byte{[]byte(gwKey)},
		Instructions: svc.Instructions(),
	})
	t.Cleanup(func() { st.g.NoLeaks(t, []string{gwKey}, map[string]string{"service start log": logs.String()}) })
	return st
}

// With writes on, /mcp/ersatztv (v1) is over the budget, so the gateway
// splits it into default toolsets (app.DefaultToolsets): each fits, and
// together they offer every tool, in either API's mode.
func TestDefaultToolsetsFitTheBudget(t *testing.T) {
	sets := app.DefaultToolsetsOf([]string{"ersatztv"})
	if len(sets) == 0 {
		t.Fatal("the gateway defines no ersatztv toolsets")
	}
	for _, mode := range []string{"v1", "legacy"} {
		t.Run(mode, func(t *testing.T) {
			st := startStack(t, mode, true)
			_, all := st.g.ToolsListSize("openwebui", "/mcp/ersatztv")
			covered := map[string]bool{}
			for _, ts := range sets {
				size, names := st.g.ToolsListSize("openwebui", "/mcp/"+ts.Name)
				t.Logf("/mcp/%s (%s, writes on): %d tools, %d bytes", ts.Name, mode, len(names), size)
				if size > catalogBudget {
					t.Errorf("/mcp/%s is %d bytes, over the budget", ts.Name, size)
				}
				for _, n := range names {
					covered[n] = true
				}
			}
			for _, n := range all {
				if !covered[n] {
					t.Errorf("no toolset offers %s", n)
				}
			}
		})
	}
}

// /mcp/ersatztv stays within the 12 KB budget with writes off, in both
// modes; the test logs the size with writes on.
func TestCatalogFitsTheBudget(t *testing.T) {
	for _, c := range []struct {
		mode   string
		writes bool
		tools  int
	}{
		{"v1", false, 25}, {"legacy", false, 6}, {"v1", true, 48}, {"legacy", true, 11},
	} {
		t.Run(c.mode+map[bool]string{true: " writes on", false: " writes off"}[c.writes], func(t *testing.T) {
			st := startStack(t, c.mode, c.writes)
			size, names := st.g.ToolsListSize("openwebui", "/mcp/ersatztv")
			t.Logf("/mcp/ersatztv (%s, writes %v): %d tools, %d bytes", c.mode, c.writes, len(names), size)
			if len(names) != c.tools {
				t.Errorf("%d tools, want %d: %v", len(names), c.tools, names)
			}
			if !c.writes && size > catalogBudget {
				t.Errorf("tools/list is %d bytes, over the %d-byte budget", size, catalogBudget)
			}
		})
	}
}

// Both Go MCP clients read through a real gateway: the same tools, the
// ETag in results, the mode, and the machine key nowhere (not in results,
// logs, audit or either client's wire) even when ErsatzTV echoes it.
func TestReadsThroughTheGatewayWithBothClients(t *testing.T) {
	st := startStack(t, "v1", false)
	// A hostile or careless upstream echoes the key in a field.
	st.store.Lock()
	st.store.Source(5).Address = "http://jellyfin.lan:8096/?api_key=" + gwKey
	st.store.Unlock()

	sdkWire := &capture.Buffer{}
	sess := st.g.SDKClientAt("openwebui", "/mcp/ersatztv", sdkWire)
	mc := st.g.ClientAt("openwebui", "ann@example.org", "/mcp/ersatztv")

	calls := []struct {
		tool string
		args map[string]any
		has  []string
	}{
		{"ersatztv_get_version", nil, []string{`"mode":"v1"`}},
		{"ersatztv_get_collection_items", map[string]any{"id": 11}, []string{`"etag":"\"4\""`}},
		{"ersatztv_list_playouts", nil, []string{`"channelId":3`}},
		{"ersatztv_list_media_sources", nil, []string{`Living Room Jellyfin`}},
	}
	for _, c := range calls {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = c.tool, c.args
		res, err := mc.CallTool(t.Context(), req)
		if err != nil || res.IsError {
			t.Fatalf("mcp-go %s: %v %v", c.tool, err, res)
		}
		sres, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || sres.IsError {
			t.Fatalf("go-sdk %s: %v %v", c.tool, err, sres)
		}
		a, _ := json.Marshal(gatewaytest.Structured(t, res))
		b, _ := json.Marshal(sres.StructuredContent)
		for _, h := range c.has {
			if !strings.Contains(string(a), h) || !strings.Contains(string(b), h) {
				t.Errorf("%s lacks %s:\nmcp-go %s\ngo-sdk %s", c.tool, h, a, b)
			}
		}
	}
	if !strings.Contains(st.g.Wire.String(), "Living Room") || !strings.Contains(sdkWire.String(), "Living Room") {
		t.Fatal("the wire recorders saw nothing; the leak check would prove nothing")
	}
	if !strings.Contains(st.g.Instructions, "pageNum is 0-based") {
		t.Errorf("instructions: %q", st.g.Instructions)
	}
	st.g.NoLeaks(t, []string{gwKey}, map[string]string{"go-sdk wire": sdkWire.String()})
}
