package relay

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const haToken = "relay-test-ha-token-PLANTED-0123456789"

// home is a fake HA behind a switchable handler (so a test can take it
// away, as a restart does) and the client that reaches it.
type home struct {
	dir     string
	fake    *fakehass.Fake
	ha      *hass.Client
	handler atomic.Pointer[http.Handler]
	srv     *httptest.Server
}

func newHome(t *testing.T, names fakehass.ToolNames, edit func(*fakehass.Options)) *home {
	t.Helper()
	dir := t.TempDir()
	if err := fakehass.SeedConfig(dir); err != nil {
		t.Fatal(err)
	}
	o := fakehass.DemoHome(fakehass.Options{Token: haToken, ConfigDir: dir, ToolNames: names,
		Now: func() time.Time { return time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC) }})
	if edit != nil {
		edit(&o)
	}
	h := &home{fake: fakehass.New(o), dir: dir}
	h.set(h.fake.Handler())
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.handler.Load()).ServeHTTP(w, r) }))
	t.Cleanup(h.srv.Close)
	up, err := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: h.srv.URL, AllowHTTP: true,
		Header: http.Header{"Authorization": {"Bearer " + haToken}}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	h.ha = hass.New(up)
	return h
}

func (h *home) set(handler http.Handler) { h.handler.Store(&handler) }

// eachNaming runs a test against a fake HA with each tool naming scheme:
// bare names (up to 2026.8) and <integration>__<tool> (2026.9 on).
func eachNaming(t *testing.T, test func(t *testing.T, names fakehass.ToolNames)) {
	for _, names := range fakehass.Schemes {
		t.Run(names.String(), func(t *testing.T) { test(t, names) })
	}
}

// previewFacts previews a relayed write and returns its facts.
func previewFacts(t *testing.T, s *toolkittest.Service, tool string, args map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := s.Client.CallTool(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("%s %v: %v %+v", tool, args, err, res)
	}
	facts, _ := res.Meta.AdditionalFields[approval.MetaPreviewFacts].(map[string]any)
	var body map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(raw, &body)
	preview, _ := body["preview"].(map[string]any)
	return facts, preview
}

// serve runs a toolkit service with the relay's tools, writes allowed.
func serve(t *testing.T, h *home, set Settings) (*Relay, *toolkittest.Service, *toolkit.Service) {
	t.Helper()
	return serveWrites(t, h, set, true)
}

func serveWrites(t *testing.T, h *home, set Settings, writes bool) (*Relay, *toolkittest.Service, *toolkit.Service) {
	t.Helper()
	if set.Path == "" {
		set.Path = DefaultPath
	}
	r := New(set, h.ha, nil)
	svc, err := toolkit.New(toolkit.Options{
		Name: "homeassistant", ServiceToken: []byte(toolkittest.ServiceToken), ApprovalKey: []byte(toolkittest.ApprovalKey),
		AllowWrites: writes, Redactor: redact.New([]byte(toolkittest.ServiceToken), []byte(toolkittest.ApprovalKey), []byte(haToken)),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Attach(svc)
	if err := r.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	return r, toolkittest.Serve(t, svc), svc
}

func listed(t *testing.T, s *toolkittest.Service) map[string]mcp.Tool {
	t.Helper()
	res, err := s.Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]mcp.Tool{}
	for _, tl := range res.Tools {
		out[tl.Name] = tl
	}
	return out
}

// The lock rule first: however Home Assistant names its tools (bare up to
// 2026.8, <integration>__<intent> from 2026.9) and whichever intent
// reaches the front door — HassTurnOff by name or alias, HassTurnOn with
// domain lock, a script, and from 2026.9 HassUnlock and HassLock, with or
// without slots — the preview reports the lock, which the policy gives to
// a person. (HassOpen acts on covers and valves only.)
// (Before, intent__HassUnlock was an unknown tool whose preview resolved
// no lock.)
func TestEveryIntentThatReachesALockReportsItWhateverTheNaming(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serve(t, h, Settings{})
		cases := []struct {
			tool string
			args map[string]any
		}{
			{"ha_HassTurnOff", map[string]any{"name": "Front Door"}},
			{"ha_HassTurnOff", map[string]any{"name": "main door"}},
			{"ha_HassTurnOff", map[string]any{"area": "Hallway"}},
			{"ha_HassTurnOn", map[string]any{"domain": []any{"lock"}}},
			{"ha_good_night", map[string]any{}},
			{"ha_HassTurnOn", map[string]any{"name": "Good night"}},
		}
		if names == fakehass.PrefixedNames {
			cases = append(cases,
				struct {
					tool string
					args map[string]any
				}{"ha_HassUnlock", map[string]any{"name": "Front door"}},
				struct {
					tool string
					args map[string]any
				}{"ha_HassLock", map[string]any{"area": "hallway"}},
				struct {
					tool string
					args map[string]any
				}{"ha_HassUnlock", map[string]any{}})
		}
		for _, c := range cases {
			facts, preview := previewFacts(t, s, c.tool, c.args)
			if !slices.Contains(asList(facts["domains"]), any("lock")) {
				t.Errorf("%s %v: facts %v (preview %v)", c.tool, c.args, facts, preview)
			}
		}
		if h.fake.StateOf("lock.front_door") != "locked" || len(h.fake.Calls()) != 0 {
			t.Fatal("a preview changed something")
		}
	})
}

