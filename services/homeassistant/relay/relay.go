// Package relay mirrors the tools of Home Assistant's own MCP server (the
// built-in mcp_server integration, or the HACS "Native MCP for Home
// Assistant") on the homeassistant service, each under an ha_ name with its
// schema. Known reads stay reads; every other tool is a write that goes
// through preview → ticket → confirm at the gateway, and its preview works
// out what the call would touch (see package targets) and reports it as
// facts for the policy. The mirror follows Home Assistant: it is listed
// again periodically and after a failed call, so a restart of HA (with
// other scripts exposed, say) shows up, and the gateway pins the change.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
	"github.com/toolgate/toolgate/services/homeassistant/mask"
	"github.com/toolgate/toolgate/services/homeassistant/targets"
)

// Settings of the relay.
const (
	EnvPath    = "HA_MCP_PATH"
	EnvTools   = "HA_MCP_TOOLS"
	EnvRefresh = "HA_MCP_REFRESH"
	// DefaultPath is the built-in mcp_server's stateless endpoint.
	DefaultPath = "/api/mcp"
	// Off turns the relay off.
	Off = "off"
)

// Settings configure the relay.
type Settings struct {
	// Path is the MCP endpoint's path on HA_URL; "" means off.
	Path string
	// Only, when set, relays only these upstream tool names.
	Only map[string]bool
	// Refresh is how often the tool list is read again.
	Refresh time.Duration
}

var pathPattern = regexp.MustCompile(`^/[A-Za-z0-9_./-]{1,200}$`)

// LoadSettings reads HA_MCP_PATH, HA_MCP_TOOLS and HA_MCP_REFRESH.
func LoadSettings(l *config.Loader) Settings {
	s := Settings{Path: l.String(EnvPath, DefaultPath), Refresh: l.Duration(EnvRefresh, time.Minute)}
	switch {
	case s.Path == Off:
		s.Path = ""
	case !pathPattern.MatchString(s.Path) || strings.Contains(s.Path, ".."):
		l.Fail(EnvPath, "must be a path such as /api/mcp or /api/hass_mcp, or off")
	}
	if s.Refresh < 10*time.Second || s.Refresh > 24*time.Hour {
		l.Fail(EnvRefresh, "must be between 10s and 24h")
	}
	if raw := strings.TrimSpace(l.String(EnvTools, "")); raw != "" {
		s.Only = map[string]bool{}
		for _, n := range strings.Split(raw, ",") {
			if n = strings.TrimSpace(n); n != "" {
				if !upstreamName.MatchString(n) {
					l.Fail(EnvTools, "must be a comma-separated list of tool names as Home Assistant lists them")
					break
				}
				s.Only[n] = true
			}
		}
	}
	return s
}

// Group is the toolkit tool group the relay's tools live in.
const Group = "relay"

