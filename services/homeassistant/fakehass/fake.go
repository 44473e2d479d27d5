// Package fakehass is a fake Home Assistant for tests and the demo profile.
// It answers the REST API (states, history, logbook, config, the
// configuration check, service calls, the one template the service
// renders) and the built-in MCP server's stateless Streamable HTTP endpoint
// (POST /api/mcp: Assist intents, GetLiveContext, GetDateTime, a to-do
// read and one tool per exposed script) with the shapes and status codes of
// the real application (homeassistant/components/api, config/core.py,
// mcp_server/http.py and server.py, helpers/llm.py and intent.py). A
// configuration check can be told to fail and reload services can fail.
// It is a fixture, never part of a real stack.
package fakehass

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

// Port is Home Assistant's default port.
const Port = 8123

// Version is the release the fake claims to be with bare tool names.
const Version = "2025.12.1"

// PrefixedVersion is the release it claims to be with prefixed tool names
// (and the MCP server's require_admin option).
const PrefixedVersion = "2026.10.1"

// ToolNames is how the MCP server names its tools: the release switch of
// the fake's Assist API.
type ToolNames int

const (
	// BareNames: HassTurnOn, GetLiveContext, todo_get_items, good_night
	// (Home Assistant up to 2026.8).
	BareNames ToolNames = iota
	// PrefixedNames: intent__HassTurnOn, homeassistant__GetLiveContext,
	// todo__get_items, script__good_night and the intents HassLock,
	// HassUnlock, HassOpen, HassClose and HassPress (2026.9 and later).
	PrefixedNames
)

// Schemes are both naming schemes, for tests that run against each.
var Schemes = []ToolNames{BareNames, PrefixedNames}

func (n ToolNames) String() string {
	if n == PrefixedNames {
		return "prefixed (2026.9+)"
	}
	return "bare (up to 2026.8)"
}

// Options configure a Fake.
type Options struct {
	// Token is the long-lived access token the fake accepts.
	Token    string
	Floors   []Floor
	Areas    []Area
	Entities []Entity
	// ConfigDir, when set, is the configuration directory the check
	// parses: automations.yaml, scripts.yaml, scenes.yaml and
	// configuration.yaml must be valid YAML (HA's tags allowed).
	ConfigDir string
	// NotAdmin makes the token a non-administrator's: admin-only
	// endpoints (check_config, template) answer 401 as HA does.
	NotAdmin bool
	// Devices are the devices entities may belong to.
	Devices []Device
	// ToolNames is the naming scheme of the MCP server's tools.
	ToolNames ToolNames
	// MCPRequireAdmin is the MCP server's "Require an administrator
	// account" option (require_admin): with NotAdmin, /api/mcp answers
	// 401 while the REST API still takes the token.
	MCPRequireAdmin bool
	Now             func() time.Time
}

// ServiceCall is one service call the fake received.
type ServiceCall struct {
	Domain, Service string
	Data            map[string]any
}

// Fake is a running fake Home Assistant.
type Fake struct {
	opts Options
	now  func() time.Time

	mu         sync.Mutex
	entities   map[string]*Entity
	order      []string
	areas      map[string]*Area
	floors     map[string]*Floor
	devices    map[string]*Device
	changes    []change
	calls      []ServiceCall
	checkFail  string
	checkRules map[string]string
	reloadFail map[string]bool
	requests   int
	mcpTools   func([]map[string]any) []map[string]any
	answers    map[string]string
}

// New returns a fake over a copy of o's home.
func New(o Options) *Fake {
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &Fake{opts: o, now: o.Now, entities: map[string]*Entity{}, areas: map[string]*Area{}, floors: map[string]*Floor{},
		devices: map[string]*Device{}, reloadFail: map[string]bool{}}
	for _, d := range o.Devices {
		f.devices[d.ID] = &d
	}
	for _, fl := range o.Floors {
		f.floors[fl.ID] = &fl
	}
	for _, a := range o.Areas {
		f.areas[a.ID] = &a
	}
	start := f.now().Add(-2 * time.Hour)
	for _, e := range o.Entities {
		attrs := map[string]any{}
		for k, v := range e.Attributes {
			attrs[k] = v
		}
		attrs["friendly_name"] = e.Name
		e.Attributes = attrs
		f.entities[e.ID] = &e
		f.order = append(f.order, e.ID)
		f.changes = append(f.changes, change{entity: e.ID, state: e.State, when: start})
	}
	slices.Sort(f.order)
	return f
}

// FailCheck makes the configuration check answer invalid with errors;
// "" makes it pass again.
func (f *Fake) FailCheck(errors string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkFail = errors
}