// Reads are known by their base name: with writes off, the relay still
// offers GetLiveContext, GetDateTime and the to-do read of a 2026.9 Home
// Assistant (homeassistant__GetLiveContext, llm__GetDateTime,
// todo__get_items), and they answer. (Before, every prefixed tool counted
// as a write and, with writes off, the relay offered nothing.)
func TestReadsAreKnownByTheirBaseName(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serveWrites(t, h, Settings{}, false)
		var got []string
		for n := range listed(t, s) {
			got = append(got, n)
		}
		slices.Sort(got)
		if want := []string{"ha_GetDateTime", "ha_GetLiveContext", "ha_todo_get_items"}; !slices.Equal(got, want) {
			t.Fatalf("read-only relay offers %v, want %v", got, want)
		}
		s.RunReads(t, []toolkittest.ReadCase{
			{Tool: "ha_GetLiveContext", Args: map[string]any{"domain": "lock"}, Has: []string{"Front Door, Main Door"}},
			{Tool: "ha_GetDateTime", Has: []string{`"date":"2026-12-02"`}},
			{Tool: "ha_todo_get_items", Args: map[string]any{"todo_list": "Shopping List"}, Has: []string{"Milk"}},
		}, haToken)
	})
}

// A tool the relay does not know is a write whose preview says so (kind
// "unknown", which the shipped policy gives to a person): an intent base
// name behind a namespace that is not the core integration offering it (a
// custom integration's evil__HassTurnOn is not HA's HassTurnOn), a new
// intent, a custom integration's tool. Known tools keep their legacy name
// behind a merged API's assist__ namespace, and HA_MCP_TOOLS takes base
// names.
func TestAnUnknownToolIsAWriteWithAnUnknownKind(t *testing.T) {
	h := newHome(t, fakehass.PrefixedNames, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	h.fake.EditTools(func(list []map[string]any) []map[string]any {
		for _, n := range []string{"evil__HassTurnOn", "HassFutureIntent", "fancy__do_thing", "assist__intent__HassTurnOff", "intent_script__HassTurnOn"} {
			list = append(list, map[string]any{"name": n, "description": n, "inputSchema": schema})
		}
		return list
	})
	_, s, _ := serve(t, h, Settings{})
	tools := listed(t, s)
	for _, name := range []string{"ha_evil__HassTurnOn", "ha_HassFutureIntent", "ha_fancy__do_thing", "ha_intent_script__HassTurnOn"} {
		tl, ok := tools[name]
		if !ok {
			t.Fatalf("%s is not relayed: %v", name, slices.Collect(maps.Keys(tools)))
		}
		if write, _ := tl.Meta.AdditionalFields[approval.MetaWrite].(bool); !write {
			t.Errorf("%s is not a write", name)
		}
		facts, _ := previewFacts(t, s, name, map[string]any{"name": "Front Door"})
		if facts["kind"] != "unknown" || facts["opaque"] != true {
			t.Errorf("%s: facts %v", name, facts)
		}
	}
	// The merged API's HassTurnOff is HA's; both HassTurnOff tools keep
	// their full names, and both resolve as the intent.
	for _, name := range []string{"ha_intent__HassTurnOff", "ha_assist__intent__HassTurnOff"} {
		facts, _ := previewFacts(t, s, name, map[string]any{"name": "Front Door"})
		if facts["kind"] != "intent" || !slices.Contains(asList(facts["domains"]), any("lock")) {
			t.Errorf("%s: facts %v", name, facts)
		}
	}

	r := New(Settings{Path: DefaultPath, Only: map[string]bool{"HassTurnOn": true, "GetLiveContext": true}}, h.ha, nil)
	list := []UpstreamTool{{Name: "intent__HassTurnOn"}, {Name: "homeassistant__GetLiveContext"}, {Name: "intent__HassTurnOff"}}
	offered, _ := r.Tools(list)
	if len(offered) != 2 || offered[0].Name != "ha_GetLiveContext" || offered[1].Name != "ha_HassTurnOn" {
		t.Errorf("HA_MCP_TOOLS by base name: %v", offered)
	}
}

// A to-do read whose bare name a script carries too (a script with the
// object id todo_get_items, listed under that name before 2026.9) is not
// run as a read.
func TestAReadAScriptMayShadowIsRefused(t *testing.T) {
	h := newHome(t, fakehass.BareNames, func(o *fakehass.Options) {
		for i := range o.Entities {
			if o.Entities[i].ID == "todo.shopping_list" {
				o.Entities[i].Exposed = false
			}
		}
		o.Entities = append(o.Entities, fakehass.Entity{ID: "script.todo_get_items", Name: "Unlock for the courier", State: "off", Exposed: true})
	})
	_, s, _ := serve(t, h, Settings{})
	s.RunReads(t, []toolkittest.ReadCase{{Tool: "ha_todo_get_items", Code: "forbidden"}})
	if len(h.fake.Calls()) != 0 {
		t.Fatal("the script ran")
	}
}

// Home Assistant's MCP server option "Require an administrator account"
// (require_admin, HA 2026.10+) answers 401 to a non-administrator's token
// that the REST API accepts: the error names the option. A token HA
// refuses everywhere stays a plain auth failure.
func TestRequireAdminIsNamedWhenTheMCPServerRefusesAValidToken(t *testing.T) {
	h := newHome(t, fakehass.PrefixedNames, func(o *fakehass.Options) { o.NotAdmin, o.MCPRequireAdmin = true, true })
	r := New(Settings{Path: DefaultPath, Refresh: time.Minute}, h.ha, nil)
	_, err := r.mcp.Initialize(t.Context())
	if toolerr.CodeOf(err) != toolerr.AuthFailed || !strings.Contains(toolerr.MessageOf(err), "require_admin") ||
		!strings.Contains(toolerr.MessageOf(err), "administrator") {
		t.Fatalf("err = %v", err)
	}
	up, _ := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: h.srv.URL, AllowHTTP: true,
		Header: http.Header{"Authorization": {"Bearer wrong-token-0123456789"}}, Retries: -1})
	_, err = NewMCP(up, DefaultPath).Initialize(t.Context())
	if toolerr.CodeOf(err) != toolerr.AuthFailed || strings.Contains(toolerr.MessageOf(err), "require_admin") {
		t.Fatalf("a wrong token: %v", err)
	}
}

