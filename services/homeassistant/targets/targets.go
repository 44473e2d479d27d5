// Package targets works out what a Home Assistant action would touch, for
// the previews of writes: the entities an Assist intent would act on
// (matched the way HA's async_match_targets matches them: exposed
// entities, by name or alias, area, floor, domain and device class), and
// the entities and services a script, automation or scene operates (their
// targets expanded as HA's async_extract_referenced_entity_ids expands
// them: entity ids, "all", areas, floors, devices and labels, groups and
// scene members, scripts they run). It reports small facts about them
// (domains, device classes, whether anything stayed unknown) that the
// gateway hands to the policy before it issues a ticket.
//
// Every gap errs on the side of more: what cannot be told from here makes
// the resolution unresolved (which the shipped policy sends to a person),
// and what can only be bounded (a floor's aliases are not visible) counts
// every entity it might reach.
package targets

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

// MaxListed bounds the targets a preview lists; the facts still count all.
const MaxListed = 50

// maxTargets bounds what one resolution collects (members, expansions).
const maxTargets = 20000

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
	// Notes say how the targets were bounded (they change no fact).
	Notes []string
	// Opaque: what the write does is not visible from here (a script, a
	// tool of unknown effect), even when its targets are.
	Opaque bool
	// domains seen without an entity (a service call's domain).
	domains []string
	// reached: entity ids already added (members and scripts are followed
	// once).
	reached map[string]bool
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
// "script", "service", "config", "tool", "unknown"), domains,
// device_classes, unresolved and opaque. Lists past the facts' bounds make
// the resolution unresolved rather than silently short.
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

func (r *Resolution) unresolved(why string) { r.Unresolved = append(r.Unresolved, why) }

func (r *Resolution) note(why string) { r.Notes = append(r.Notes, why) }

func (r *Resolution) finish() {
	r.Targets = dedupe(r.Targets)
	for _, s := range []*[]string{&r.Services, &r.Unresolved, &r.Notes, &r.domains} {
		sort.Strings(*s)
		*s = slices.Compact(*s)
	}
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dedupe(ts []Target) []Target {
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].EntityID < ts[j].EntityID })
	return slices.CompactFunc(ts, func(a, b Target) bool { return a.EntityID == b.EntityID && a.EntityID != "" })
}

// Snapshot is Home Assistant's states (and, when asked for, the area and
// floor of every entity, and its Assist view) at one moment.
type Snapshot struct {
	states map[string]hass.State
	order  []string
	// placements is nil when they could not be read (a token that is not
	// an administrator's); areaErr says why.
	placements map[string]hass.Placement
	areaErr    error
	// assist is nil when Home Assistant's Assist view is not known.
	assist *assistView
	// expansions of device and label targets, read on demand.
	devices, labels, labelAreas map[string][]string
	expandErr                   error
	ha                          *hass.Client
}

// Take reads the states, and the placements when withAreas.
func Take(ctx context.Context, ha *hass.Client, withAreas bool) (*Snapshot, error) {
	states, err := ha.States(ctx)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{states: make(map[string]hass.State, len(states)), ha: ha,
		devices: map[string][]string{}, labels: map[string][]string{}, labelAreas: map[string][]string{}}
	for _, st := range states {
		if !hass.ValidEntityID(st.EntityID) {
			continue
		}
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

// IsScript reports whether HA has the script script.<key>.
func (s *Snapshot) IsScript(key string) bool {
	_, ok := s.states["script."+key]
	return ok
}

// entityIDPattern finds entity ids in free-form configuration values.
var entityIDPattern = regexp.MustCompile(`\b([a-z0-9_]{1,64})\.([a-z0-9_]{1,200})\b`)

// Lookup returns a script's configuration by its key (nil when unknown).
type Lookup func(ctx context.Context, key string) (map[string]any, error)

// maxDepth bounds how deep scripts calling scripts are followed.
const maxDepth = 3

// walk carries what a resolution follows: scripts already read and how
// deep.
type walk struct {
	lookup Lookup
	depth  int
	seen   map[string]bool
}

// reach adds an entity the write acts on, and what acting on it reaches:
// the members of a group or scene (entities with an entity_id list) and,
// when it is run (turned on), what a script does.
func (s *Snapshot) reach(ctx context.Context, id string, run bool, w *walk, r *Resolution) {
	if r.reached == nil {
		r.reached = map[string]bool{}
	}
	if r.reached[id] {
		return
	}
	if len(r.reached) >= maxTargets {
		r.unresolved("the write reaches more entities than can be listed")
		return
	}
	r.reached[id] = true
	t, ok := s.target(id)
	if !ok {
		// Not (yet) in HA: its domain still says what it is.
		if m := entityIDPattern.FindStringSubmatch(id); m != nil && m[0] == id {
			r.domains = append(r.domains, m[1])
		}
		return
	}
	r.Targets = append(r.Targets, t)
	if t.Domain == "script" && run {
		r.Opaque = true
		_, key, _ := strings.Cut(id, ".")
		s.nested(ctx, key, w, r)
	}
	// Groups (old-style and entity groups) and scenes list their members.
	members, listed := s.states[id].Attributes["entity_id"].([]any)
	if t.Domain == "scene" && run && !listed {
		// An integration's scene (Hue, KNX) keeps what it sets to itself.
		r.unresolved("scene " + id + " does not list the entities it sets")
	}
	for _, m := range members {
		if mid, ok := m.(string); ok {
			s.reach(ctx, mid, run, w, r)
		}
	}
}

// nested follows a script that is run: what its configuration operates.
func (s *Snapshot) nested(ctx context.Context, key string, w *walk, r *Resolution) {
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	if w.lookup == nil || w.depth+1 >= maxDepth {
		r.unresolved("script " + key + " runs further scripts")
		return
	}
	cfg, err := w.lookup(ctx, key)
	if err != nil || cfg == nil {
		r.unresolved("the configuration of script " + key + " could not be read")
		return
	}
	inner := &walk{lookup: w.lookup, depth: w.depth + 1, seen: w.seen}
	s.walkConfig(ctx, cfg, inner, r)
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
	s.nested(ctx, key, &walk{lookup: lookup, seen: map[string]bool{}}, &r)
	r.finish()
	return r
}

// Entities resolves the entity ids named anywhere in a tool's arguments
// (for tools whose effect is otherwise unknown).
func (s *Snapshot) Entities(ctx context.Context, args map[string]any, lookup Lookup) Resolution {
	var r Resolution
	w := &walk{lookup: lookup, seen: map[string]bool{}}
	s.mentioned(ctx, args, "", true, w, &r)
	r.finish()
	return r
}