// FailCheckIfContains makes the configuration check answer invalid with
// errors whenever one of the files it parses contains text, the way HA
// refuses a configuration it cannot validate (an unknown trigger
// platform, say); "" as errors drops the rule.
func (f *Fake) FailCheckIfContains(text, errors string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.checkRules == nil {
		f.checkRules = map[string]string{}
	}
	if errors == "" {
		delete(f.checkRules, text)
		return
	}
	f.checkRules[text] = errors
}

// FailReload makes domain.reload fail (HTTP 500) until called with false.
func (f *Fake) FailReload(domain string, fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reloadFail[domain] = fail
}

// Calls returns the service calls received so far.
func (f *Fake) Calls() []ServiceCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Requests counts the requests that reached the fake with a valid token.
func (f *Fake) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// StateOf returns an entity's current state.
func (f *Fake) StateOf(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entities[id]; ok {
		return e.State
	}
	return ""
}

// Expose sets whether an entity is exposed to Assist (a script exposed
// later adds a tool to the MCP server's list).
func (f *Fake) Expose(id string, exposed bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entities[id]; ok {
		e.Exposed = exposed
	}
}

// Handler serves the fake's API.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/{$}", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"message": "API running."})
	})
	mux.HandleFunc("GET /api/config", f.config)
	mux.HandleFunc("GET /api/states", f.states)
	mux.HandleFunc("GET /api/states/{entity}", f.state)
	mux.HandleFunc("GET /api/history/period/{start}", f.history)
	mux.HandleFunc("GET /api/logbook/{start}", f.logbook)
	mux.HandleFunc("POST /api/config/core/check_config", f.admin(f.checkConfig))
	mux.HandleFunc("POST /api/services/{domain}/{service}", f.service)
	mux.HandleFunc("POST /api/template", f.admin(f.template))
	mux.HandleFunc("GET /api/config/script/config/{key}", f.admin(f.scriptConfig))
	if f.opts.MCPRequireAdmin {
		mux.HandleFunc("POST /api/mcp", f.admin(f.mcp))
	} else {
		mux.HandleFunc("POST /api/mcp", f.mcp)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "404: Not Found", http.StatusNotFound)
	})
	return f.auth(mux)
}