// Every tool of HA's MCP server appears under an ha_ name with its schema
// made strict, by its legacy name whatever HA calls it (intent__HassTurnOn
// is ha_HassTurnOn; a preview names HA's own tool); known reads are reads,
// everything else a write.
func TestRelayedToolList(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serve(t, h, Settings{})
		tools := listed(t, s)
		want := []string{"ha_GetDateTime", "ha_GetLiveContext", "ha_HassClimateSetTemperature", "ha_HassLightSet", "ha_HassMediaPause",
			"ha_HassMediaUnpause", "ha_HassSetPosition", "ha_HassTurnOff", "ha_HassTurnOn", "ha_good_night", "ha_todo_get_items"}
		upstreamOf := map[string]string{"ha_HassTurnOn": "HassTurnOn", "ha_GetLiveContext": "GetLiveContext", "ha_todo_get_items": "todo_get_items", "ha_good_night": "good_night"}
		if names == fakehass.PrefixedNames {
			// 2026.9 added intents; the demo exposes locks and covers.
			want = append(want, "ha_HassClose", "ha_HassLock", "ha_HassOpen", "ha_HassUnlock")
			upstreamOf = map[string]string{"ha_HassTurnOn": "intent__HassTurnOn", "ha_GetLiveContext": "homeassistant__GetLiveContext",
				"ha_todo_get_items": "todo__get_items", "ha_good_night": "script__good_night", "ha_HassUnlock": "intent__HassUnlock"}
		}
		slices.Sort(want)
		for name, upstream := range upstreamOf {
			if _, ok := tools[name]; !ok {
				t.Errorf("%s (%s) is not relayed", name, upstream)
				continue
			}
			if read := name == "ha_GetLiveContext" || name == "ha_todo_get_items"; read {
				continue
			}
			if _, preview := previewFacts(t, s, name, map[string]any{}); preview["tool"] != upstream {
				t.Errorf("%s: preview names %v, want %q", name, preview["tool"], upstream)
			}
		}
		var got []string
		for n := range tools {
			got = append(got, n)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("relayed tools %v\nwant %v", got, want)
		}
		for name, tl := range tools {
			write, _ := tl.Meta.AdditionalFields[approval.MetaWrite].(bool)
			read := name == "ha_GetDateTime" || name == "ha_GetLiveContext" || name == "ha_todo_get_items"
			if write == read || *tl.Annotations.ReadOnlyHint != read {
				t.Errorf("%s: write=%v readOnly=%v", name, write, *tl.Annotations.ReadOnlyHint)
			}
		}
		var def struct {
			InputSchema map[string]any `json:"inputSchema"`
		}
		raw, _ := json.Marshal(tools["ha_HassTurnOn"])
		if err := json.Unmarshal(raw, &def); err != nil {
			t.Fatal(err)
		}
		schema := def.InputSchema
		props, _ := schema["properties"].(map[string]any)
		if schema["additionalProperties"] != false || props["device_class"] == nil || props["floor"] == nil {
			t.Errorf("HassTurnOn schema = %v", schema)
		}
	})
}

