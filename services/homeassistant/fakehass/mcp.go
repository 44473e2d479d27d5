package fakehass

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The MCP endpoint follows mcp_server/http.py: stateless Streamable HTTP,
// one JSON reply per request, 202 for notifications and responses, 400 for
// a request that is not JSON-RPC, and the Method-not-found error for a
// method the SDK does not know. Tools follow helpers/llm.py and, from
// 2026.9, each integration's llm.py: one per Assist intent the exposed
// domains allow, GetDateTime, todo_get_items, one per exposed script
// (its aliases appended to the description) and GetLiveContext, named
// bare or <integration>__<tool> as Options.ToolNames says.

// supportedVersions are the protocol revisions the fake's SDK speaks.
var supportedVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

func (f *Fake) mcp(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "application/json") {
		http.Error(w, "400: Client must accept application/json", http.StatusBadRequest)
		return
	}
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != "application/json" {
		http.Error(w, "400: Content-Type must be application/json", http.StatusBadRequest)
		return
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err := json.Unmarshal(body, &msg); err != nil || msg.JSONRPC != "2.0" || (msg.Method == "" && msg.Result == nil && msg.Error == nil) {
		http.Error(w, "400: Request must be a JSON-RPC message", http.StatusBadRequest)
		return
	}
	if len(msg.ID) == 0 || msg.Method == "" {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	reply := func(result any) {
		writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	}
	fail := func(code int, text string, data any) {
		e := map[string]any{"code": code, "message": text}
		if data != nil {
			e["data"] = data
		}
		writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": e})
	}
	switch msg.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(msg.Params, &p)
		v := supportedVersions[0]
		if slices.Contains(supportedVersions, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		reply(map[string]any{
			"protocolVersion": v,
			"capabilities": map[string]any{
				"experimental": map[string]any{}, "prompts": map[string]any{"listChanged": false},
				"resources": map[string]any{"subscribe": false, "listChanged": false}, "tools": map[string]any{"listChanged": false},
			},
			"serverInfo": map[string]any{"name": "home-assistant", "version": "1.26.0"},
		})
	case "ping":
		reply(map[string]any{})
	case "tools/list":
		reply(map[string]any{"tools": f.Tools()})
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if err := json.Unmarshal(msg.Params, &p); err != nil || p.Name == "" {
			fail(-32602, "Invalid request parameters", "")
			return
		}
		text, isErr := f.callTool(p.Name, p.Arguments)
		reply(map[string]any{"content": []map[string]any{{"type": "text", "text": text}}, "isError": isErr})
	case "prompts/list":
		reply(map[string]any{"prompts": []map[string]any{{"name": "Assist", "description": "Default prompt for Home Assistant Assist API"}}})
	default:
		fail(-32601, "Method not found", msg.Method)
	}
}

const (
	strType     = `{"type":"string"}`
	listType    = `{"type":"array","items":{"type":"string"}}`
	onOffDevice = `{"type":"array","items":{"type":"string","enum":["identify","restart","update","awning","blind","curtain","damper","door","garage","gate","shade","shutter","window","water","gas","outlet","switch","tv","speaker","receiver"]}}`
	mediaDevice = `{"type":"array","items":{"type":"string","enum":["tv","speaker","receiver"]}}`
	coverDevice = `{"type":"array","items":{"type":"string","enum":["awning","blind","curtain","damper","door","garage","gate","shade","shutter","window","water","gas"]}}`
)

// target are the slots every entity-targeting intent takes.
func target(extra string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"name":` + strType + `,"area":` + strType + `,"floor":` + strType + `,"domain":` + listType + extra + `}}`)
}

// intentTool is an intent the fake registers; platforms nil means the
// tool is offered whatever is exposed.
type intentTool struct {
	name, description string
	// owner is the integration that names it from 2026.9 on.
	owner string
	// prefixedOnly: an intent 2026.9 added.
	prefixedOnly bool
	schema       json.RawMessage
	platforms    []string
	// domain and service performed on each matched entity, by domain.
	service func(entityDomain string) (string, string, bool)
	data    func(args map[string]any) map[string]any
	// domains restricts matching (required_domains).
	domains []string
}

// onOff is OnOffIntentHandler.async_call_service (components/intent):
// buttons are pressed (and cannot be turned off), covers and valves open
// and close, locks lock and unlock, anything else is turned on or off by
// homeassistant.turn_on/off if its domain has that service, else the
// entity fails.
func onOff(on bool) func(string) (string, string, bool) {
	return func(d string) (string, string, bool) {
		pick := func(yes, no string) (string, string, bool) {
			if on {
				return d, yes, true
			}
			return d, no, true
		}
		switch d {
		case "button", "input_button":
			return d, "press", on
		case "lock":
			return pick("lock", "unlock")
		case "cover":
			return pick("open_cover", "close_cover")
		case "valve":
			return pick("open_valve", "close_valve")
		}
		svc := "turn_off"
		if on {
			svc = "turn_on"
		}
		return d, svc, serviceExists(d, svc, nil)
	}
}

func fixed(domain, svc string) func(string) (string, string, bool) {
	return func(string) (string, string, bool) { return domain, svc, true }
}

var intents = []intentTool{
	{
		name: "HassTurnOn", owner: "intent",
		description: "Turns on/opens/presses a device or entity. For locks, this performs a 'lock' action. Use for requests like 'turn on', 'activate', 'enable', or 'lock'.",
		schema:      target(`,"device_class":` + onOffDevice), service: onOff(true),
	},
	{
		name: "HassTurnOff", owner: "intent",
		description: "Turns off/closes a device or entity. For locks, this performs an 'unlock' action. Use for requests like 'turn off', 'deactivate', 'disable', or 'unlock'.",
		schema:      target(`,"device_class":` + onOffDevice), service: onOff(false),
	},
	{
		name: "HassLightSet", owner: "light", description: "Sets the brightness percentage or color of a light",
		schema:    target(`,"color":` + strType + `,"temperature":{"type":"integer","minimum":0},"brightness":{"type":"integer","minimum":0,"maximum":100,"description":"The brightness percentage of the light between 0 and 100, where 0 is off and 100 is fully lit"}`),
		platforms: []string{"light"}, domains: []string{"light"}, service: fixed("light", "turn_on"),
		data: func(a map[string]any) map[string]any {
			if b, ok := a["brightness"]; ok {
				return map[string]any{"brightness_pct": b}
			}
			return nil
		},
	},
	{
		name: "HassSetPosition", owner: "intent", description: "Sets the position of a device or entity",
		schema:    target(`,"device_class":` + coverDevice + `,"position":{"type":"integer","minimum":0,"maximum":100}`),
		platforms: []string{"cover", "valve"}, domains: []string{"cover", "valve"}, service: fixed("cover", "set_cover_position"),
		data: func(a map[string]any) map[string]any { return map[string]any{"position": a["position"]} },
	},
	{
		name: "HassMediaPause", owner: "media_player", description: "Pauses a media player",
		schema:    target(`,"device_class":` + mediaDevice),
		platforms: []string{"media_player"}, domains: []string{"media_player"}, service: fixed("media_player", "media_pause"),
	},
	{
		name: "HassMediaUnpause", owner: "media_player", description: "Resumes a media player",
		schema:    target(`,"device_class":` + mediaDevice),
		platforms: []string{"media_player"}, domains: []string{"media_player"}, service: fixed("media_player", "media_play"),
	},
	{
		name: "HassClimateSetTemperature", owner: "climate", description: "Sets the target temperature of a climate device or entity",
		schema:    json.RawMessage(`{"type":"object","properties":{"name":` + strType + `,"area":` + strType + `,"floor":` + strType + `,"temperature":{"type":"number"}}}`),
		platforms: []string{"climate"}, domains: []string{"climate"}, service: fixed("climate", "set_temperature"),
		data: func(a map[string]any) map[string]any { return map[string]any{"temperature": a["temperature"]} },
	},
	// The intents 2026.9 added: constrained aliases of turn on and off
	// (components/intent _async_register_onoff_aliases), offered only when
	// one of their domains is exposed and acting only on those domains.
	{
		name: "HassLock", owner: "intent", prefixedOnly: true, description: "Locks a lock. Use for requests like 'lock the front door'.",
		schema: target(""), platforms: []string{"lock"}, domains: []string{"lock"}, service: onOff(true),
	},
	{
		name: "HassUnlock", owner: "intent", prefixedOnly: true, description: "Unlocks a lock. Use for requests like 'unlock the back door'.",
		schema: target(""), platforms: []string{"lock"}, domains: []string{"lock"}, service: onOff(false),
	},
	{
		name: "HassOpen", owner: "intent", prefixedOnly: true, description: "Opens a cover or valve, such as a blind, curtain, garage door or water valve.",
		schema: target(`,"device_class":` + coverDevice), platforms: []string{"cover", "valve"}, domains: []string{"cover", "valve"}, service: onOff(true),
	},
	{
		name: "HassClose", owner: "intent", prefixedOnly: true, description: "Closes a cover or valve, such as a blind, curtain, garage door or water valve.",
		schema: target(`,"device_class":` + coverDevice), platforms: []string{"cover", "valve"}, domains: []string{"cover", "valve"}, service: onOff(false),
	},
	{
		name: "HassPress", owner: "intent", prefixedOnly: true, description: "Presses a button. Use for requests like 'press the doorbell'.",
		schema:    target(`,"device_class":{"type":"array","items":{"type":"string","enum":["identify","restart","update"]}}`),
		platforms: []string{"button", "input_button"}, domains: []string{"button", "input_button"}, service: onOff(true),
	},
}

// fakeTool is one tool of the list: the name it is listed and called by,
// and what it is.
type fakeTool struct {
	name, base, description string
	schema                  json.RawMessage
}

// named is a tool's name in the fake's scheme: bare, or owner__base.
func (f *Fake) named(owner, base string) string {
	if f.opts.ToolNames == PrefixedNames {
		return owner + "__" + base
	}
	return base
}

// toolList is the tool list the MCP server answers now (it follows what
// is exposed, as HA's does); f.mu is held.
func (f *Fake) toolList() []fakeTool {
	exposed := map[string]bool{}
	var scripts, todos []*Entity
	for _, id := range f.order {
		e := f.entities[id]
		if !e.Exposed {
			continue
		}
		exposed[e.domain()] = true
		switch e.domain() {
		case "script":
			scripts = append(scripts, e)
		case "todo":
			todos = append(todos, e)
		}
	}
	var out []fakeTool
	for _, it := range intents {
		if it.platforms != nil && !slices.ContainsFunc(it.platforms, func(p string) bool { return exposed[p] }) {
			continue
		}
		if it.prefixedOnly && f.opts.ToolNames != PrefixedNames {
			continue
		}
		out = append(out, fakeTool{name: f.named(it.owner, it.name), base: it.name, description: it.description, schema: it.schema})
	}
	out = append(out, fakeTool{name: f.named("llm", "GetDateTime"), base: "GetDateTime", description: "Provides the current date and time.", schema: json.RawMessage(`{"type":"object","properties":{}}`)})
	if len(todos) > 0 {
		names := make([]string, 0, len(todos))
		for _, t := range todos {
			names = append(names, t.Name)
		}
		enum, _ := json.Marshal(names)
		name := "todo_get_items"
		if f.opts.ToolNames == PrefixedNames {
			name = "todo__get_items"
		}
		out = append(out, fakeTool{
			name: name, base: "todo_get_items",
			description: "Query a to-do list to find out what items are on it. Use this to answer questions like 'What's on my task list?' or 'Read my grocery list'. Filters items by status (needs_action, completed, all).",
			schema:      json.RawMessage(`{"type":"object","properties":{"todo_list":{"type":"string","enum":` + string(enum) + `},"status":{"type":"string","enum":["needs_action","completed","all"],"description":"Filter returned items by status, by default returns incomplete items","default":"needs_action"}}}`),
		})
	}
	for _, s := range scripts {
		_, obj, _ := strings.Cut(s.ID, ".")
		if obj[0] >= '0' && obj[0] <= '9' {
			obj = "_" + obj
		}
		desc, _ := s.Attributes["description"].(string)
		out = append(out, fakeTool{name: f.named("script", obj), base: "script." + obj, description: withAliases(desc, s.Aliases),
			schema: json.RawMessage(`{"type":"object","properties":{}}`)})
	}
	if len(exposed) > 0 {
		out = append(out, fakeTool{
			name: f.named("homeassistant", "GetLiveContext"), base: "GetLiveContext",
			description: "Provides real-time information about the CURRENT state, value, or mode of devices, sensors, entities, or areas. " +
				"Use this tool for: 1. Answering questions about current conditions (e.g., 'Is the light on?'). 2. As the first step in conditional actions " +
				"(e.g., 'If the weather is rainy, turn off sprinklers' requires checking the weather first). You may filter for devices by name, domain, and area, " +
				"including combining those filters. Prefer filtering by domain when searching for multiple devices of the same type.",
			schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Filter entities by name or alias (case-insensitive)."},"domain":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}],"description":"Filter entities by domain (e.g. 'light', 'sensor'). Accepts a single domain or a list."},"area":{"type":"string","description":"Filter entities by area name or alias (case-insensitive)."}}}`),
		})
	}
	return out
}