// auth checks the bearer token as HA's http integration does: anything
// else is 401 with a plain-text body.
func (f *Fake) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(f.opts.Token)) != 1 {
			http.Error(w, "401: Unauthorized", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		f.requests++
		f.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// admin refuses a non-administrator's token (HA's require_admin).
func (f *Fake) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if f.opts.NotAdmin {
			http.Error(w, "401: Unauthorized", http.StatusUnauthorized)
			return
		}
		next(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func message(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"message": msg})
}

func (f *Fake) config(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	domains := map[string]bool{"api": true, "config": true, "http": true, "mcp_server": true, "history": true, "logbook": true}
	for _, e := range f.entities {
		domains[e.domain()] = true
	}
	f.mu.Unlock()
	comps := make([]string, 0, len(domains))
	for d := range domains {
		comps = append(comps, d)
	}
	slices.Sort(comps)
	writeJSON(w, http.StatusOK, map[string]any{
		"latitude": 52.3731, "longitude": 4.8922, "elevation": 0,
		"unit_system": map[string]string{
			"length": "km", "accumulated_precipitation": "mm", "area": "m²", "mass": "g", "pressure": "Pa",
			"temperature": "°C", "volume": "L", "wind_speed": "m/s",
		},
		"location_name": "Demo Home", "time_zone": "Europe/Amsterdam", "components": comps,
		"config_dir": "/config", "allowlist_external_dirs": []string{"/config/www", "/media"},
		"allowlist_external_urls": []string{}, "version": f.version(), "config_source": "storage",
		"recovery_mode": false, "state": "RUNNING", "external_url": nil, "internal_url": nil,
		"currency": "EUR", "country": "NL", "language": "en", "safe_mode": false, "debug": false, "radius": 100,
	})
}

func (f *Fake) version() string {
	if f.opts.ToolNames == PrefixedNames {
		return PrefixedVersion
	}
	return Version
}

func (f *Fake) stateJSON(e *Entity) map[string]any {
	var last time.Time
	for _, c := range f.changes {
		if c.entity == e.ID && c.when.After(last) {
			last = c.when
		}
	}
	ts := last.UTC().Format("2006-01-02T15:04:05.000000+00:00")
	return map[string]any{
		"entity_id": e.ID, "state": e.State, "attributes": e.Attributes,
		"last_changed": ts, "last_reported": ts, "last_updated": ts,
		"context": map[string]any{"id": "01JDEMO" + strings.ToUpper(strings.ReplaceAll(e.ID, ".", "")), "parent_id": nil, "user_id": nil},
	}
}

func (f *Fake) states(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]map[string]any, 0, len(f.order))
	for _, id := range f.order {
		out = append(out, f.stateJSON(f.entities[id]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) state(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entities[r.PathValue("entity")]
	if !ok {
		message(w, http.StatusNotFound, "Entity not found.")
		return
	}
	writeJSON(w, http.StatusOK, f.stateJSON(e))
}

// parseTime reads HA's timestamps (RFC 3339, with or without a zone).
func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func (f *Fake) window(w http.ResponseWriter, r *http.Request) (time.Time, time.Time, bool) {
	start, ok := parseTime(r.PathValue("start"))
	if !ok {
		message(w, http.StatusBadRequest, "Invalid datetime")
		return start, start, false
	}
	end := start.Add(24 * time.Hour)
	if v := r.URL.Query().Get("end_time"); v != "" {
		if end, ok = parseTime(v); !ok {
			message(w, http.StatusBadRequest, "Invalid end_time")
			return start, end, false
		}
	}
	return start, end, true
}

// history answers /api/history/period as HA does with minimal_response
// and no_attributes: per entity, the state at the start of the window and
// every change in it; the first and last carry the entity id.
func (f *Fake) history(w http.ResponseWriter, r *http.Request) {
	start, end, ok := f.window(w, r)
	if !ok {
		return
	}
	ids := r.URL.Query().Get("filter_entity_id")
	if ids == "" {
		message(w, http.StatusBadRequest, "filter_entity_id is missing")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := [][]map[string]any{}
	for _, id := range strings.Split(ids, ",") {
		if _, known := f.entities[id]; !known {
			continue
		}
		var series []change
		var before *change
		for _, c := range f.changes {
			if c.entity != id {
				continue
			}
			switch {
			case c.when.Before(start):
				cc := c
				before = &cc
			case !c.when.After(end):
				series = append(series, c)
			}
		}
		if before != nil {
			before.when = start
			series = append([]change{*before}, series...)
		}
		if len(series) == 0 {
			continue
		}
		points := make([]map[string]any, 0, len(series))
		for i, c := range series {
			ts := c.when.UTC().Format("2006-01-02T15:04:05.000000+00:00")
			p := map[string]any{"state": c.state, "last_changed": ts}
			if i == 0 || i == len(series)-1 {
				p["entity_id"], p["attributes"], p["last_updated"] = id, map[string]any{}, ts
			}
			points = append(points, p)
		}
		out = append(out, points)
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) logbook(w http.ResponseWriter, r *http.Request) {
	start, end, ok := f.window(w, r)
	if !ok {
		return
	}
	entity := r.URL.Query().Get("entity")
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for _, c := range f.changes {
		if c.when.Before(start) || c.when.After(end) || (entity != "" && c.entity != entity) {
			continue
		}
		e := f.entities[c.entity]
		entry := map[string]any{"when": c.when.UTC().Format("2006-01-02T15:04:05.000000+00:00"), "name": e.Name, "entity_id": c.entity}
		if c.message != "" {
			entry["message"], entry["domain"] = c.message, e.domain()
		} else {
			entry["state"] = c.state
		}
		out = append(out, entry)
	}
	writeJSON(w, http.StatusOK, out)
}

// checkConfig answers like CheckConfigView: {"result","errors","warnings"}.
func (f *Fake) checkConfig(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	fail := f.checkFail
	rules := maps.Clone(f.checkRules)
	f.mu.Unlock()
	if fail == "" && f.opts.ConfigDir != "" {
		fail = checkDir(f.opts.ConfigDir, rules)
	}
	if fail != "" {
		writeJSON(w, http.StatusOK, map[string]any{"result": "invalid", "errors": fail, "warnings": nil})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": "valid", "errors": nil, "warnings": nil})
}

// scriptConfig answers EditKeyBasedConfigView's GET: the script's entry in
// scripts.yaml, or 404 {"message":"Resource not found"}.
func (f *Fake) scriptConfig(w http.ResponseWriter, r *http.Request) {
	if f.opts.ConfigDir != "" {
		raw, err := os.ReadFile(filepath.Join(f.opts.ConfigDir, "scripts.yaml"))
		var scripts map[string]any
		if err == nil && yaml.Unmarshal(raw, &scripts) == nil {
			if cfg, ok := scripts[r.PathValue("key")].(map[string]any); ok {
				writeJSON(w, http.StatusOK, cfg)
				return
			}
		}
	}
	message(w, http.StatusNotFound, "Resource not found")
}

// checkDir parses the YAML files HA would load; HA's own tags are fine.
func checkDir(dir string, rules map[string]string) string {
	for _, name := range []string{"configuration.yaml", "automations.yaml", "scripts.yaml", "scenes.yaml"} {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, text := range slices.Sorted(maps.Keys(rules)) {
			if strings.Contains(string(raw), text) {
				return rules[text]
			}
		}
		var v yaml.Node
		if err := yaml.Unmarshal(raw, &v); err != nil {
			return fmt.Sprintf("Error loading /config/%s: %v", name, err)
		}
		if name == "automations.yaml" || name == "scenes.yaml" {
			if len(v.Content) > 0 && v.Content[0].Kind != yaml.SequenceNode {
				return "Invalid config for '" + strings.TrimSuffix(name, "s.yaml") + "': expected a list"
			}
		}
	}
	return ""
}

// service calls a service as POST /api/services/{domain}/{service}: the
// changed states come back; an unknown service is 400.
func (f *Fake) service(w http.ResponseWriter, r *http.Request) {
	domain, svc := r.PathValue("domain"), r.PathValue("service")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	data := map[string]any{}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &data); err != nil {
			message(w, http.StatusBadRequest, "Data should be valid JSON.")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if svc == "reload" && (domain == "automation" || domain == "script" || domain == "scene") {
		f.calls = append(f.calls, ServiceCall{Domain: domain, Service: svc, Data: data})
		if f.reloadFail[domain] {
			http.Error(w, "500 Internal Server Error\n\nServer got itself in trouble", http.StatusInternalServerError)
			return
		}
		writeJSON(w, http.StatusOK, []any{})
		return
	}
	if domain == "notify" {
		if _, ok := data["message"].(string); !ok {
			http.Error(w, "400: Bad Request", http.StatusBadRequest)
			return
		}
		f.calls = append(f.calls, ServiceCall{Domain: domain, Service: svc, Data: data})
		writeJSON(w, http.StatusOK, []any{})
		return
	}
	if !serviceExists(domain, svc, f.entities) {
		// ServiceNotFound → HTTPBadRequest in APIDomainServicesView.
		http.Error(w, "400: Bad Request", http.StatusBadRequest)
		return
	}
	ids := entityIDs(data["entity_id"])
	if domain == "script" && svc != "turn_on" && svc != "turn_off" {
		ids = []string{"script." + svc}
	}
	changed := []map[string]any{}
	for _, id := range ids {
		e, ok := f.entities[id]
		if !ok {
			// HA logs the missing entity and carries on.
			continue
		}
		if next, ok := nextState(e, domain, svc); ok {
			f.apply(e, next, data)
			changed = append(changed, f.stateJSON(e))
		}
	}
	f.calls = append(f.calls, ServiceCall{Domain: domain, Service: svc, Data: data})
	writeJSON(w, http.StatusOK, changed)
}

// services are the services the fake's integrations register.
var services = map[string][]string{
	"light":               {"turn_on", "turn_off", "toggle"},
	"switch":              {"turn_on", "turn_off", "toggle"},
	"fan":                 {"turn_on", "turn_off", "toggle"},
	"input_boolean":       {"turn_on", "turn_off", "toggle"},
	"media_player":        {"turn_on", "turn_off", "media_pause", "media_play"},
	"lock":                {"lock", "unlock"},
	"cover":               {"open_cover", "close_cover", "set_cover_position"},
	"climate":             {"set_temperature"},
	"alarm_control_panel": {"alarm_disarm", "alarm_arm_away"},
	"scene":               {"turn_on"},
	"valve":               {"open_valve", "close_valve", "set_valve_position"},
	"button":              {"press"},
	"input_button":        {"press"},
	"camera":              {"turn_on", "turn_off"},
	"siren":               {"turn_on", "turn_off"},
	"automation":          {"turn_on", "turn_off", "trigger"},
	"homeassistant":       {"turn_on", "turn_off", "toggle"},
}

func serviceExists(domain, svc string, entities map[string]*Entity) bool {
	if domain == "script" {
		_, ok := entities["script."+svc]
		return ok || svc == "turn_on" || svc == "turn_off"
	}
	return slices.Contains(services[domain], svc)
}

func entityIDs(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// apply records e's new state (and attributes a service sets).
func (f *Fake) apply(e *Entity, state string, data map[string]any) {
	if b, ok := data["brightness_pct"]; ok {
		e.Attributes["brightness"] = b
	}
	if t, ok := data["temperature"]; ok {
		e.Attributes["temperature"] = t
	}
	if p, ok := data["position"]; ok {
		e.Attributes["current_position"] = p
	}
	if e.domain() == "script" || e.domain() == "automation" {
		e.Attributes["last_triggered"] = f.now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	}
	e.State = state
	f.changes = append(f.changes, change{entity: e.ID, state: state, when: f.now()})
}

// nextState is the state a service leaves an entity in; false when the
// entity's domain has no such service.
func nextState(e *Entity, domain, svc string) (string, bool) {
	d := e.domain()
	if domain != d && domain != "homeassistant" {
		return "", false
	}
	switch {
	case svc == "turn_on" && (d == "light" || d == "switch" || d == "fan" || d == "media_player" || d == "automation" || d == "input_boolean"):
		return "on", true
	case svc == "turn_off" && (d == "light" || d == "switch" || d == "fan" || d == "media_player" || d == "automation" || d == "input_boolean"):
		return "off", true
	case svc == "turn_on" && d == "scene":
		return time.Now().UTC().Format(time.RFC3339), true
	case d == "script":
		return "off", true
	case d == "lock" && svc == "lock":
		return "locked", true
	case d == "lock" && svc == "unlock":
		return "unlocked", true
	case d == "cover" && svc == "open_cover":
		return "open", true
	case d == "cover" && svc == "close_cover":
		return "closed", true
	case d == "cover" && svc == "set_cover_position":
		return "open", true
	case d == "valve" && svc == "open_valve":
		return "open", true
	case d == "valve" && svc == "close_valve":
		return "closed", true
	case (d == "button" || d == "input_button") && svc == "press":
		// A button's state is the time it was last pressed.
		return time.Now().UTC().Format(time.RFC3339), true
	case d == "climate" && svc == "set_temperature":
		return e.State, true
	case d == "media_player" && svc == "media_pause":
		return "paused", true
	case d == "media_player" && svc == "media_play":
		return "playing", true
	case d == "alarm_control_panel" && svc == "alarm_disarm":
		return "disarmed", true
	case d == "alarm_control_panel" && svc == "alarm_arm_away":
		return "armed_away", true
	case d == "automation" && svc == "trigger":
		return e.State, true
	}
	return "", false
}

// template renders the templates the service sends (the area map, the
// device and label expansion); anything else fails as a template HA
// cannot render.
func (f *Fake) template(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Template  string         `json:"template"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		message(w, http.StatusBadRequest, "Error rendering template: invalid JSON")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	switch req.Template {
	case hass.AreaMapTemplate:
		for _, id := range f.order {
			e := f.entities[id]
			a, ok := f.areas[f.areaOf(e)]
			if !ok {
				continue
			}
			row := []any{id, a.ID, a.Name, nil, nil}
			if fl := f.floorOf(a.ID); fl != nil {
				row[3], row[4] = fl.ID, fl.Name
			}
			line, _ := json.Marshal(row)
			b.WriteString("\n")
			b.Write(line)
		}
	case hass.ExpandTemplate:
		for _, d := range entityIDs(req.Variables["devices"]) {
			line, _ := json.Marshal([]any{"device", d, f.deviceEntities(d)})
			b.WriteString("\n")
			b.Write(line)
		}
		for _, l := range entityIDs(req.Variables["labels"]) {
			var own, viaDevices, areas []string
			for _, id := range f.order {
				if slices.Contains(f.entities[id].Labels, l) {
					own = append(own, id)
				}
			}
			for _, d := range slices.Sorted(maps.Keys(f.devices)) {
				if slices.Contains(f.devices[d].Labels, l) {
					viaDevices = append(viaDevices, f.deviceEntities(d)...)
				}
			}
			for _, a := range slices.Sorted(maps.Keys(f.areas)) {
				if slices.Contains(f.areas[a].Labels, l) {
					areas = append(areas, a)
				}
			}
			line, _ := json.Marshal([]any{"label", l, nonNil(own), nonNil(viaDevices), nonNil(areas)})
			b.WriteString("\n")
			b.Write(line)
		}
	default:
		message(w, http.StatusBadRequest, "Error rendering template: TemplateSyntaxError: the fake renders only the service's templates")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, b.String())
}

// deviceEntities are a device's entities (device_entities).
func (f *Fake) deviceEntities(id string) []string {
	out := []string{}
	for _, eid := range f.order {
		if f.entities[eid].Device == id {
			out = append(out, eid)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Rename changes an entity's friendly name (a user renaming a device).
func (f *Fake) Rename(id, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.entities[id]; ok {
		e.Name = name
		e.Attributes["friendly_name"] = name
	}
}