// A relayed read answers with HA's result decoded.
func TestRelayedRead(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serve(t, h, Settings{})
		s.RunReads(t, []toolkittest.ReadCase{
			{Tool: "ha_GetLiveContext", Args: map[string]any{"domain": "lock"}, Has: []string{`"success":true`, "Front Door, Main Door"}},
			{Tool: "ha_GetDateTime", Has: []string{`"date":"2026-12-02"`}},
			{Name: "unknown argument refused before HA", Tool: "ha_GetDateTime", Args: map[string]any{"x": 1}, Code: "invalid_argument"},
		}, haToken)
	})
}

// Planted webhook ids: an automation's (whoever knows it triggers the
// automation), the companion app's (it accepts the phone's data) and a
// Nabu Casa cloudhook's token.
const (
	plantedHookID   = "-Planted_webhook-id-9f3c1e"
	plantedMobileID = "3b6f0c2e9d8a71f45e2c0b9a8d7f6e5c4b3a2918e7d6c5b4a3928170f6e5d4c3"
	plantedCloud    = "gAAAAABplanted-cloudhook-token-42"
)

// hacsWebhookTools makes the fake HA offer three tools of the HACS server
// whose answers carry webhook ids: ha_webhook (the list of registered
// webhooks), ha_trace (an automation triggered by a webhook) and
// ha_describe_entity (a companion app's device and its config entry).
func hacsWebhookTools(f *fakehass.Fake) {
	f.EditTools(func(list []map[string]any) []map[string]any {
		for _, n := range []string{"ha_webhook", "ha_trace", "ha_describe_entity"} {
			list = append(list, map[string]any{"name": n, "description": "HACS " + n, "inputSchema": json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)})
		}
		return list
	})
	f.AnswerTool("ha_webhook", toJSON(map[string]any{"items": []any{
		map[string]any{"webhook_id": plantedHookID, "domain": "automation", "name": "Garage open", "local_only": true, "url": "/api/webhook/" + plantedHookID},
	}, "total": 1}))
	f.AnswerTool("ha_trace", toJSON(map[string]any{"success": true, "result": map[string]any{
		"trigger": map[string]any{"platform": "webhook", "webhookId": plantedHookID, "description": "webhook"},
		"config":  map[string]any{"triggers": []any{map[string]any{"trigger": "webhook", "webhook_id": plantedHookID, "allowed_methods": []any{"POST"}}}},
		"log":     "POST https://ha.lan:8123/api/webhook/" + plantedHookID + " from 192.168.1.20",
	}}))
	f.AnswerTool("ha_describe_entity", toJSON(map[string]any{
		"entity_id": "device_tracker.pixel_8", "platform": "mobile_app",
		"config_entry": map[string]any{"webhook_id": plantedMobileID, "cloudhook_url": "https://hooks.nabu.casa/" + plantedCloud},
		"note":         "the app posts to /api/webhook/" + plantedMobileID + " or https://hooks.nabu.casa/" + plantedCloud,
	}))
}

