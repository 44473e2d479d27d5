// Package targets works out what a Home Assistant action would touch, for
// the previews of writes: the entities an Assist intent would act on
// (matched by name, area, floor, domain and device class as HA's
// async_match_targets matches them), and the entities and services a
// script, automation or scene refers to. It reports small facts about
// them (domains, device classes, whether anything stayed unknown) that the
// gateway hands to the policy before it issues a ticket.
//
// Home Assistant's REST API shows states but not the entity registry, so
// aliases and the Assist exposure of entities are unknown here. Every gap
// errs on the side of more: an entity that is not exposed still counts as
// a target, and a name, area or floor that matches nothing known makes the
// resolution unresolved (which the shipped policy sends to a person),
// because HA might still match it through an alias.
package targets

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

// MaxListed bounds the targets a preview lists; the facts still count all.
const MaxListed = 50

// Target is one entity a write would act on, with its state now.
type Target struct {
	EntityID    string `json:"entity_id"`
	Name        string `json:"name"`
	Domain      string `json:"domain"`
	DeviceClass string `json:"device_class,omitempty"`
	State       string `json:"state"`
	Area        string `json:"area,omitempty"`
}

// Resolution is what a write would touch.
type Resolution struct {
	// Targets are the entities, sorted by id.
	Targets []Target
	// Services are the services a configuration calls (domain.service).
	Services []string
	// Unresolved says why the targets are not fully known; empty when they are.
	Unresolved []string
	// Opaque: what the write does is not visible from here (a script, a
	// tool of unknown effect), even when its targets are.
	Opaque bool
	// domains seen without an entity (a service call's domain).
	domains []string
}

// Domains are the domains of the targets and of the services called.
func (r Resolution) Domains() []string {
	set := map[string]bool{}
	for _, t := range r.Targets {
		set[t.Domain] = true
	}
	for _, d := range r.domains {
		set[d] = true
	}
	return sortedKeys(set)
}

// DeviceClasses are "domain.device_class" of the targets that have one.
func (r Resolution) DeviceClasses() []string {
	set := map[string]bool{}
	for _, t := range r.Targets {
		if t.DeviceClass != "" {
			set[t.Domain+"."+t.DeviceClass] = true
		}
	}
	return sortedKeys(set)
}

// Facts are the resolution's facts for the policy: kind ("intent",
// "script", "service", "config", "tool"), domains, device_classes,
// unresolved and opaque. Lists past the facts' bounds make the resolution
// unresolved rather than silently short.
func (r Resolution) Facts(kind string) approval.Facts {
	domains, classes := r.Domains(), r.DeviceClasses()
	unresolved := len(r.Unresolved) > 0
	if len(domains) > approval.MaxFactList {
		domains, unresolved = domains[:approval.MaxFactList], true
	}
	if len(classes) > approval.MaxFactList {
		classes, unresolved = classes[:approval.MaxFactList], true
	}
	return approval.Facts{
		"kind": kind, "domains": domains, "device_classes": classes,
		"unresolved": unresolved, "opaque": r.Opaque,
	}
}

