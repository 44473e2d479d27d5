package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/catalog"
)

func listNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

var demoToolsets = func(c *app.Config) {
	c.Toolsets = []catalog.Toolset{
		{Name: "counter", Service: "demo", Tools: []string{"demo_counter_*"}},
		{Name: "reads", Service: "demo", Tools: []string{"demo_echo", "demo_config"}},
	}
}

// TestToolsetsOfferOnlyTheirTools: /mcp/<toolset> lists and calls only
// its part of a service, on both ways a call can take, and the OpenAPI
// front has the same endpoint.
func TestToolsetsOfferOnlyTheirTools(t *testing.T) {
	h := newHarness(t, demoToolsets)
	if got := listNames(t, h.client("openwebui", "", "/mcp/counter")); !slices.Equal(got, []string{"demo_counter_add", "demo_counter_reset"}) {
		t.Fatalf("/mcp/counter lists %v", got)
	}
	if got := listNames(t, h.client("openwebui", "", "/mcp/reads")); !slices.Equal(got, []string{"demo_config", "demo_echo"}) {
		t.Fatalf("/mcp/reads lists %v", got)
	}
	// A read-only client sees no writes in it.
	if got := listNames(t, h.client("kiosk", "", "/mcp/counter")); len(got) != 0 {
		t.Fatalf("kiosk sees %v", got)
	}
	s := h.rawSession("openwebui", "/mcp/reads")
	for _, viaMCPGo := range []bool{false, true} {
		if got := s.call("demo_echo", map[string]any{"text": "x"}, viaMCPGo); got["result"] == nil {
			t.Fatalf("own tool (mcp-go %v): %v", viaMCPGo, got)
		}
		got := s.call("demo_counter_add", map[string]any{"amount": 1}, viaMCPGo)
		if e, _ := got["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "not found") {
			t.Fatalf("another toolset's tool (mcp-go %v): %v", viaMCPGo, got)
		}
	}
	if got := h.gw.Router.Endpoints(); !slices.Equal(got, []string{"counter", "demo", "reads"}) {
		t.Fatalf("endpoints %v", got)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, h.URL+"/openapi/counter/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+h.tokens["openwebui"])
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(body), "demo_counter_add") || strings.Contains(string(body), "demo_echo") {
		t.Fatalf("/openapi/counter: %d %.300s", res.StatusCode, body)
	}
}