// No webhook id leaves in a relayed result: ha_webhook, which exists to
// hand webhook URLs out, is not relayed at all, and the ids other tools
// show (under webhook_id-like keys, in webhook and cloudhook URLs) are
// redacted.
func TestWebhookIDsNeverLeaveARelayedResult(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		hacsWebhookTools(h.fake)
		_, s, _ := serve(t, h, Settings{})
		tools := listed(t, s)
		if _, ok := tools["ha_webhook"]; ok {
			t.Error("ha_webhook is relayed")
		}
		if _, ok := tools["ha_trace"]; !ok {
			t.Fatal("ha_trace is not relayed; the test would prove nothing")
		}
		s.RunReads(t, []toolkittest.ReadCase{
			{Name: "a trace of a webhook trigger", Tool: "ha_trace", Args: map[string]any{"id": "garage"},
				Has: []string{`"webhook_id":"[REDACTED]"`, `"webhookId":"[REDACTED]"`, "/api/webhook/[REDACTED] from 192.168.1.20", `"platform":"webhook"`}},
			{Name: "a companion app's config entry", Tool: "ha_describe_entity", Args: map[string]any{"id": "device_tracker.pixel_8"},
				Has: []string{`"webhook_id":"[REDACTED]"`, `"cloudhook_url":"[REDACTED]"`, "/api/webhook/[REDACTED] or https://hooks.nabu.casa/[REDACTED]"}},
		}, haToken, plantedHookID, plantedMobileID, plantedCloud)
	})
}

// A relayed write previews what it would touch, with facts for the
// policy, changes nothing, and applies exactly once with an approval.
func TestRelayedWritePreviewAndApply(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serve(t, h, Settings{})
		args := map[string]any{"name": "Front Door"}
		prev, isErr := s.Call(t, "ha_HassTurnOff", args, "")
		if isErr {
			t.Fatalf("preview: %v", prev)
		}
		p := prev["preview"].(map[string]any)
		raw, _ := json.Marshal(p)
		if p["kind"] != "intent" || !strings.Contains(string(raw), `"entity_id":"lock.front_door"`) || !strings.Contains(string(raw), `"state":"locked"`) {
			t.Fatalf("preview = %s", raw)
		}
		if h.fake.StateOf("lock.front_door") != "locked" || len(h.fake.Calls()) != 0 {
			t.Fatal("the preview changed something")
		}
		tok := s.Approve(t, "homeassistant", "ha_HassTurnOff", args, "tkt-1")
		res, isErr := s.Call(t, "ha_HassTurnOff", args, tok)
		if isErr || res["status"] != "applied" || h.fake.StateOf("lock.front_door") != "unlocked" {
			t.Fatalf("apply: %v, state %s", res, h.fake.StateOf("lock.front_door"))
		}
		if res, isErr = s.Call(t, "ha_HassTurnOff", args, tok); !isErr || !strings.Contains(toJSON(res), "already used") {
			t.Fatalf("replay: %v", res)
		}
	})
}

// The facts a preview reports ride in _meta, bound into its digest.
func TestRelayedPreviewFacts(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serve(t, h, Settings{})
		for _, c := range []struct {
			tool    string
			args    map[string]any
			domains []any
			classes []any
			flags   map[string]bool
		}{
			{"ha_HassTurnOn", map[string]any{"area": "Garage"}, []any{"cover", "light"}, []any{"cover.garage"}, map[string]bool{"unresolved": false, "opaque": false}},
			{"ha_HassTurnOn", map[string]any{"name": "Main Door"}, []any{"lock"}, []any{}, map[string]bool{"unresolved": false}},
			{"ha_HassTurnOn", map[string]any{"name": "Nobody Here"}, []any{}, []any{}, map[string]bool{"unresolved": true}},
			{"ha_HassLightSet", map[string]any{"area": "Kitchen", "brightness": 40}, []any{"light"}, []any{}, map[string]bool{"unresolved": false}},
			{"ha_good_night", map[string]any{}, []any{"light", "lock", "script"}, []any{}, map[string]bool{"opaque": true, "unresolved": false}},
		} {
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = c.tool, c.args
			res, err := s.Client.CallTool(t.Context(), req)
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %+v", c.tool, err, res)
			}
			facts, _ := res.Meta.AdditionalFields[approval.MetaPreviewFacts].(map[string]any)
			if !slices.Equal(asList(facts["domains"]), c.domains) || !slices.Equal(asList(facts["device_classes"]), c.classes) {
				t.Errorf("%s %v: facts %v", c.tool, c.args, facts)
			}
			for k, v := range c.flags {
				if facts[k] != v {
					t.Errorf("%s %v: %s = %v, want %v", c.tool, c.args, k, facts[k], v)
				}
			}
		}
	})
}