// Listed returns at most MaxListed targets and how many were left out.
func (r Resolution) Listed() ([]Target, int) {
	if len(r.Targets) <= MaxListed {
		return r.Targets, 0
	}
	return r.Targets[:MaxListed], len(r.Targets) - MaxListed
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Snapshot is Home Assistant's states (and, when asked for, the area and
// floor of every entity) at one moment.
type Snapshot struct {
	states map[string]hass.State
	order  []string
	// placements is nil when they could not be read (a token that is not
	// an administrator's); areaErr says why.
	placements map[string]hass.Placement
	areaErr    error
	ha         *hass.Client
}

// Take reads the states, and the placements when withAreas.
func Take(ctx context.Context, ha *hass.Client, withAreas bool) (*Snapshot, error) {
	states, err := ha.States(ctx)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{states: make(map[string]hass.State, len(states)), ha: ha}
	for _, st := range states {
		s.states[st.EntityID] = st
		s.order = append(s.order, st.EntityID)
	}
	sort.Strings(s.order)
	if withAreas {
		s.placements, s.areaErr = ha.AreaMap(ctx)
	}
	return s, nil
}

func (s *Snapshot) target(id string) (Target, bool) {
	st, ok := s.states[id]
	if !ok {
		return Target{}, false
	}
	t := Target{EntityID: id, Name: st.Name(), Domain: st.Domain(), DeviceClass: st.DeviceClass(), State: st.State}
	if p, ok := s.placements[id]; ok {
		t.Area = p.AreaName
	}
	return t, true
}

// norm is HA's _normalize_name: strip and casefold.
func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// IntentDomains are the domains an intent can act on whatever its slots
// say (its required_domains in HA); intents not listed can act on any.
var IntentDomains = map[string][]string{
	"HassLightSet":              {"light"},
	"HassSetPosition":           {"cover", "valve"},
	"HassStopMoving":            {"cover", "valve"},
	"HassOpen":                  {"cover", "valve"},
	"HassClose":                 {"cover", "valve"},
	"HassLock":                  {"lock"},
	"HassUnlock":                {"lock"},
	"HassPress":                 {"button", "input_button"},
	"HassMediaPause":            {"media_player"},
	"HassMediaUnpause":          {"media_player"},
	"HassMediaNext":             {"media_player"},
	"HassMediaPrevious":         {"media_player"},
	"HassSetVolume":             {"media_player"},
	"HassSetVolumeRelative":     {"media_player"},
	"HassMediaPlayerMute":       {"media_player"},
	"HassMediaPlayerUnmute":     {"media_player"},
	"HassMediaSearchAndPlay":    {"media_player"},
	"HassClimateSetTemperature": {"climate"},
	"HassFanSetSpeed":           {"fan"},
	"HassVacuumStart":           {"vacuum"},
	"HassVacuumReturnToBase":    {"vacuum"},
	"HassLawnMowerStartMowing":  {"lawn_mower"},
	"HassLawnMowerDock":         {"lawn_mower"},
	"HassListAddItem":           {"todo"},
	"HassListCompleteItem":      {"todo"},
	"HassShoppingListAddItem":   {"todo"},
}

// slotStrings reads a slot that HA accepts as a string or a list.
func slotStrings(args map[string]any, key string) ([]string, bool) {
	switch v := args[key].(type) {
	case nil:
		return nil, true
	case string:
		return []string{v}, true
	case []any:
		out := make([]string, 0, len(v))
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

func slotString(args map[string]any, key string) (string, bool) {
	v, ok := args[key]
	if !ok {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}

// Intent resolves the entities an Assist intent would act on. It follows
// HA's async_match_targets over every entity (exposure is unknown here):
// name (entity id or friendly name; "all" matches any), domain, device
// class, floor and area (by id or name).
func (s *Snapshot) Intent(intent string, args map[string]any) Resolution {
	var r Resolution
	name, ok1 := slotString(args, "name")
	area, ok2 := slotString(args, "area")
	floor, ok3 := slotString(args, "floor")
	domains, ok4 := slotStrings(args, "domain")
	classes, ok5 := slotStrings(args, "device_class")
	if !(ok1 && ok2 && ok3 && ok4 && ok5) {
		r.Unresolved = append(r.Unresolved, "the target slots are not strings or lists of strings")
		return r
	}
	if len(domains) == 0 {
		domains = IntentDomains[intent]
	}
	if norm(name) == "all" {
		name = ""
	}
	if name == "" && area == "" && floor == "" && len(domains) == 0 && len(classes) == 0 {
		return r // HA refuses to target every device; nothing happens.
	}
	if (area != "" || floor != "") && s.placements == nil {
		r.Unresolved = append(r.Unresolved, "areas and floors could not be read from Home Assistant (its template API needs an administrator's token)")
		return r
	}
	var areaOK, floorOK bool
	for _, id := range s.order {
		st := s.states[id]
		if len(domains) > 0 && !slices.Contains(domains, st.Domain()) {
			continue
		}
		if name != "" && id != name && norm(st.Name()) != norm(name) {
			continue
		}
		if len(classes) > 0 && !slices.Contains(classes, st.DeviceClass()) {
			continue
		}
		if floor != "" || area != "" {
			p, placed := s.placements[id]
			if floor != "" {
				if !placed || !(p.FloorID == floor || (p.FloorName != "" && norm(p.FloorName) == norm(floor))) {
					continue
				}
				floorOK = true
			}
			if area != "" {
				if !placed || !(p.AreaID == area || norm(p.AreaName) == norm(area)) {
					continue
				}
				areaOK = true
			}
		}
		t, _ := s.target(id)
		r.Targets = append(r.Targets, t)
	}
	if len(r.Targets) == 0 {
		switch {
		case name != "":
			r.Unresolved = append(r.Unresolved, fmt.Sprintf("no entity is named %q here; Home Assistant may still match an alias", name))
		case area != "" && !areaOK:
			r.Unresolved = append(r.Unresolved, fmt.Sprintf("no entity of the area %q was found; Home Assistant may still match an area alias", area))
		case floor != "" && !floorOK:
			r.Unresolved = append(r.Unresolved, fmt.Sprintf("no entity of the floor %q was found; Home Assistant may still match a floor alias", floor))
		}
	}
	return r
}

// entityIDPattern finds entity ids in free-form configuration values.
var entityIDPattern = regexp.MustCompile(`\b([a-z0-9_]{1,64})\.([a-z0-9_]{1,200})\b`)

// servicePattern is a service in "domain.service" form.
var servicePattern = regexp.MustCompile(`^([a-z0-9_]{1,64})\.([a-z0-9_]{1,200})$`)

// Lookup returns a script's configuration by its key (nil when unknown).
type Lookup func(ctx context.Context, key string) (map[string]any, error)

// maxDepth bounds how deep scripts calling scripts are followed.
const maxDepth = 3

// Config resolves what a script, automation or scene configuration (as
// decoded JSON or YAML) would operate: the services it calls and the
// entities they target, the entities a scene sets, the scenes it activates
// and, through lookup, the scripts it runs. Entities that are only read
// (triggers, conditions) do not count. A template where a target or a
// service is named, a device target, a generic service aimed at an area or
// floor, or a script that cannot be read leaves it unresolved.
func (s *Snapshot) Config(ctx context.Context, cfg any, lookup Lookup) Resolution {
	var r Resolution
	seen := map[string]bool{}
	s.walkConfig(ctx, cfg, lookup, 0, seen, &r)
	r.finish()
	return r
}

func (r *Resolution) finish() {
	r.Targets = dedupe(r.Targets)
	sort.Strings(r.Services)
	r.Services = slices.Compact(r.Services)
	sort.Strings(r.Unresolved)
	r.Unresolved = slices.Compact(r.Unresolved)
	sort.Strings(r.domains)
	r.domains = slices.Compact(r.domains)
}

// walkConfig looks for what a configuration operates.
func (s *Snapshot) walkConfig(ctx context.Context, v any, lookup Lookup, depth int, seen map[string]bool, r *Resolution) {
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(v) {
			val := v[k]
			switch {
			case (k == "service" || k == "action") && isString(val):
				s.service(ctx, val.(string), v, lookup, depth, seen, r)
			case k == "scene" && isString(val):
				// The "scene:" action activates a scene.
				s.operated(val, r)
			case k == "entities":
				// A scene's entities, keyed by entity id.
				if m, ok := val.(map[string]any); ok {
					for _, id := range sortedMapKeys(m) {
						s.operated(id, r)
					}
				}
			default:
				s.walkConfig(ctx, val, lookup, depth, seen, r)
			}
		}
	case []any:
		for _, x := range v {
			s.walkConfig(ctx, x, lookup, depth, seen, r)
		}
	}
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// operated adds every existing entity named in v (a service call's target
// or data); a template there makes the call unresolved, an unknown entity
// id is kept by domain.
func (s *Snapshot) operated(v any, r *Resolution) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(v) {
			if k == "device_id" {
				r.Unresolved = append(r.Unresolved, "a device is targeted by id; its entities are not visible through the REST API")
			}
			n += s.operated(v[k], r)
		}
	case []any:
		for _, x := range v {
			n += s.operated(x, r)
		}
	case string:
		if strings.Contains(v, "{{") || strings.Contains(v, "{%") {
			r.Unresolved = append(r.Unresolved, "a target is chosen by a template")
			return 0
		}
		for _, m := range entityIDPattern.FindAllStringSubmatch(v, -1) {
			n++
			t, ok := s.target(m[0])
			if !ok {
				// Not (yet) in HA: its domain still says what it is.
				r.domains = append(r.domains, m[1])
				continue
			}
			r.Targets = append(r.Targets, t)
			if t.Domain == "scene" {
				s.sceneMembers(t.EntityID, r)
			}
		}
	}
	return n
}

// sceneMembers adds the entities a scene sets (its entity_id attribute).
func (s *Snapshot) sceneMembers(id string, r *Resolution) {
	members, _ := s.states[id].Attributes["entity_id"].([]any)
	for _, m := range members {
		if mid, ok := m.(string); ok {
			if t, ok := s.target(mid); ok {
				r.Targets = append(r.Targets, t)
			}
		}
	}
}

// service records one service call of a configuration: its domain, what
// it targets, and for generic or nested services what they reach.
func (s *Snapshot) service(ctx context.Context, svc string, call map[string]any, lookup Lookup, depth int, seen map[string]bool, r *Resolution) {
	if strings.Contains(svc, "{{") || strings.Contains(svc, "{%") {
		r.Unresolved = append(r.Unresolved, "a service is chosen by a template")
		return
	}
	m := servicePattern.FindStringSubmatch(svc)
	if m == nil {
		r.Unresolved = append(r.Unresolved, "a service name is not domain.service")
		return
	}
	domain, name := m[1], m[2]
	r.Services = append(r.Services, svc)
	before := len(r.Targets)
	named := 0
	for _, key := range []string{"target", "data", "entity_id", "service_data"} {
		named += s.operated(call[key], r)
	}
	switch domain {
	case "homeassistant":
		// turn_on/off/toggle reach any domain, covers and locks included.
		if named == 0 || mentions(call, "area_id", "floor_id", "device_id", "label_id") {
			r.Unresolved = append(r.Unresolved, "homeassistant."+name+" reaches the entities of an area, floor, device or label, which are not all known here")
		}
	case "script":
		r.Opaque = true
		keys := []string{name}
		if name == "turn_on" || name == "toggle" {
			keys = nil
			for _, t := range r.Targets[before:] {
				if t.Domain == "script" {
					_, k, _ := strings.Cut(t.EntityID, ".")
					keys = append(keys, k)
				}
			}
			if len(keys) == 0 {
				r.Unresolved = append(r.Unresolved, "script."+name+" without a script entity")
			}
		}
		for _, k := range keys {
			s.nested(ctx, k, lookup, depth, seen, r)
		}
	case "automation":
		if name == "trigger" {
			r.Opaque = true
			r.Unresolved = append(r.Unresolved, "automation.trigger runs another automation's actions")
		}
	case "scene":
		// Its entities were added with the scene target.
	default:
		r.domains = append(r.domains, domain)
	}
}

// nested follows a script that a configuration runs.
func (s *Snapshot) nested(ctx context.Context, key string, lookup Lookup, depth int, seen map[string]bool, r *Resolution) {
	if seen[key] {
		return
	}
	seen[key] = true
	if lookup == nil || depth+1 >= maxDepth {
		r.Unresolved = append(r.Unresolved, "script "+key+" runs further scripts")
		return
	}
	cfg, err := lookup(ctx, key)
	if err != nil || cfg == nil {
		r.Unresolved = append(r.Unresolved, "the configuration of script "+key+" could not be read")
		return
	}
	s.walkConfig(ctx, cfg, lookup, depth+1, seen, r)
}

func mentions(v any, keys ...string) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if slices.Contains(keys, k) || mentions(x, keys...) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if mentions(x, keys...) {
				return true
			}
		}
	}
	return false
}

func dedupe(ts []Target) []Target {
	sort.Slice(ts, func(i, j int) bool { return ts[i].EntityID < ts[j].EntityID })
	return slices.CompactFunc(ts, func(a, b Target) bool { return a.EntityID == b.EntityID })
}

// Script resolves a script the relay runs by its key: what its
// configuration operates. A script whose configuration cannot be read
// stays unresolved.
func (s *Snapshot) Script(ctx context.Context, key string, lookup Lookup) Resolution {
	var r Resolution
	r.Opaque = true
	if t, ok := s.target("script." + key); ok {
		r.Targets = append(r.Targets, t)
	}
	s.nested(ctx, key, lookup, 0, map[string]bool{}, &r)
	r.finish()
	return r
}

// Entities resolves the entity ids named anywhere in a tool's arguments
// (for tools whose effect is otherwise unknown).
func (s *Snapshot) Entities(args map[string]any) Resolution {
	var r Resolution
	s.operated(args, &r)
	r.finish()
	return r
}

// IsScript reports whether HA has the script script.<key>.
func (s *Snapshot) IsScript(key string) bool {
	_, ok := s.states["script."+key]
	return ok
}