func TestToolsetsAreChecked(t *testing.T) {
	services := []string{"demo", "arr", "ersatztv", "homeassistant"}
	cases := []struct {
		name string
		sets []catalog.Toolset
	}{
		{"a service's name", []catalog.Toolset{{Name: "arr", Service: "demo", Tools: []string{"demo_*"}}}},
		{"the discovery endpoint's name", []catalog.Toolset{{Name: "discover", Service: "demo", Tools: []string{"demo_*"}}}},
		{"twice", []catalog.Toolset{{Name: "a", Service: "demo", Tools: []string{"demo_x"}}, {Name: "a", Service: "demo", Tools: []string{"demo_y"}}}},
		{"unknown service", []catalog.Toolset{{Name: "a", Service: "web", Tools: []string{"web_*"}}}},
		{"no tools", []catalog.Toolset{{Name: "a", Service: "demo"}}},
		{"odd pattern", []catalog.Toolset{{Name: "a", Service: "demo", Tools: []string{"demo_[x]"}}}},
		{"odd name", []catalog.Toolset{{Name: "A b", Service: "demo", Tools: []string{"demo_x"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := catalog.CheckToolsets(tc.sets, services); err == nil {
				t.Fatal("accepted")
			}
		})
	}
	if err := catalog.CheckToolsets(app.DefaultToolsets, services); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
}

// TestDiscoveryShowsOnlyWhatTheCallerMayUse: a client can neither find,
// describe nor call a tool its groups hide, and an unknown tool answers
// the same.
func TestDiscoveryShowsOnlyWhatTheCallerMayUse(t *testing.T) {
	h := newHarness(t)
	found := func(c *client.Client, args map[string]any) []string {
		got, isErr := call(t, c, "toolgate_find_tools", args)
		if isErr {
			t.Fatalf("find: %v", got)
		}
		var names []string
		for _, f := range got["tools"].([]any) {
			names = append(names, f.(map[string]any)["name"].(string))
		}
		return names
	}
	user, kiosk, stranger := h.client("openwebui", "", "/mcp/discover"), h.client("kiosk", "", "/mcp/discover"), h.client("stranger", "", "/mcp/discover")
	if got := listNames(t, user); !slices.Equal(got, []string{"toolgate_call_tool", "toolgate_describe_tool", "toolgate_find_tools"}) {
		t.Fatalf("discovery lists %v", got)
	}
	if got := found(user, map[string]any{"words": "counter add"}); len(got) == 0 || got[0] != "demo_counter_add" {
		t.Fatalf("user finds %v for 'counter add'", got)
	}
	if got := found(user, map[string]any{"service": "demo"}); len(got) < 5 {
		t.Fatalf("user finds %v in demo", got)
	}
	if got := found(user, map[string]any{"service": "web"}); len(got) != 0 {
		t.Fatalf("another service's tools: %v", got)
	}
	kioskFinds := found(kiosk, map[string]any{"service": "demo"})
	if slices.Contains(kioskFinds, "demo_counter_add") || !slices.Contains(kioskFinds, "demo_echo") {
		t.Fatalf("a read-only client finds %v", kioskFinds)
	}
	if got := found(stranger, map[string]any{}); len(got) != 0 {
		t.Fatalf("a client without rights finds %v", got)
	}
	hidden := []struct {
		c    *client.Client
		tool string
	}{{kiosk, "demo_counter_add"}, {stranger, "demo_echo"}, {user, "demo_nosuch"}}
	var messages []string
	for _, x := range hidden {
		for _, meta := range []string{"toolgate_describe_tool", "toolgate_call_tool"} {
			args := map[string]any{"name": x.tool}
			if meta == "toolgate_call_tool" {
				args["arguments"] = map[string]any{"amount": 1, "text": "x"}
			}
			got, isErr := call(t, x.c, meta, args)
			if !isErr || errCode(got) != toolerr.NotFound {
				t.Fatalf("%s %s: %v", meta, x.tool, got)
			}
			messages = append(messages, strings.ReplaceAll(errMessage(got), x.tool, "TOOL"))
		}
	}
	for _, m := range messages {
		if m != messages[0] {
			t.Fatalf("hidden and unknown tools answer differently: %q", messages)
		}
	}
	if h.demo.counter.Load() != 0 {
		t.Fatal("a hidden write ran")
	}
	// A 2025 session (the gateway's direct tools/call path) reaches the
	// discovery tools too.
	legacy := h.rawSession("openwebui", "/mcp/discover")
	if got := legacy.call("toolgate_find_tools", map[string]any{"words": "echo"}, false); got["result"] == nil || !strings.Contains(mustJSON(t, got), "demo_echo") {
		t.Fatalf("find on a 2025 session: %v", got)
	}
	got, isErr := call(t, user, "toolgate_describe_tool", map[string]any{"name": "demo_counter_add"})
	if isErr || got["write"] != true || !strings.Contains(mustJSON(t, got["inputSchema"]), `"ticket"`) {
		t.Fatalf("describe: %v", got)
	}
}

// TestDiscoveryToolsRefuseUnknownArguments: the gateway's own tools check
// their arguments against their schemas as every service's tools do; a
// misspelt argument ({"query": …} where the tool takes "words") is an
// invalid_argument naming it, never "every tool".
func TestDiscoveryToolsRefuseUnknownArguments(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "", "/mcp/discover")
	cases := []struct {
		tool  string
		args  map[string]any
		where string
	}{
		{"toolgate_find_tools", map[string]any{"query": "counter"}, "query"},
		{"toolgate_find_tools", map[string]any{"words": 5}, "/words"},
		{"toolgate_find_tools", map[string]any{"limit": 500}, "/limit"},
		{"toolgate_describe_tool", map[string]any{}, "name"},
		{"toolgate_describe_tool", map[string]any{"name": "demo_echo", "verbose": true}, "verbose"},
		{"toolgate_call_tool", map[string]any{"name": "demo_echo", "args": map[string]any{"text": "x"}}, "args"},
		{"toolgate_call_tool", map[string]any{"name": "demo_echo", "arguments": "text=x"}, "/arguments"},
	}
	for _, tc := range cases {
		t.Run(tc.tool+" "+mustJSON(t, tc.args), func(t *testing.T) {
			got, isErr := call(t, c, tc.tool, tc.args)
			if !isErr || errCode(got) != toolerr.InvalidArgument || !strings.Contains(errMessage(got), tc.where) {
				t.Fatalf("want invalid_argument naming %s, got %v", tc.where, got)
			}
		})
	}
	if got, isErr := call(t, c, "toolgate_find_tools", map[string]any{"words": "counter"}); isErr || len(got["tools"].([]any)) == 0 {
		t.Fatalf("a correct find: %v", got)
	}
}

// TestWriteThroughDiscovery: preview → ticket → confirm through
// toolgate_call_tool, bound like any call, with the same audit lines as a
// call on /mcp.
func TestWriteThroughDiscovery(t *testing.T) {
	h := newHarness(t)
	d := h.client("openwebui", "", "/mcp/discover")
	via := func(args map[string]any) (map[string]any, bool) {
		return call(t, d, "toolgate_call_tool", map[string]any{"name": "demo_counter_add", "arguments": args})
	}
	prev, isErr := via(map[string]any{"amount": 2})
	ticket, _ := prev["ticket"].(string)
	if isErr || prev["status"] != "confirmation_required" || ticket == "" {
		t.Fatalf("preview: %v", prev)
	}
	if next, _ := prev["next"].(string); !strings.Contains(next, `call toolgate_call_tool again with name "demo_counter_add"`) {
		t.Errorf("next step: %q", next)
	}
	if got, _ := via(map[string]any{"amount": 3, "confirm": true, "ticket": ticket}); got["error"] == nil {
		t.Fatalf("the ticket confirmed other arguments: %v", got)
	}
	if got, _ := via(map[string]any{"amount": 2, "confirm": true, "ticket": ticket}); got["status"] != "applied" {
		t.Fatalf("confirm: %v", got)
	}
	if got, _ := via(map[string]any{"amount": 2, "confirm": true, "ticket": ticket}); got["error"] == nil {
		t.Fatalf("replay: %v", got)
	}
	if h.demo.counter.Load() != 2 || h.demo.applied.Load() != 1 {
		t.Fatalf("counter %d after %d applies", h.demo.counter.Load(), h.demo.applied.Load())
	}
	// The audit names the real tool, as for a call on /mcp.
	audit := h.audit.String()
	for _, want := range []string{`"event":"decision","client":"openwebui","service":"demo","tool":"demo_counter_add"`, `"outcome":"issued"`, `"outcome":"ticket_rejected"`} {
		if !strings.Contains(audit, want) {
			t.Errorf("audit lacks %s", want)
		}
	}
	if strings.Contains(audit, "toolgate_call_tool") {
		t.Error("the audit names the meta-tool instead of the tool")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitFor polls cond; the deadline only guards against a hang (the
// refresh it waits for is asked for at once).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s", what)
		}
	}
}

// runRouter starts the router's refresh loop (Run) and returns once its
// first refresh has read the service's tools, so what the test changes
// next is noticed by a failed call, not by that refresh.
func runRouter(t *testing.T, h *harness) {
	t.Helper()
	served := make(chan struct{}, 1)
	svc := h.Service()
	h.SetService(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		svc.ServeHTTP(w, r)
		if strings.Contains(string(body), `"tools/list"`) {
			select {
			case served <- struct{}{}:
			default:
			}
		}
	}))
	go h.gw.Router.Run(t.Context(), time.Hour)
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not refresh")
	}
	h.SetService(svc)
}