func asList(v any) []any {
	l, _ := v.([]any)
	if l == nil {
		return []any{}
	}
	return l
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// HA's error for a call is an isError result with a stable code; the
// token never appears.
func TestRelayedErrors(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		_, s, _ := serve(t, h, Settings{})
		args := map[string]any{"name": "Nothing Here"}
		tok := s.Approve(t, "homeassistant", "ha_HassTurnOn", args, "tkt-2")
		res, isErr := s.Call(t, "ha_HassTurnOn", args, tok)
		if !isErr || !strings.Contains(toJSON(res), "Home Assistant answered with an error") || strings.Contains(toJSON(res), haToken) {
			t.Fatalf("HA's error: %v", res)
		}
	})
}

// When HA restarts with other tools (a script exposed meanwhile) the next
// sync offers them; while it is away the last tools stay and calls fail
// with upstream_unavailable.
func TestRelayFollowsAHomeAssistantRestart(t *testing.T) {
	eachNaming(t, func(t *testing.T, names fakehass.ToolNames) {
		h := newHome(t, names, nil)
		r, s, _ := serve(t, h, Settings{})
		h.set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hj, ok := w.(http.Hijacker)
			if !ok {
				t.Error("no hijacker")
				return
			}
			c, _, _ := hj.Hijack()
			_ = c.Close()
		}))
		if err := r.Sync(t.Context()); toolerr.CodeOf(err) != toolerr.UpstreamUnavailable {
			t.Fatalf("sync while HA is down: %v", err)
		}
		if _, ok := listed(t, s)["ha_HassTurnOn"]; !ok {
			t.Fatal("tools vanished while HA was away")
		}
		s.RunReads(t, []toolkittest.ReadCase{{Name: "down", Tool: "ha_GetDateTime", Code: "upstream_unavailable"}})

		h.fake.Expose("script.movie_mode", true)
		h.set(h.fake.Handler())
		if err := r.Sync(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, ok := listed(t, s)["ha_movie_mode"]; !ok {
			t.Fatal("a script exposed while HA was away is not relayed")
		}
	})
}