// upstreamName is a tool name the relay accepts from HA.
var upstreamName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,60}$`)

// hacsReads are the read-only tools of the HACS "Native MCP for Home
// Assistant" server. The built-in server's reads are known by their base
// name (see ParseName); everything else is a write. (HA's own annotations
// do not decide: a read is a read because we know it is.)
var hacsReads = map[string]bool{
	"ha_list_states": true, "ha_get_state": true, "ha_describe_entity": true, "ha_list_services": true,
	"ha_search": true, "ha_render_template": true, "ha_validate_config": true, "ha_trace": true,
	"ha_list_events": true, "ha_history": true,
}

// Withheld are upstream tools the relay never offers: ha_auth mints and
// lists access tokens (a token in a result would reach the model),
// ha_webhook lists the registered webhooks to hand their URLs out (a
// webhook id works like a password: whoever knows it triggers the
// automation or, for the companion app's, sends it data), and
// ha_yaml_config edits YAML without this service's guard (the guarded YAML
// tools replace it). Webhook ids elsewhere (a trace's trigger, a
// configuration) are redacted by key and by URL (internal/redact, mask).
var Withheld = map[string]bool{"ha_auth": true, "ha_webhook": true, "ha_yaml_config": true}

// Relay mirrors an MCP server's tools into a toolkit service.
type Relay struct {
	set Settings
	ha  *hass.Client
	mcp *MCP
	log *slog.Logger

	mu        sync.Mutex
	svc       *toolkit.Service
	lastNames []string
	wake      chan struct{}
	down      bool
	// view is what the last tool list says about HA's Assist view: the
	// name of its GetLiveContext tool and the tools that may run scripts.
	view assistTools
}

// assistTools are the tools a preview reads HA's Assist view from.
type assistTools struct {
	live    string
	scripts []UpstreamTool
}

// New returns a relay; it offers tools once Sync has run with a service.
func New(set Settings, ha *hass.Client, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relay{set: set, ha: ha, mcp: NewMCP(ha.Upstream(), set.Path), log: log, wake: make(chan struct{}, 1)}
}

// Attach sets the service the relayed tools are offered on.
func (r *Relay) Attach(svc *toolkit.Service) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.svc = svc
}

// Sync reads the upstream tool list and replaces the relayed tools. When
// HA cannot be reached the last tools stay (their calls fail clearly).
func (r *Relay) Sync(ctx context.Context) error {
	if _, err := r.mcp.Initialize(ctx); err != nil {
		r.markDown(err)
		return err
	}
	list, err := r.mcp.ListTools(ctx)
	if err != nil {
		r.markDown(err)
		return err
	}
	var view assistTools
	for _, u := range list {
		n := ParseName(u.Name)
		switch {
		case n.Base == "GetLiveContext" && view.live == "":
			view.live = u.Name
		case len(n.Scripts) > 0:
			view.scripts = append(view.scripts, u)
		}
	}
	r.mu.Lock()
	r.view = view
	r.mu.Unlock()
	tools, skipped := r.Tools(list)
	for name, why := range skipped {
		r.log.Debug("relayed tool withheld", "tool", name, "reason", why)
	}
	r.mu.Lock()
	svc := r.svc
	r.mu.Unlock()
	if svc == nil {
		return errors.New("relay: no service attached")
	}
	if err := svc.ReplaceTools(Group, tools); err != nil {
		return fmt.Errorf("relay: %w", err)
	}
	names := make([]string, 0, len(tools))
	for _, t := range tools {
		names = append(names, t.Name)
	}
	r.mu.Lock()
	changed := !slices.Equal(names, r.lastNames)
	r.lastNames, r.down = names, false
	r.mu.Unlock()
	if changed {
		r.log.Info("relaying Home Assistant's MCP tools", "server", r.mcp.Server(), "tools", len(names), "withheld", len(skipped))
	}
	return nil
}

func (r *Relay) markDown(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.down {
		r.log.Warn("Home Assistant's MCP server is not reachable; keeping the last relayed tools", "error", toolerr.MessageOf(err))
	}
	r.down = true
}

// Run syncs now, then every Refresh and soon after a failed call, until
// ctx ends.
func (r *Relay) Run(ctx context.Context) {
	t := time.NewTicker(r.set.Refresh)
	defer t.Stop()
	for {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := r.Sync(sctx)
		cancel()
		// While HA is away (restarting), look again sooner.
		retry := time.NewTimer(min(r.set.Refresh, 15*time.Second))
		if err == nil {
			retry.Stop()
		}
		select {
		case <-ctx.Done():
			retry.Stop()
			return
		case <-retry.C:
		case <-t.C:
		case <-r.wake:
			// A call failed: HA may have restarted with other tools.
			select {
			case <-ctx.Done():
				retry.Stop()
				return
			case <-time.After(2 * time.Second):
			}
		}
		retry.Stop()
	}
}

// resync asks Run for an early sync.
func (r *Relay) resync() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Tools turns an upstream list into toolkit tools, and says why others
// were left out. A known tool is offered under its legacy name whatever
// Home Assistant calls it (ha_HassTurnOn for HassTurnOn and
// intent__HassTurnOn alike); when two upstream tools would share a name
// (a merged API offering HassTurnOn twice), each keeps its full name.
func (r *Relay) Tools(list []UpstreamTool) ([]toolkit.Tool, map[string]string) {
	skipped := map[string]string{}
	type entry struct {
		u    UpstreamTool
		name Name
	}
	var entries []entry
	count := map[string]int{}
	seen := map[string]bool{}
	for _, u := range list {
		n := ParseName(u.Name)
		switch {
		case !upstreamName.MatchString(u.Name):
			skipped[cut(u.Name, 60)] = "name is not letters, digits, _ and -"
			continue
		case Withheld[u.Name]:
			skipped[u.Name] = "never relayed"
			continue
		case r.set.Only != nil && !r.set.Only[u.Name] && !(n.Base != "" && r.set.Only[n.Base]) && !r.set.Only[strings.TrimPrefix(n.Offered(), "ha_")]:
			skipped[u.Name] = "not in " + EnvTools
			continue
		case seen[u.Name]:
			skipped[u.Name] = "listed twice"
			continue
		}
		seen[u.Name] = true
		entries = append(entries, entry{u, n})
		count[n.Offered()]++
	}
	var out []toolkit.Tool
	offered := map[string]bool{}
	for _, e := range entries {
		name := e.name.Offered()
		if count[name] > 1 {
			name = OfferedName(e.u.Name)
		}
		if offered[name] {
			skipped[e.u.Name] = "its name is taken by another tool"
			continue
		}
		schema, err := Schema(e.u.InputSchema)
		if err != nil {
			skipped[e.u.Name] = err.Error()
			continue
		}
		offered[name] = true
		out = append(out, r.tool(e.u, e.name, name, schema))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, skipped
}

// OfferedName is a tool's full relayed name: ha_ and the upstream name (a
// HACS tool already starts with ha_ and keeps its name).
func OfferedName(upstream string) string {
	if strings.HasPrefix(upstream, "ha_") {
		return upstream
	}
	return "ha_" + upstream
}

const maxDescription = 600

func (r *Relay) tool(u UpstreamTool, n Name, name string, schema json.RawMessage) toolkit.Tool {
	desc := cleanText(u.Description, maxDescription)
	if n.Base != "" {
		desc = dropPhrasing(desc)
	}
	if desc == "" {
		desc = "Home Assistant tool " + u.Name + "."
	}
	t := toolkit.Tool{Name: name, Description: desc, Schema: schema}
	if hacsReads[u.Name] || n.Kind == Read {
		t.Annotations = toolkit.Annotations{ReadOnly: true, Idempotent: true}
		t.Read = func(ctx context.Context, args toolkit.Args) (any, error) {
			if err := r.notAScript(ctx, n); err != nil {
				return nil, err
			}
			return r.call(ctx, u.Name, args.Raw())
		}
		return t
	}
	// Stricter hints of the server are kept; a lenient one changes nothing.
	destructive, _ := u.Annotations["destructiveHint"].(bool)
	t.Annotations = toolkit.Annotations{Destructive: destructive}
	t.Write = &toolkit.Write{
		Preview: func(ctx context.Context, args toolkit.Args) (any, error) { return r.preview(ctx, n, args) },
		Apply: func(ctx context.Context, args toolkit.Args, _ any) (any, error) {
			return r.call(ctx, u.Name, args.Raw())
		},
	}
	return t
}

// dropPhrasing drops the examples of spoken requests Home Assistant ends
// its intents' descriptions with ("Use for requests like 'lock the front
// door'."): they guide a voice assistant's wording, not what the tool
// does, and every byte is in every prompt of the endpoint (which must stay
// under 12 KB with 2026.9's intents).
func dropPhrasing(desc string) string {
	i := strings.Index(desc, " Use for requests like ")
	if i < 0 || strings.HasPrefix(desc, "Use for requests like ") {
		return desc
	}
	rest := desc[i+len(" Use for requests like "):]
	if j := strings.Index(rest, ". "); j >= 0 {
		return desc[:i] + " " + strings.TrimSpace(rest[j+2:])
	}
	if strings.HasSuffix(rest, ".") {
		return desc[:i]
	}
	return desc
}

// notAScript refuses a read whose bare name a script could carry too
// (todo_get_items before 2026.9: a script with that object id would be
// listed under the same name, and calling it would run the script).
func (r *Relay) notAScript(ctx context.Context, n Name) error {
	if n.Base == "" || n.Base != n.Upstream || strings.ToLower(n.Base) != n.Base {
		return nil
	}
	_, err := r.ha.State(ctx, "script."+n.Base)
	switch {
	case err == nil:
		return toolerr.New(toolerr.Forbidden, "Home Assistant has a script named %s, so %s may run it: not called as a read (rename the script)", n.Base, n.Upstream)
	case toolerr.CodeOf(err) == toolerr.NotFound:
		return nil
	}
	return err
}

// cleanText drops control characters and bounds a text from upstream.
func cleanText(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	return cut(s, n)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Bounds of a relayed schema.
const (
	maxSchemaBytes = 16 << 10
	maxSchemaDepth = 16
)

// Schema makes an upstream input schema strict and safe to compile: an
// object without further properties at the top, no references of any kind
// (a $ref could make the validator load a file), bounded in size and depth.
func Schema(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	if len(raw) > maxSchemaBytes {
		return nil, fmt.Errorf("schema is larger than %d bytes", maxSchemaBytes)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return nil, errors.New("schema is not a JSON object")
	}
	if t, ok := root["type"]; ok && t != "object" {
		return nil, errors.New("schema is not of type object")
	}
	if err := checkSchema(root, 0); err != nil {
		return nil, err
	}
	delete(root, "$schema")
	root["type"] = "object"
	root["additionalProperties"] = false
	if _, ok := root["properties"]; !ok {
		root["properties"] = map[string]any{}
	}
	return json.Marshal(root)
}

func checkSchema(v any, depth int) error {
	if depth > maxSchemaDepth {
		return fmt.Errorf("schema is nested deeper than %d", maxSchemaDepth)
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			switch k {
			case "$ref", "$dynamicRef", "$recursiveRef", "$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor", "$vocabulary":
				return fmt.Errorf("schema uses %s", k)
			}
			if err := checkSchema(x, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkSchema(x, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// maxErrorText bounds the error text of HA that a failure repeats.
const maxErrorText = 300

// call runs an upstream tool and turns its result into the relayed one.
func (r *Relay) call(ctx context.Context, name string, args json.RawMessage) (any, error) {
	res, err := r.mcp.CallTool(ctx, name, args)
	if err != nil {
		if c := toolerr.CodeOf(err); c == toolerr.UpstreamUnavailable || c == toolerr.Timeout {
			r.resync()
		}
		return nil, err
	}
	if res.IsError {
		text := ""
		for _, c := range res.Content {
			if c.Type == "text" {
				text += c.Text
			}
		}
		if strings.Contains(text, "not found") {
			// A tool HA no longer has: it may have restarted.
			r.resync()
		}
		return nil, toolerr.New(toolerr.InvalidArgument, "Home Assistant answered with an error: %s", cleanText(mask.Text(text), maxErrorText))
	}
	return Decode(res), nil
}

// Decode turns an MCP tool result into one JSON value: the structured
// content when there is one, else the text content, decoded when it is
// JSON (HA's tools answer json.dumps of their response).
func Decode(res Result) any {
	if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		var v any
		if json.Unmarshal(res.StructuredContent, &v) == nil {
			return map[string]any{"result": v}
		}
	}
	var texts []any
	for _, c := range res.Content {
		switch c.Type {
		case "text":
			var v any
			if json.Valid([]byte(c.Text)) && json.Unmarshal([]byte(c.Text), &v) == nil {
				texts = append(texts, v)
			} else {
				texts = append(texts, c.Text)
			}
		default:
			texts = append(texts, map[string]any{"type": c.Type, "mimeType": c.MIMEType, "note": "non-text content is not relayed"})
		}
	}
	if len(texts) == 1 {
		return map[string]any{"result": texts[0]}
	}
	return map[string]any{"result": texts}
}

// Preview is what a relayed write shows before it runs: the call, what it
// would touch (entities with their state now), and what could not be told.
type Preview struct {
	Tool        string           `json:"tool"`
	Arguments   map[string]any   `json:"arguments"`
	Kind        string           `json:"kind"`
	Targets     []targets.Target `json:"targets"`
	MoreTargets int              `json:"more_targets,omitempty"`
	Services    []string         `json:"services,omitempty"`
	Unresolved  []string         `json:"unresolved,omitempty"`
	Notes       []string         `json:"notes,omitempty"`
	Note        string           `json:"note"`
	facts       approval.Facts
}

// PreviewFacts reports the facts the gateway gives the policy.
func (p Preview) PreviewFacts() approval.Facts { return p.facts }

var notes = map[string]string{
	"intent":  "Home Assistant matches the targets itself among the entities exposed to Assist, by name or alias; this is every exposed entity that fits the call, with what the scripts, scenes and groups among them reach.",
	"script":  "A script: what it does is read from its configuration; it may do more than its targets show.",
	"service": "A service call: its targets as named in the call, areas, devices and labels expanded.",
	"tool":    "The effect of this tool is not known here; the entities named in its arguments are listed.",
	"unknown": "Home Assistant offers this tool and toolgate does not know what it does, so a person approves it unless a policy rule says otherwise; the entities named in its arguments are listed.",
}

// preview works out what a relayed write would touch.
func (r *Relay) preview(ctx context.Context, n Name, args toolkit.Args) (any, error) {
	var in map[string]any
	if err := args.Decode(&in); err != nil {
		return nil, err
	}
	if in == nil {
		in = map[string]any{}
	}
	snap, err := targets.Take(ctx, r.ha, true)
	if err != nil {
		return nil, err
	}
	snap.SetAssist(r.assistView(ctx, snap))
	lookup := func(ctx context.Context, key string) (map[string]any, error) { return r.ha.ScriptConfig(ctx, key) }
	kind, res := r.resolve(ctx, snap, n, in, lookup)
	listed, more := res.Listed()
	return Preview{
		Tool: n.Upstream, Arguments: in, Kind: kind, Targets: nonNil(listed), MoreTargets: more,
		Services: res.Services, Unresolved: res.Unresolved, Notes: res.Notes, Note: notes[kind], facts: res.Facts(kind),
	}, nil
}

// assistView reads HA's Assist view: the exposed entities with their
// names, aliases and areas (GetLiveContext without a filter) and the
// exposed scripts (one tool each, aliases in the description). nil when
// it cannot be read: the preview then counts every alias as unknown.
func (r *Relay) assistView(ctx context.Context, snap *targets.Snapshot) *targets.Assist {
	r.mu.Lock()
	view := r.view
	r.mu.Unlock()
	if view.live == "" {
		return nil
	}
	res, err := r.mcp.CallTool(ctx, view.live, json.RawMessage(`{}`))
	if err != nil || res.IsError {
		r.log.Debug("Home Assistant's Assist view could not be read", "error", toolerr.MessageOf(err))
		return nil
	}
	var text strings.Builder
	for _, c := range res.Content {
		if c.Type == "text" {
			text.WriteString(c.Text)
		}
	}
	a, err := targets.ParseLiveContext(text.String())
	if err != nil {
		r.log.Debug("Home Assistant's Assist view could not be read", "error", err)
		return nil
	}
	for _, u := range view.scripts {
		for _, key := range ParseName(u.Name).Scripts {
			for _, id := range ScriptEntity(key) {
				if _, obj, _ := strings.Cut(id, "."); snap.IsScript(obj) {
					a.AddScript(id, u.Description)
				}
			}
		}
	}
	return a
}

func nonNil(t []targets.Target) []targets.Target {
	if t == nil {
		return []targets.Target{}
	}
	return t
}

// resolve picks how to work out a tool's targets, by what the tool is
// (its base name, whatever namespaces HA put in front).
func (r *Relay) resolve(ctx context.Context, snap *targets.Snapshot, n Name, in map[string]any, lookup targets.Lookup) (string, targets.Resolution) {
	if n.Kind == Intent {
		return "intent", snap.Intent(ctx, n.Base, in, lookup)
	}
	for _, key := range n.Scripts {
		for _, id := range ScriptEntity(key) {
			// The built-in server offers one tool per exposed script.
			if _, obj, _ := strings.Cut(id, "."); snap.IsScript(obj) {
				return "script", snap.Script(ctx, obj, lookup)
			}
		}
	}
	switch n.Upstream {
	case "ha_call_service":
		domain, _ := in["domain"].(string)
		service, _ := in["service"].(string)
		call := map[string]any{"service": domain + "." + service, "target": in["target"], "data": in["service_data"]}
		return "service", snap.Config(ctx, []any{call}, lookup)
	case "ha_assist":
		// The HACS server handles intents without the Assist exposure
		// the built-in one applies.
		snap.SetAssist(nil)
		if op, _ := in["op"].(string); op == "handle_intent" {
			// Slots come bare or as {"value": v}, as HA's intents take them.
			intent, _ := in["name"].(string)
			raw, _ := in["slots"].(map[string]any)
			slots := map[string]any{}
			for k, v := range raw {
				if m, ok := v.(map[string]any); ok {
					if inner, has := m["value"]; has {
						v = inner
					}
				}
				slots[k] = v
			}
			if p := ParseName(intent); p.Kind == Intent {
				return "intent", snap.Intent(ctx, p.Base, slots, lookup)
			}
		}
		res := snap.Entities(ctx, in, lookup)
		res.Opaque = true
		res.Unresolved = append(res.Unresolved, "a conversation or an intent whose targets are not given as slots")
		return "tool", res
	}
	res := snap.Entities(ctx, in, lookup)
	res.Opaque = true
	return "unknown", res
}