// TestAServiceThatStopsLeavesTheCatalog: the first call that finds a
// service not running says so, and its tools leave every list at once
// (not at the next refresh a minute later); a call after that is a call
// of a tool that is not there.
func TestAServiceThatStopsLeavesTheCatalog(t *testing.T) {
	h := newHarness(t)
	runRouter(t, h)
	c := h.client("openwebui", "", "/mcp/demo")
	if got := listNames(t, c); !slices.Contains(got, "demo_echo") {
		t.Fatalf("before: %v", got)
	}
	h.StopService()
	got, isErr := call(t, c, "demo_echo", map[string]any{"text": "x"})
	if !isErr || errCode(got) != toolerr.UpstreamUnavailable || !strings.Contains(errMessage(got), "service demo is not running") {
		t.Fatalf("a call to a stopped service: %v", got)
	}
	waitFor(t, "withdrawn", func() bool { return len(listNames(t, c)) == 0 })
	s := h.rawSession("openwebui", "/mcp")
	if got := s.call("demo_echo", map[string]any{"text": "x"}, false); !strings.Contains(mustJSON(t, got), "not found") {
		t.Fatalf("a call after the withdrawal: %v", got)
	}
}

// TestAToolTheServiceDroppedLeavesTheCatalog: a service that runs again
// with other settings (a switch of its profile or keys) no longer has a
// tool; a call of it says so — not "refused the request" — and the tool
// leaves the lists at once, the service's other tools stay.
func TestAToolTheServiceDroppedLeavesTheCatalog(t *testing.T) {
	h := newHarness(t)
	runRouter(t, h)
	c := h.client("openwebui", "", "/mcp/demo")
	var fewer []toolkit.Tool
	for _, tl := range h.demo.tools() {
		if tl.Name != "demo_echo" {
			fewer = append(fewer, tl)
		}
	}
	h.SetService(h.NewService(fewer).Handler())
	got, isErr := call(t, c, "demo_echo", map[string]any{"text": "x"})
	if !isErr || errCode(got) != toolerr.NotFound || !strings.Contains(errMessage(got), "no longer offers") {
		t.Fatalf("a call of a dropped tool: %v", got)
	}
	waitFor(t, "withdrawn", func() bool { return !slices.Contains(listNames(t, c), "demo_echo") })
	if got := listNames(t, c); !slices.Contains(got, "demo_counter_add") {
		t.Fatalf("the service's other tools went too: %v", got)
	}
}