// Withheld tools, the HA_MCP_TOOLS list, hostile names and schemas.
func TestToolsFromUpstream(t *testing.T) {
	r := New(Settings{Path: DefaultPath, Only: nil}, hass.New(nil), nil)
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)
	list := []UpstreamTool{
		{Name: "ha_get_state", InputSchema: schema},
		{Name: "ha_call_service", InputSchema: schema, Annotations: map[string]any{"readOnlyHint": true, "destructiveHint": true}},
		{Name: "ha_auth", InputSchema: schema},
		{Name: "ha_yaml_config", InputSchema: schema},
		{Name: "ha_webhook", InputSchema: schema},
		{Name: "HassTurnOn", InputSchema: schema},
		{Name: "bad name!", InputSchema: schema},
		{Name: "refs", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`)},
		{Name: "array", InputSchema: json.RawMessage(`{"type":"array"}`)},
		{Name: "deep", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, 20) + `{}` + strings.Repeat(`}`, 20) + `}}`)},
		{Name: "HassTurnOn", InputSchema: schema},
	}
	tools, skipped := r.Tools(list)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"ha_HassTurnOn", "ha_call_service", "ha_get_state"}) {
		t.Fatalf("tools %v (skipped %v)", names, skipped)
	}
	for _, n := range []string{"ha_auth", "ha_yaml_config", "ha_webhook", "refs", "array", "deep", "HassTurnOn"} {
		if skipped[n] == "" {
			t.Errorf("%s was not skipped: %v", n, skipped)
		}
	}
	for _, tl := range tools {
		switch tl.Name {
		case "ha_call_service":
			if tl.IsWrite() != true || !tl.Annotations.Destructive {
				t.Errorf("ha_call_service: write=%v destructive=%v (an upstream readOnly hint must not make a read)", tl.IsWrite(), tl.Annotations.Destructive)
			}
		case "ha_get_state":
			if tl.IsWrite() {
				t.Error("ha_get_state is a known read")
			}
		}
	}
	r.set.Only = map[string]bool{"HassTurnOn": true}
	if tools, _ := r.Tools(list); len(tools) != 1 || tools[0].Name != "ha_HassTurnOn" {
		t.Errorf("HA_MCP_TOOLS: %v", tools)
	}
}

func TestLoadSettings(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want Settings
		bad  string
	}{
		{env: nil, want: Settings{Path: DefaultPath, Refresh: time.Minute}},
		{env: map[string]string{EnvPath: "off"}, want: Settings{Refresh: time.Minute}},
		{env: map[string]string{EnvPath: "/api/hass_mcp", EnvRefresh: "30s"}, want: Settings{Path: "/api/hass_mcp", Refresh: 30 * time.Second}},
		{env: map[string]string{EnvPath: "/api/../config"}, bad: EnvPath},
		{env: map[string]string{EnvPath: "https://elsewhere/api/mcp"}, bad: EnvPath},
		{env: map[string]string{EnvRefresh: "1s"}, bad: EnvRefresh},
		{env: map[string]string{EnvTools: "HassTurnOn, bad name"}, bad: EnvTools},
	} {
		l := config.New(func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
		got := LoadSettings(l)
		err := l.Err()
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) {
				t.Errorf("%v: error %v, want one naming %s", c.env, err, c.bad)
			}
			continue
		}
		if err != nil || got.Path != c.want.Path || got.Refresh != c.want.Refresh {
			t.Errorf("%v: %+v %v", c.env, got, err)
		}
	}
}

// The MCP client speaks HA's transport: 202 for the notification, an SSE
// answer is read too, a foreign id or a JSON-RPC error is refused, and a
// missing server is named.
func TestMCPClientTransport(t *testing.T) {
	var answer atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "notifications/initialized") {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		a := answer.Load().(func(w http.ResponseWriter, id string))
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &msg)
		a(w, string(msg.ID))
	}))
	t.Cleanup(srv.Close)
	up, _ := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: srv.URL, AllowHTTP: true, Retries: -1,
		Header: http.Header{"Authorization": {"Bearer " + haToken}}})
	m := NewMCP(up, "/api/mcp")
	for _, c := range []struct {
		name   string
		answer func(w http.ResponseWriter, id string)
		code   toolerr.Code
	}{
		{"json", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"home-assistant"}}}`)
		}, ""},
		{"sse", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"serverInfo\":{\"name\":\"x\"}}}\n\n")
		}, ""},
		{"another id", func(w http.ResponseWriter, _ string) {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":999999,"result":{}}`)
		}, toolerr.UpstreamUnavailable},
		{"rpc error", func(w http.ResponseWriter, id string) {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":-32601,"message":"Method not found `+haToken+`"}}`)
		}, toolerr.UpstreamUnavailable},
		{"no server", func(w http.ResponseWriter, _ string) { http.Error(w, "404: Not Found", http.StatusNotFound) }, toolerr.UpstreamUnavailable},
		{"unauthorized", func(w http.ResponseWriter, _ string) { http.Error(w, "401: Unauthorized", http.StatusUnauthorized) }, toolerr.AuthFailed},
		{"not json", func(w http.ResponseWriter, _ string) { _, _ = io.WriteString(w, "<html>") }, toolerr.UpstreamUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer.Store(c.answer)
			_, err := m.Initialize(t.Context())
			if toolerr.CodeOf(err) != c.code && !(c.code == "" && err == nil) {
				t.Fatalf("err = %v, want %s", err, c.code)
			}
			if err != nil && strings.Contains(toolerr.MessageOf(err), haToken) {
				t.Error("the token reached the message")
			}
			// The server's own text arrives framed, so the model can act on it.
			if c.name == "rpc error" && !strings.HasSuffix(toolerr.MessageOf(err), `Home Assistant said: "Method not found [REDACTED]"`) {
				t.Errorf("message %q lacks the server's reason", toolerr.MessageOf(err))
			}
		})
	}
}

