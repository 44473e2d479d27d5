package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

// catalogBudget is every endpoint's tools/list budget.
const catalogBudget = 12 << 10

type stack struct {
	*env
	g *gatewaytest.Gateway
}

// startStack runs the fake, the tuliprox tools signed in as user, and a
// real gateway (real Rego) with the clients openwebui (users), kiosk
// (readonly) and boss (admins).
func startStack(t *testing.T, o faketuliprox.Options, user, pass string, writes bool) *stack {
	t.Helper()
	e := start(t, o, user, pass, writes)
	tokens, bearer := gatewaytest.ClientTokens(t, map[string][]string{"openwebui": {"users"}, "kiosk": {"readonly"}, "boss": {"admins"}})
	g := gatewaytest.Start(t, gatewaytest.Options{
		Service: "tuliprox", Tools: e.svc.Tools(), AllowWrites: writes, Secrets: [][]byte{[]byte(pass)},
		Instructions: e.svc.Instructions(),
		Config:       func(c *app.Config) { c.Tokens = tokens },
	})
	g.Tokens = bearer
	return &stack{env: e, g: g}
}

// refused calls tool and reports whether the gateway refused it (an
// unlisted tool is a JSON-RPC error, a denied one an error result).
func refused(t *testing.T, c *client.Client, tool string) (bool, string) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, map[string]any{}
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		return true, err.Error()
	}
	b, _ := json.Marshal(res)
	return res.IsError, string(b)
}

func names(t *testing.T, s *stack, client string) []string {
	t.Helper()
	list, err := s.g.ClientAt(client, "", "/mcp/tuliprox").ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tool := range list.Tools {
		out = append(out, tool.Name)
	}
	return out
}

// Without TULIPROX_ALLOW_WRITES the two writes do not exist; with it they
// do, and members of a read-only group still do not see them.
func TestWritesExistOnlyWithTheOptIn(t *testing.T) {
	off := startStack(t, faketuliprox.Options{}, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword, false)
	if got := names(t, off, "boss"); len(got) != 14 || strings.Contains(strings.Join(got, ","), "tuliprox_update_") {
		t.Fatalf("without the opt-in: %v", got)
	}
	c := off.g.ClientAt("boss", "", "/mcp/tuliprox")
	if ok, res := refused(t, c, tools.ToolUpdatePlaylist); !ok {
		t.Fatalf("a write ran without the opt-in: %s", res)
	}
	if off.fake.Updates() != 0 {
		t.Fatal("an update was queued")
	}
	on := startStack(t, faketuliprox.Options{}, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword, true)
	if got := names(t, on, "boss"); len(got) != 16 {
		t.Fatalf("with the opt-in: %v", got)
	}
	if got := strings.Join(names(t, on, "kiosk"), ","); strings.Contains(got, "tuliprox_update_") {
		t.Fatalf("a read-only client sees the writes: %s", got)
	}
}