// withAliases appends a script's aliases to its tool's description as
// helpers/llm.py _get_cached_action_parameters does: ". Aliases: " and the
// Python repr of the list.
func withAliases(desc string, aliases []string) string {
	if len(aliases) == 0 {
		return desc
	}
	quoted := make([]string, len(aliases))
	for i, a := range aliases {
		if strings.Contains(a, "'") && !strings.Contains(a, `"`) {
			quoted[i] = `"` + a + `"`
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `\'`) + "'"
		}
	}
	list := "[" + strings.Join(quoted, ", ") + "]"
	if desc == "" {
		return "Aliases: " + list
	}
	return desc + ". Aliases: " + list
}

// Tools is the tool list the MCP server answers now.
func (f *Fake) Tools() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, t := range f.toolList() {
		out = append(out, map[string]any{"name": t.name, "description": t.description, "inputSchema": t.schema})
	}
	if f.mcpTools != nil {
		out = f.mcpTools(out)
	}
	return out
}

// LiveContext is what GetLiveContext answers without a filter: the Assist
// view of the exposed entities.
func (f *Fake) LiveContext() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.liveContext(nil)
}

// EditTools lets a test change what tools/list answers (a release that
// renames a tool, a hostile server).
func (f *Fake) EditTools(edit func([]map[string]any) []map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mcpTools = edit
}