// Tool names are taken apart by their base name, and only the core
// integration that offers a base (or none, or a merged API's assist__
// slug) makes it that tool; script tools are named by object id or
// script__<object id>, and a name a script's object id could also be is
// tried both ways.
func TestParseName(t *testing.T) {
	for _, c := range []struct {
		upstream string
		kind     Kind
		base     string
		scripts  []string
		offered  string
	}{
		{"HassTurnOn", Intent, "HassTurnOn", nil, "ha_HassTurnOn"},
		{"intent__HassTurnOn", Intent, "HassTurnOn", nil, "ha_HassTurnOn"},
		{"assist__intent__HassTurnOn", Intent, "HassTurnOn", nil, "ha_HassTurnOn"},
		{"assist__HassTurnOn", Intent, "HassTurnOn", nil, "ha_HassTurnOn"},
		{"light__HassLightSet", Intent, "HassLightSet", nil, "ha_HassLightSet"},
		{"intent__HassLightSet", Unknown, "", nil, "ha_intent__HassLightSet"},
		{"evil__HassTurnOn", Unknown, "", nil, "ha_evil__HassTurnOn"},
		{"other__intent__HassTurnOn", Unknown, "", nil, "ha_other__intent__HassTurnOn"},
		{"intent__HassUnlock", Intent, "HassUnlock", nil, "ha_HassUnlock"},
		{"lock__HassUnlock", Intent, "HassUnlock", nil, "ha_HassUnlock"},
		{"homeassistant__GetLiveContext", Read, "GetLiveContext", nil, "ha_GetLiveContext"},
		{"llm__GetDateTime", Read, "GetDateTime", nil, "ha_GetDateTime"},
		{"todo__get_items", Read, "todo_get_items", nil, "ha_todo_get_items"},
		{"calendar__get_events", Read, "calendar_get_events", nil, "ha_calendar_get_events"},
		{"get_items", Unknown, "", []string{"get_items"}, "ha_get_items"},
		{"script__good_night", Unknown, "", []string{"good_night", "script__good_night"}, "ha_good_night"},
		{"good_night", Unknown, "", []string{"good_night"}, "ha_good_night"},
		{"_3am_check", Unknown, "", []string{"_3am_check"}, "ha__3am_check"},
		{"script__todo__get_items", Unknown, "", []string{"todo__get_items", "script__todo__get_items"}, "ha_todo__get_items"},
		{"ha_call_service", Unknown, "", []string{"ha_call_service"}, "ha_call_service"},
		{"HassFutureIntent", Unknown, "", nil, "ha_HassFutureIntent"},
	} {
		n := ParseName(c.upstream)
		if n.Kind != c.kind || n.Base != c.base || !slices.Equal(n.Scripts, c.scripts) || n.Offered() != c.offered {
			t.Errorf("%s: %+v offered %s", c.upstream, n, n.Offered())
		}
	}
	if got := ScriptEntity("_3am_check"); !slices.Equal(got, []string{"script._3am_check", "script.3am_check"}) {
		t.Errorf("ScriptEntity = %v", got)
	}
}

// A known intent's description keeps what the tool does and loses Home
// Assistant's examples of spoken requests ("Use for requests like …"):
// they are wording hints for a voice assistant, and the assist endpoint
// must stay within its 12 KB with 2026.9's intents. Another tool's
// description is relayed as HA wrote it.
func TestKnownIntentsLoseTheirSpokenExamples(t *testing.T) {
	h := newHome(t, fakehass.PrefixedNames, nil)
	_, s, _ := serve(t, h, Settings{})
	tools := listed(t, s)
	for name, want := range map[string]string{
		"ha_HassTurnOn": "Turns on/opens/presses a device or entity. For locks, this performs a 'lock' action.",
		"ha_HassUnlock": "Unlocks a lock.",
	} {
		if got := tools[name].Description; !strings.HasPrefix(got, want) || strings.Contains(got, "Use for requests like") {
			t.Errorf("%s: %q", name, got)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"Opens it. Use for requests like 'open'. Then more.", "Opens it. Then more."},
		{"Use for requests like 'x'.", "Use for requests like 'x'."},
		{"Opens it. Use for requests like 'open'", "Opens it. Use for requests like 'open'"},
	} {
		if got := dropPhrasing(c.in); got != c.want {
			t.Errorf("dropPhrasing(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