// update_playlists through the gateway: the preview queues nothing and
// shows the targets and the update state; the confirm queues exactly once;
// a replay and a changed scope are refused.
func TestUpdatePlaylistsFlowThroughTheGateway(t *testing.T) {
	s := startStack(t, faketuliprox.Options{}, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword, true)
	c := s.g.ClientAt("openwebui", "ann@example.org", "/mcp/tuliprox")
	args := map[string]any{"targets": []any{"main", "kids"}}
	prev, isErr := gatewaytest.Call(t, c, tools.ToolUpdatePlaylist, args)
	if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "model" || s.fake.Updates() != 0 {
		t.Fatalf("preview: %v", prev)
	}
	b, _ := json.Marshal(prev)
	if !strings.Contains(string(b), `"targets":["kids","main"]`) || !strings.Contains(string(b), `"update_state":"idle"`) {
		t.Fatalf("the preview does not show the targets and the state: %s", b)
	}
	ticket := prev["ticket"]
	other, isErr := gatewaytest.Call(t, c, tools.ToolUpdatePlaylist, gatewaytest.With(map[string]any{"targets": []any{"main"}}, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || s.fake.Updates() != 0 {
		t.Fatalf("a ticket for main and kids confirmed an update of main alone: %v", other)
	}
	done, isErr := gatewaytest.Call(t, c, tools.ToolUpdatePlaylist, gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if isErr || done["status"] != "applied" || s.fake.Updates() != 1 {
		t.Fatalf("confirm: %v", done)
	}
	again, isErr := gatewaytest.Call(t, c, tools.ToolUpdatePlaylist, gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket}))
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || s.fake.Updates() != 1 {
		t.Fatalf("replay: %v", again)
	}
	// Now an update is queued: a new preview says so, and its confirm
	// is refused by Tuliprox with 409, reported as such.
	prev, _ = gatewaytest.Call(t, c, tools.ToolUpdatePlaylist, map[string]any{})
	if b, _ := json.Marshal(prev); !strings.Contains(string(b), `"update_state":"queued"`) {
		t.Fatalf("second preview: %s", b)
	}
	busy, isErr := gatewaytest.Call(t, c, tools.ToolUpdatePlaylist, map[string]any{"confirm": true, "ticket": prev["ticket"]})
	if b, _ := json.Marshal(busy); !isErr || gatewaytest.ErrorCode(busy) != "busy" || !strings.Contains(string(b), "an update is already queued") {
		t.Fatalf("409: %s", b)
	}
	s.g.NoLeaks(t, secrets, nil)
}

// The read-only kiosk may read but never gets a ticket.
func TestReadOnlyClientCannotUpdate(t *testing.T) {
	s := startStack(t, faketuliprox.Options{}, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword, true)
	c := s.g.ClientAt("kiosk", "", "/mcp/tuliprox")
	if ok, res := refused(t, c, tools.ToolUpdateGeoIP); !ok {
		t.Fatalf("kiosk: %s", res)
	}
	if res, isErr := gatewaytest.Call(t, c, tools.ToolSources, map[string]any{}); isErr {
		t.Fatalf("kiosk read: %v", res)
	}
	if s.fake.GeoIPUpdates() != 0 {
		t.Fatal("GeoIP updated")
	}
}

// The tools that show user names and client IPs are for admins only: the
// policy hides them from other clients and refuses their calls.
func TestPersonalDataToolsOnlyForAdmins(t *testing.T) {
	s := startStack(t, faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, false)
	restricted := []string{tools.ToolStreams, tools.ToolHistory, tools.ToolHistorySummary}
	users := strings.Join(names(t, s, "openwebui"), ",")
	for _, tool := range restricted {
		if strings.Contains(users, tool) {
			t.Errorf("openwebui (users) sees %s", tool)
		}
	}
	if n := len(names(t, s, "openwebui")); n != 11 {
		t.Errorf("openwebui sees %d tools, want 11", n)
	}
	c := s.g.ClientAt("openwebui", "", "/mcp/tuliprox")
	for _, tool := range restricted {
		if ok, res := refused(t, c, tool); !ok || strings.Contains(res, "anna") {
			t.Fatalf("users called %s: %s", tool, res)
		}
	}
	boss := s.g.ClientAt("boss", "", "/mcp/tuliprox")
	res, isErr := gatewaytest.Call(t, boss, tools.ToolStreams, map[string]any{})
	if b, _ := json.Marshal(res); isErr || !strings.Contains(string(b), "anna") {
		t.Fatalf("admins: %s", b)
	}
	if strings.Contains(s.g.Audit.String(), "192.168.1.23") {
		t.Error("the audit holds a client IP")
	}
}

// Both Go MCP clients read through a real gateway; no credential (the
// password, the planted secrets of the configuration, the provider URLs'
// path credentials) shows up in a result, log, audit line or on the wire.
func TestNoCredentialLeavesThroughTheGatewayWithBothClients(t *testing.T) {
	s := startStack(t, faketuliprox.Options{Hostile: true}, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword, true)
	sdkWire := &capture.Buffer{}
	sess := s.g.SDKClientAt("boss", "/mcp/tuliprox", sdkWire)
	mc := s.g.ClientAt("boss", "", "/mcp/tuliprox")
	calls := []struct {
		tool string
		args map[string]any
		has  string
	}{
		{tools.ToolConfig, nil, `[URL withheld]`},
		{tools.ToolStreams, nil, `"client_ip":"192.168.1.23"`},
		{tools.ToolHistory, map[string]any{"page_size": 200}, `"total":60`},
		{tools.ToolItems, map[string]any{"target": "main", "cluster": "video", "fields": []any{"name", "additional_properties"}}, `"plot"`},
		{tools.ToolStatus, nil, `"version":"seed"`},
		{tools.ToolUpdatePlaylist, map[string]any{}, `confirmation_required`},
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
		if !strings.Contains(string(a), c.has) || !strings.Contains(string(b), c.has) {
			t.Errorf("%s lacks %s:\nmcp-go %.400s\ngo-sdk %.400s", c.tool, c.has, a, b)
		}
	}
	if !strings.Contains(s.g.Wire.String(), "provider-a") || !strings.Contains(sdkWire.String(), "provider-a") {
		t.Fatal("the wire recorders saw nothing; the leak check would prove nothing")
	}
	s.g.NoLeaks(t, secrets, map[string]string{"go-sdk wire": sdkWire.String()})
	for _, w := range []string{"line.provider-a.example", "/live/" + faketuliprox.SecretProviderUser} {
		for name, text := range map[string]string{"mcp-go wire": s.g.Wire.String(), "go-sdk wire": sdkWire.String(), "logs": s.g.Logs.String()} {
			if strings.Contains(text, w) {
				t.Errorf("%s holds %s", name, w)
			}
		}
	}
}

// /mcp/tuliprox with all 16 tools (writes on, an admin client) stays
// within the 12 KB tools/list budget.
func TestCatalogFitsTheBudget(t *testing.T) {
	s := startStack(t, faketuliprox.Options{}, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword, true)
	size, names := s.g.ToolsListSize("boss", "/mcp/tuliprox")
	if len(names) != 16 {
		t.Fatalf("tools/list: %v", names)
	}
	t.Logf("/mcp/tuliprox: 16 tools, %d bytes", size)
	if size > catalogBudget {
		t.Fatalf("tools/list is %d bytes, over the %d-byte budget", size, catalogBudget)
	}
}