// AnswerTool makes a call of the MCP tool name answer text (a tool a test
// lists with EditTools, such as one of the HACS server's).
func (f *Fake) AnswerTool(name, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.answers == nil {
		f.answers = map[string]string{}
	}
	f.answers[name] = text
}

func toolError(format string, args ...any) (string, bool) {
	return "Error calling tool: " + fmt.Sprintf(format, args...), true
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *Fake) callTool(name string, args map[string]any) (string, bool) {
	listed := false
	for _, t := range f.Tools() {
		if t["name"] == name {
			listed = true
		}
	}
	if !listed {
		return toolError("Tool %q not found", name)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if text, ok := f.answers[name]; ok {
		return text, false
	}
	base := ""
	for _, t := range f.toolList() {
		if t.name == name {
			base = t.base
		}
	}
	switch base {
	case "GetDateTime":
		now := f.now()
		return toJSON(map[string]any{"success": true, "result": map[string]any{
			"date": now.Format("2006-01-02"), "time": now.Format("15:04:05"), "timezone": now.Format("MST"), "weekday": now.Format("Monday"),
		}}), false
	case "GetLiveContext":
		return f.liveContext(args), false
	case "todo_get_items":
		return toJSON(map[string]any{"success": true, "result": []map[string]any{
			{"summary": "Milk", "uid": "1", "status": "needs_action"}, {"summary": "Coffee", "uid": "2", "status": "needs_action"},
		}}), false
	}
	for _, it := range intents {
		if it.name == base {
			return f.runIntent(it, args)
		}
	}
	if id, ok := strings.CutPrefix(base, "script."); ok {
		// ActionTool calls script.<object_id> and answers
		// {"success": true, "result": <service response>}.
		id = strings.TrimPrefix(id, "_")
		if _, known := f.entities["script."+id]; !known {
			id = "_" + id
		}
		f.apply(f.entities["script."+id], "off", nil)
		f.calls = append(f.calls, ServiceCall{Domain: "script", Service: id, Data: args})
		return toJSON(map[string]any{"success": true, "result": map[string]any{}}), false
	}
	// A tool a test listed with EditTools and did not answer.
	return toolError("Tool %q has no answer in the fake", name)
}

func stringArg(args map[string]any, key string) (string, bool) {
	v, present := args[key]
	if !present {
		return "", true
	}
	s, ok := v.(string)
	return s, ok && strings.TrimSpace(s) != ""
}

func listArg(args map[string]any, key string) ([]string, bool) {
	switch v := args[key].(type) {
	case nil:
		return nil, true
	case string:
		return []string{v}, true
	case []any:
		var out []string
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}

// runIntent matches targets like async_match_targets and performs the
// intent's service on each, answering an IntentResponseDict.
func (f *Fake) runIntent(it intentTool, args map[string]any) (string, bool) {
	var c constraints
	var ok [7]bool
	c.name, ok[0] = stringArg(args, "name")
	c.area, ok[1] = stringArg(args, "area")
	c.floor, ok[2] = stringArg(args, "floor")
	c.domains, ok[3] = listArg(args, "domain")
	c.deviceClasses, ok[4] = listArg(args, "device_class")
	c.preferredArea, ok[5] = stringArg(args, "preferred_area_id")
	c.preferredFloor, ok[6] = stringArg(args, "preferred_floor_id")
	if slices.Contains(ok[:], false) {
		return toolError("Received invalid slot info for %s", it.name)
	}
	if len(c.domains) == 0 {
		c.domains = it.domains
	} else if it.domains != nil && slices.ContainsFunc(c.domains, func(d string) bool { return !slices.Contains(it.domains, d) }) {
		// vol.In(required_domains)
		return toolError("Received invalid slot info for %s", it.name)
	}
	if c.name == "all" {
		c.name = ""
	}
	matched, reason := f.match(c)
	if matched == nil {
		if reason == errAllDevices {
			return toolError("%s", reason)
		}
		return toolError("<MatchFailedError result=MatchTargetsResult(is_match=False, no_match_reason=%s)>", reason)
	}
	var success, failed []map[string]any
	for _, e := range matched {
		domain, svc, ok := it.service(e.domain())
		if !ok {
			failed = append(failed, map[string]any{"name": e.Name, "type": "entity", "id": e.ID})
			continue
		}
		var data map[string]any
		if it.data != nil {
			data = it.data(args)
		}
		if next, ok := nextState(e, domain, svc); ok {
			f.apply(e, next, data)
		}
		call := map[string]any{"entity_id": e.ID}
		for k, v := range data {
			call[k] = v
		}
		f.calls = append(f.calls, ServiceCall{Domain: domain, Service: svc, Data: call})
		success = append(success, map[string]any{"name": e.Name, "type": "entity", "id": e.ID})
	}
	if len(success) == 0 {
		ids := make([]string, 0, len(failed))
		for _, x := range failed {
			ids = append(ids, x["id"].(string))
		}
		return toolError("Failed to call service for: %v", ids)
	}
	return toJSON(map[string]any{
		"speech":        map[string]any{},
		"response_type": "action_done",
		"data":          map[string]any{"targets": []any{}, "success": success, "failed": nonNilMaps(failed)},
	}), false
}

func nonNilMaps(m []map[string]any) []map[string]any {
	if m == nil {
		return []map[string]any{}
	}
	return m
}

// liveEntity is one entry of GetLiveContext's YAML, in HA's key order.
type liveEntity struct {
	Names      string         `yaml:"names"`
	Domain     string         `yaml:"domain"`
	State      string         `yaml:"state"`
	Areas      string         `yaml:"areas,omitempty"`
	Attributes map[string]any `yaml:"attributes,omitempty"`
}

var liveAttributes = []string{"temperature", "current_temperature", "temperature_unit", "brightness", "humidity",
	"unit_of_measurement", "device_class", "current_position", "percentage", "volume_level", "media_title", "media_artist", "media_album_name"}

// liveContext answers GetLiveContext: the exposed entities (without
// scripts and calendars) as YAML, filtered by name, domain and area.
func (f *Fake) liveContext(args map[string]any) string {
	name, _ := stringArg(args, "name")
	area, _ := stringArg(args, "area")
	domains, _ := listArg(args, "domain")
	var list []liveEntity
	var picked []*Entity
	if name != "" || area != "" || len(domains) > 0 {
		picked, _ = f.match(constraints{name: name, area: area, domains: domains, duplicates: true})
	} else {
		for _, id := range f.order {
			picked = append(picked, f.entities[id])
		}
	}
	for _, e := range picked {
		if !e.Exposed || e.domain() == "script" || e.domain() == "calendar" {
			continue
		}
		le := liveEntity{Names: strings.Join(append([]string{e.Name}, e.Aliases...), ", "), Domain: e.domain(), State: e.State}
		if a, ok := f.areas[f.areaOf(e)]; ok {
			le.Areas = strings.Join(append([]string{a.Name}, a.Aliases...), ", ")
		}
		for _, k := range liveAttributes {
			if v, ok := e.Attributes[k]; ok {
				if le.Attributes == nil {
					le.Attributes = map[string]any{}
				}
				switch v := v.(type) {
				case int, float64:
					le.Attributes[k] = fmt.Sprint(v)
				default:
					le.Attributes[k] = v
				}
			}
		}
		list = append(list, le)
	}
	if len(list) == 0 {
		return toJSON(map[string]any{"success": false, "error": "No entities matched the provided filter"})
	}
	y, _ := yaml.Marshal(list)
	return toJSON(map[string]any{"success": true, "result": "Live Context: An overview of the areas and the devices in this smart home:\n" + string(y)})
}