// TestTheAdminAPIRefreshesTheCatalogAtOnce: after a switch install.sh asks
// the gateway (POST /admin/refresh) instead of waiting for the periodic
// refresh; GET /admin/endpoints then counts, per client, the tools its own
// tools/list shows.
func TestTheAdminAPIRefreshesTheCatalogAtOnce(t *testing.T) {
	h := newHarness(t)
	counts := func() map[string]int {
		t.Helper()
		code, body := h.Admin(http.MethodGet, "/admin/endpoints", "")
		var list admin.EndpointList
		if err := json.Unmarshal(body, &list); code != http.StatusOK || err != nil {
			t.Fatalf("GET /admin/endpoints: HTTP %d %s", code, body)
		}
		out := map[string]int{}
		for _, c := range list.Clients {
			for _, e := range c.Endpoints {
				out[c.Client+" "+e.Endpoint] = e.Tools
			}
		}
		return out
	}
	before := counts()
	if before["openwebui demo"] == 0 || before["stranger demo"] != 0 {
		t.Fatalf("endpoints before: %v", before)
	}
	listed, err := h.client("openwebui", "", "/mcp/demo").ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(listed.Tools) != before["openwebui demo"] {
		t.Fatalf("openwebui's tools/list has %d tools, the listing says %d (%v)", len(listed.Tools), before["openwebui demo"], err)
	}
	var one []toolkit.Tool
	for _, tl := range h.demo.tools() {
		if tl.Name == "demo_echo" {
			one = append(one, tl)
		}
	}
	h.SetService(h.NewService(one).Handler())
	if code, body := h.Admin(http.MethodPost, "/admin/refresh", ""); code != http.StatusOK {
		t.Fatalf("POST /admin/refresh: HTTP %d %s", code, body)
	}
	if after := counts(); after["openwebui demo"] != 1 {
		t.Fatalf("after the refresh openwebui sees %d tools on /mcp/demo, want 1", after["openwebui demo"])
	}
}
