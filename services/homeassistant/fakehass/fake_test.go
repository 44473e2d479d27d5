package fakehass

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const token = "fake-token-0123456789"

func start(t *testing.T, edit func(*Options)) (*Fake, *httptest.Server) {
	t.Helper()
	o := DemoHome(Options{Token: token, Now: func() time.Time { return time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC) }})
	if edit != nil {
		edit(&o)
	}
	f := New(o)
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return f, srv
}

type answer struct {
	status int
	ctype  string
	body   string
}

func do(t *testing.T, srv *httptest.Server, method, path, body string, hdr map[string]string) answer {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header.Get("Content-Type"), string(b)}
}

var mcpHeaders = map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

func rpc(t *testing.T, srv *httptest.Server, method string, params any) map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	a := do(t, srv, http.MethodPost, "/api/mcp", string(body), mcpHeaders)
	if a.status != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", method, a.status, a.body)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(a.body), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// The REST API answers with HA's shapes and status codes.
func TestREST(t *testing.T) {
	f, srv := start(t, nil)
	cases := []struct {
		name, method, path, body string
		hdr                      map[string]string
		status                   int
		has                      string
	}{
		{"no token", "GET", "/api/states", "", map[string]string{"Authorization": ""}, 401, "401: Unauthorized"},
		{"wrong token", "GET", "/api/", "", map[string]string{"Authorization": "Bearer nope"}, 401, "401: Unauthorized"},
		{"status", "GET", "/api/", "", nil, 200, `{"message":"API running."}`},
		{"states", "GET", "/api/states", "", nil, 200, `"entity_id":"lock.front_door"`},
		{"one state", "GET", "/api/states/cover.garage_door", "", nil, 200, `"device_class":"garage"`},
		{"unknown state", "GET", "/api/states/light.nope", "", nil, 404, `{"message":"Entity not found."}`},
		{"history needs entities", "GET", "/api/history/period/2026-12-02T00:00:00Z", "", nil, 400, "filter_entity_id is missing"},
		{"history", "GET", "/api/history/period/2026-12-02T00:00:00Z?filter_entity_id=light.kitchen_ceiling&minimal_response&no_attributes", "", nil, 200, `"entity_id":"light.kitchen_ceiling"`},
		{"bad history time", "GET", "/api/history/period/yesterday?filter_entity_id=light.x", "", nil, 400, "Invalid datetime"},
		{"logbook", "GET", "/api/logbook/2026-12-02T00:00:00Z", "", nil, 200, `"name":"Front Door"`},
		{"config", "GET", "/api/config", "", nil, 200, `"version":"` + Version + `"`},
		{"check", "POST", "/api/config/core/check_config", "", nil, 200, `{"errors":null,"result":"valid","warnings":null}`},
		{"service", "POST", "/api/services/light/turn_on", `{"entity_id":"light.bedroom_light"}`, nil, 200, `"state":"on"`},
		{"unknown service", "POST", "/api/services/light/explode", `{}`, nil, 400, "Bad Request"},
		{"notify needs a message", "POST", "/api/services/notify/mobile_app_phone", `{"title":"x"}`, nil, 400, "Bad Request"},
		{"notify", "POST", "/api/services/notify/mobile_app_phone", `{"message":"hi"}`, nil, 200, `[]`},
		{"other template", "POST", "/api/template", `{"template":"{{ states('x') }}"}`, nil, 400, "Error rendering template"},
		{"area map", "POST", "/api/template", `{"template":` + jsonString(hass.AreaMapTemplate) + `}`, nil, 200, `["lock.front_door","hallway","Hallway","ground_floor","Ground Floor"]`},
		{"unknown path", "GET", "/api/nothing", "", nil, 404, "404"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := do(t, srv, c.method, c.path, c.body, c.hdr)
			if a.status != c.status || !strings.Contains(a.body, c.has) {
				t.Fatalf("HTTP %d %s, want %d with %s", a.status, a.body, c.status, c.has)
			}
		})
	}
	if f.StateOf("light.bedroom_light") != "on" {
		t.Error("a service call changed nothing")
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The check can be told to fail, parses the configuration directory, and
// reloads can fail with HTTP 500; admin-only endpoints refuse other users.
func TestCheckReloadAndAdmin(t *testing.T) {
	dir := t.TempDir()
	f, srv := start(t, func(o *Options) { o.ConfigDir = dir })
	if err := os.WriteFile(filepath.Join(dir, "automations.yaml"), []byte("- id: '1'\n  alias: x\n  action: !include x.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a := do(t, srv, "POST", "/api/config/core/check_config", "", nil); !strings.Contains(a.body, `"result":"valid"`) {
		t.Fatalf("valid dir: %s", a.body)
	}
	if err := os.WriteFile(filepath.Join(dir, "automations.yaml"), []byte("- id: '1'\n  alias: [x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a := do(t, srv, "POST", "/api/config/core/check_config", "", nil); !strings.Contains(a.body, `"result":"invalid"`) || !strings.Contains(a.body, "automations.yaml") {
		t.Fatalf("broken YAML: %s", a.body)
	}
	f.FailCheck("Integration error: nope")
	if a := do(t, srv, "POST", "/api/config/core/check_config", "", nil); !strings.Contains(a.body, `"errors":"Integration error: nope"`) {
		t.Fatalf("told to fail: %s", a.body)
	}
	f.FailCheck("")
	if err := os.WriteFile(filepath.Join(dir, "automations.yaml"), []byte("- id: '1'\n  trigger: [{platform: nonsense}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.FailCheckIfContains("platform: nonsense", "Invalid config for 'automation': invalid trigger platform")
	if a := do(t, srv, "POST", "/api/config/core/check_config", "", nil); !strings.Contains(a.body, `"result":"invalid"`) || !strings.Contains(a.body, "invalid trigger platform") {
		t.Fatalf("a rule that matches: %s", a.body)
	}
	f.FailCheckIfContains("platform: nonsense", "")
	if a := do(t, srv, "POST", "/api/config/core/check_config", "", nil); !strings.Contains(a.body, `"result":"valid"`) {
		t.Fatalf("the rule dropped: %s", a.body)
	}
	f.FailReload("automation", true)
	if a := do(t, srv, "POST", "/api/services/automation/reload", "", nil); a.status != 500 {
		t.Fatalf("failing reload: HTTP %d", a.status)
	}
	if a := do(t, srv, "POST", "/api/services/script/reload", "", nil); a.status != 200 {
		t.Fatalf("other reload: HTTP %d", a.status)
	}

	_, srv2 := start(t, func(o *Options) { o.NotAdmin = true })
	for _, p := range []string{"/api/config/core/check_config", "/api/template"} {
		if a := do(t, srv2, "POST", p, `{"template":"x"}`, nil); a.status != 401 {
			t.Errorf("%s as a non-admin: HTTP %d", p, a.status)
		}
	}
}

// The MCP endpoint behaves as mcp_server/http.py: header checks, 202 for
// notifications, Method not found, one JSON answer per request.
func TestMCPTransport(t *testing.T) {
	_, srv := start(t, nil)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		has    string
	}{
		{"no Accept", init, map[string]string{"Accept": "text/event-stream", "Content-Type": "application/json"}, 400, "must accept application/json"},
		{"wrong content type", init, map[string]string{"Accept": "application/json", "Content-Type": "text/plain"}, 400, "Content-Type must be"},
		{"not JSON-RPC", `{"hello":1}`, mcpHeaders, 400, "JSON-RPC"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mcpHeaders, 202, ""},
		{"initialize", init, mcpHeaders, 200, `"protocolVersion":"2025-06-18"`},
		{"unknown method", `{"jsonrpc":"2.0","id":2,"method":"server/discover"}`, mcpHeaders, 200, `"code":-32601`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := do(t, srv, "POST", "/api/mcp", c.body, c.hdr)
			if a.status != c.status || !strings.Contains(a.body, c.has) {
				t.Fatalf("HTTP %d %s", a.status, a.body)
			}
		})
	}
}

func toolNames(t *testing.T, srv *httptest.Server) []string {
	res := rpc(t, srv, "tools/list", nil)["result"].(map[string]any)
	var names []string
	for _, tl := range res["tools"].([]any) {
		names = append(names, tl.(map[string]any)["name"].(string))
	}
	return names
}

func callText(t *testing.T, srv *httptest.Server, name string, args map[string]any) (string, bool) {
	t.Helper()
	res := rpc(t, srv, "tools/call", map[string]any{"name": name, "arguments": args})["result"].(map[string]any)
	return res["content"].([]any)[0].(map[string]any)["text"].(string), res["isError"].(bool)
}

// Intents match targets as HA does (name, alias, area, floor, domain,
// device class; exposed entities only) and perform the domain's service:
// HassTurnOn locks a lock and opens a cover. The tools are named bare or,
// as from 2026.9, <integration>__<tool>.
func TestMCPIntents(t *testing.T) {
	for _, scheme := range Schemes {
		t.Run(scheme.String(), func(t *testing.T) { mcpIntents(t, scheme) })
	}
}

func mcpIntents(t *testing.T, scheme ToolNames) {
	f, srv := start(t, func(o *Options) { o.ToolNames = scheme })
	n := func(owner, base string) string {
		if scheme == PrefixedNames {
			return owner + "__" + base
		}
		return base
	}
	names := strings.Join(toolNames(t, srv), ",")
	want := []string{n("intent", "HassTurnOn"), n("light", "HassLightSet"), n("homeassistant", "GetLiveContext"), n("llm", "GetDateTime"), n("script", "good_night")}
	if scheme == PrefixedNames {
		want = append(want, "todo__get_items", "intent__HassUnlock", "intent__HassLock", "intent__HassOpen")
	} else {
		want = append(want, "todo_get_items")
	}
	for _, w := range want {
		if !strings.Contains(","+names+",", ","+w+",") {
			t.Errorf("tools/list lacks %s: %s", w, names)
		}
	}
	if scheme == BareNames && strings.Contains(names, "HassUnlock") {
		t.Error("a bare-named release offers 2026.9's intents")
	}
	if strings.Contains(names, "movie_mode") {
		t.Error("an unexposed script is a tool")
	}
	f.Expose("script.movie_mode", true)
	if !strings.Contains(strings.Join(toolNames(t, srv), ","), "movie_mode") {
		t.Error("exposing a script added no tool")
	}

	text, isErr := callText(t, srv, n("intent", "HassTurnOff"), map[string]any{"name": "main door"})
	if isErr || !strings.Contains(text, `"id":"lock.front_door"`) || f.StateOf("lock.front_door") != "unlocked" {
		t.Fatalf("unlock by alias: %s (%v) state %s", text, isErr, f.StateOf("lock.front_door"))
	}
	if text, isErr = callText(t, srv, n("intent", "HassTurnOn"), map[string]any{"area": "hallway", "domain": []any{"lock"}}); isErr || f.StateOf("lock.front_door") != "locked" {
		t.Fatalf("lock by area and domain: %s", text)
	}
	if text, isErr = callText(t, srv, n("intent", "HassTurnOn"), map[string]any{"floor": "downstairs", "device_class": []any{"garage"}}); isErr || f.StateOf("cover.garage_door") != "open" {
		t.Fatalf("open by floor alias and device class: %s", text)
	}
	if text, isErr = callText(t, srv, n("intent", "HassTurnOn"), map[string]any{"name": "Living Room Humidity"}); !isErr || !strings.HasPrefix(text, "Error calling tool:") {
		t.Fatalf("unexposed entity: %s", text)
	}
	if text, isErr = callText(t, srv, n("intent", "HassTurnOn"), map[string]any{}); !isErr || !strings.Contains(text, "cannot target all devices") {
		t.Fatalf("no slot at all: %s", text)
	}
	if text, isErr = callText(t, srv, n("intent", "HassTurnOn"), map[string]any{"name": " "}); !isErr || !strings.Contains(text, "invalid slot info") {
		t.Fatalf("a blank name: %s", text)
	}
	if text, isErr = callText(t, srv, "HassNope", nil); !isErr || !strings.Contains(text, "not found") {
		t.Fatalf("unknown tool: %s", text)
	}
	if scheme == PrefixedNames {
		if text, isErr = callText(t, srv, "HassTurnOn", map[string]any{"name": "Front Door"}); !isErr || !strings.Contains(text, "not found") {
			t.Fatalf("a bare name on a prefixed release: %s", text)
		}
		if text, isErr = callText(t, srv, "intent__HassUnlock", map[string]any{"name": "Front door"}); isErr || f.StateOf("lock.front_door") != "unlocked" {
			t.Fatalf("HassUnlock: %s", text)
		}
	}
	text, isErr = callText(t, srv, n("homeassistant", "GetLiveContext"), map[string]any{"domain": "lock"})
	if isErr || !strings.Contains(text, `names: Front Door, Main Door`) || !strings.Contains(text, "areas: Hallway") {
		t.Fatalf("live context: %s", text)
	}
	if text, isErr = callText(t, srv, n("script", "good_night"), nil); isErr || !strings.Contains(text, `"success":true`) {
		t.Fatalf("script: %s", text)
	}
}

// A script's tool carries its aliases at the end of its description, as
// helpers/llm.py appends them.
func TestScriptToolsNameTheirAliases(t *testing.T) {
	_, srv := start(t, func(o *Options) {
		for i := range o.Entities {
			if o.Entities[i].ID == "script.good_night" {
				o.Entities[i].Aliases = []string{"Bedtime", "Kid's night"}
			}
		}
	})
	res := rpc(t, srv, "tools/list", nil)["result"].(map[string]any)
	for _, tl := range res["tools"].([]any) {
		if m := tl.(map[string]any); m["name"] == "good_night" {
			if want := `Turn off the downstairs lights and lock the front door. Aliases: ['Bedtime', "Kid's night"]`; m["description"] != want {
				t.Fatalf("description %q", m["description"])
			}
			return
		}
	}
	t.Fatal("no good_night tool")
}

// The MCP server's require_admin option refuses a non-administrator's
// token with 401 while the REST API still takes it.
func TestMCPRequireAdmin(t *testing.T) {
	_, srv := start(t, func(o *Options) { o.NotAdmin, o.MCPRequireAdmin, o.ToolNames = true, true, PrefixedNames })
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	if a := do(t, srv, "POST", "/api/mcp", body, mcpHeaders); a.status != 401 {
		t.Fatalf("MCP as a non-admin: HTTP %d", a.status)
	}
	if a := do(t, srv, "GET", "/api/", "", nil); a.status != 200 {
		t.Fatalf("REST as a non-admin: HTTP %d", a.status)
	}
	if a := do(t, srv, "GET", "/api/config", "", nil); !strings.Contains(a.body, PrefixedVersion) {
		t.Fatalf("version: %s", a.body)
	}
}

// The expansion template answers device_entities, label_entities,
// label_devices and label_areas as HA's template functions would, and an
// entity without an area inherits its device's in the area map.
func TestExpansionTemplate(t *testing.T) {
	_, srv := start(t, func(o *Options) {
		o.Devices = []Device{{ID: "d1", Area: "garage", Labels: []string{"outdoor"}}}
		o.Areas[1].Labels = []string{"outdoor"} // kitchen
		for i := range o.Entities {
			if o.Entities[i].ID == "cover.garage_door" {
				o.Entities[i].Area, o.Entities[i].Device = "", "d1"
			}
			if o.Entities[i].ID == "switch.coffee_maker" {
				o.Entities[i].Labels = []string{"outdoor"}
			}
		}
	})
	req, _ := json.Marshal(map[string]any{"template": hass.ExpandTemplate, "variables": map[string]any{"devices": []string{"d1", "nope"}, "labels": []string{"outdoor"}}})
	a := do(t, srv, "POST", "/api/template", string(req), nil)
	for _, want := range []string{`["device","d1",["cover.garage_door"]]`, `["device","nope",[]]`, `["label","outdoor",["switch.coffee_maker"],["cover.garage_door"],["kitchen"]]`} {
		if !strings.Contains(a.body, want) {
			t.Errorf("expansion lacks %s: %s", want, a.body)
		}
	}
	req, _ = json.Marshal(map[string]any{"template": hass.AreaMapTemplate})
	if a := do(t, srv, "POST", "/api/template", string(req), nil); !strings.Contains(a.body, `["cover.garage_door","garage","Garage","ground_floor","Ground Floor"]`) {
		t.Errorf("area map: %s", a.body)
	}
}

// Intents follow helpers/intent.py and components/intent as read: a domain
// or device class alone is a constraint (every exposed light), "all" is
// no name, a name that several exposed entities answer to is refused
// unless preferred_area_id or preferred_floor_id picks one, names are
// stripped and casefolded; HassTurnOn/Off open and close valves and press
// buttons (and refuse to turn one off); HassOpen and HassClose act on
// covers and valves only, whatever a name says, and need no slot.
func TestIntentsMatchAndActAsHomeAssistant(t *testing.T) {
	f, srv := start(t, func(o *Options) {
		o.ToolNames = PrefixedNames
		o.Entities = append(o.Entities,
			Entity{ID: "valve.water_main", Name: "Water Main", State: "open", Area: "garage", Exposed: true, Attributes: map[string]any{"device_class": "water"}},
			Entity{ID: "button.doorbell", Name: "Doorbell", State: "unknown", Area: "hallway", Exposed: true},
			Entity{ID: "input_button.reset", Name: "Reset", State: "unknown", Exposed: true},
			Entity{ID: "light.hall", Name: "Twin", State: "off", Area: "hallway", Exposed: true},
			Entity{ID: "light.den", Name: "Twin", State: "off", Area: "bedroom", Exposed: true},
			Entity{ID: "light.strasse", Name: "Straße", State: "off", Area: "kitchen", Exposed: true},
		)
	})
	cases := []struct {
		name   string
		tool   string
		args   map[string]any
		isErr  bool
		has    string
		entity string
		state  string
	}{
		{"a domain alone", "intent__HassTurnOn", map[string]any{"domain": "light"}, false, `"id":"light.bedroom_light"`, "light.garage_light", "on"},
		{"all is no name", "intent__HassTurnOff", map[string]any{"name": "all", "domain": []any{"light"}}, false, `"id":"light.kitchen_ceiling"`, "light.kitchen_ceiling", "off"},
		{"a device class alone", "intent__HassTurnOn", map[string]any{"device_class": []any{"garage"}}, false, `"id":"cover.garage_door"`, "cover.garage_door", "open"},
		{"twins are refused", "intent__HassTurnOn", map[string]any{"name": "twin"}, true, "DUPLICATE_NAME", "light.hall", "off"},
		{"a preferred area picks a twin", "intent__HassTurnOn", map[string]any{"name": "twin", "preferred_area_id": "hallway"}, false, `"id":"light.hall"`, "light.hall", "on"},
		{"casefold", "intent__HassTurnOn", map[string]any{"name": "STRASSE\x1f"}, false, `"id":"light.strasse"`, "light.strasse", "on"},
		{"a valve turned off closes", "intent__HassTurnOff", map[string]any{"name": "Water Main"}, false, `"id":"valve.water_main"`, "valve.water_main", "closed"},
		{"a button turned on is pressed", "intent__HassTurnOn", map[string]any{"name": "Doorbell"}, false, `"id":"button.doorbell"`, "", ""},
		{"a button cannot be turned off", "intent__HassTurnOff", map[string]any{"name": "Doorbell"}, true, "Failed to call", "", ""},
		{"HassOpen without slots opens every cover and valve", "intent__HassOpen", map[string]any{}, false, `"id":"cover.garage_door"`, "valve.water_main", "open"},
		{"HassOpen does not open a lock", "intent__HassOpen", map[string]any{"name": "Front Door"}, true, "MatchFailedError", "lock.front_door", "locked"},
		{"HassClose by area", "intent__HassClose", map[string]any{"area": "Garage"}, false, `"id":"valve.water_main"`, "cover.garage_door", "closed"},
		{"HassPress an input button", "intent__HassPress", map[string]any{"name": "Reset"}, false, `"id":"input_button.reset"`, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text, isErr := callText(t, srv, c.tool, c.args)
			if isErr != c.isErr || !strings.Contains(text, c.has) {
				t.Fatalf("%s %v: %s (error %v)", c.tool, c.args, text, isErr)
			}
			if c.entity != "" && f.StateOf(c.entity) != c.state {
				t.Errorf("%s is %q, want %q", c.entity, f.StateOf(c.entity), c.state)
			}
		})
	}
	var pressed []string
	for _, call := range f.Calls() {
		if call.Service == "press" {
			pressed = append(pressed, call.Domain+"."+call.Service+" "+call.Data["entity_id"].(string))
		}
	}
	if strings.Join(pressed, ",") != "button.press button.doorbell,input_button.press input_button.reset" {
		t.Errorf("presses %v", pressed)
	}
}
