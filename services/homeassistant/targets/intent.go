package targets

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// IntentDomains are the domains an intent can act on whatever its slots
// say (its required domains, or the only domains its handler acts on);
// intents not listed can act on any. HA matches every exposed entity of
// an intent's required domains when no slot narrows them (they are a
// constraint of their own), so HassOpen without slots opens every exposed
// cover and valve. HassLock, HassUnlock, HassOpen, HassClose and HassPress
// are constrained aliases of turn on and off (components/intent
// _async_register_onoff_aliases).
var IntentDomains = map[string][]string{
	"HassLock":                  {"lock"},
	"HassUnlock":                {"lock"},
	"HassOpen":                  {"cover", "valve"},
	"HassClose":                 {"cover", "valve"},
	"HassPress":                 {"button", "input_button"},
	"HassLightSet":              {"light"},
	"HassSetPosition":           {"cover", "valve"},
	"HassStopMoving":            {"cover", "valve"},
	"HassOpenCover":             {"cover"},
	"HassCloseCover":            {"cover"},
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
	"HassClimateSetMode":        {"climate"},
	"HassFanSetSpeed":           {"fan"},
	"HassHumidifierSetpoint":    {"humidifier"},
	"HassHumidifierMode":        {"humidifier"},
	"HassVacuumStart":           {"vacuum"},
	"HassVacuumReturnToBase":    {"vacuum"},
	"HassLawnMowerStartMowing":  {"lawn_mower"},
	"HassLawnMowerDock":         {"lawn_mower"},
	"HassListAddItem":           {"todo"},
	"HassListCompleteItem":      {"todo"},
	"HassShoppingListAddItem":   {"todo"},
	"HassBroadcast":             {"assist_satellite"},
}

// runsScripts are the intents that turn their targets on: a script
// turned on runs, a scene turned on applies its members
// (components/intent OnOffIntentHandler: homeassistant.turn_on).
var runsScripts = map[string]bool{"HassTurnOn": true, "HassToggle": true}

// assistView is the Assist view laid over the states: one candidate per
// exposed entity, as async_match_targets sees it.
type assistView struct {
	cands []candidate
	// areaNames are an area's name and aliases as HA joins them, by area
	// id, where an exposed entity in it shows them.
	areaNames map[string]string
}

// candidate is an exposed entity. id is "" for an entity GetLiveContext
// lists that no state here matches (it still counts, by domain).
type candidate struct {
	id, domain, class string
	names             string
	namesKnown        bool
	areas             string
	areasKnown        bool
}

// SetAssist lays HA's Assist view over the snapshot; nil leaves it
// unknown, and then every intent addressed by name, area or floor is
// unresolved (an alias or an exposure this service cannot see might
// decide what HA acts on).
func (s *Snapshot) SetAssist(a *Assist) {
	if a == nil {
		s.assist = nil
		return
	}
	v := &assistView{areaNames: map[string]string{}}
	byDomain := map[string][]string{}
	for _, id := range s.order {
		d := s.states[id].Domain()
		byDomain[d] = append(byDomain[d], id)
	}
	for _, e := range a.entities {
		var ids []string
		for _, id := range byDomain[e.Domain] {
			n := s.states[id].Name()
			if e.Names == n || strings.HasPrefix(e.Names, n+", ") || norm(e.Names) == norm(n) {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			v.cands = append(v.cands, candidate{domain: e.Domain, class: e.DeviceClass, names: e.Names, namesKnown: true, areas: e.Areas, areasKnown: true})
			continue
		}
		for _, id := range ids {
			class := s.states[id].DeviceClass()
			if class == "" {
				class = e.DeviceClass
			}
			v.cands = append(v.cands, candidate{id: id, domain: e.Domain, class: class, names: e.Names, namesKnown: true, areas: e.Areas, areasKnown: true})
			if p, ok := s.placements[id]; ok && e.Areas != "" {
				v.areaNames[p.AreaID] = e.Areas
			}
		}
	}
	for id, info := range a.scripts {
		st, ok := s.states[id]
		if !ok {
			continue
		}
		names := strings.Join(append([]string{st.Name()}, info.aliases...), ", ")
		v.cands = append(v.cands, candidate{id: id, domain: "script", names: names, namesKnown: info.aliasesKnown})
	}
	sort.SliceStable(v.cands, func(i, j int) bool { return v.cands[i].id < v.cands[j].id })
	s.assist = v
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

// constraints are an intent's target slots.
type constraints struct {
	name, area, floor string
	domains, classes  []string
}

// Intent resolves the entities an Assist intent would act on, as HA's
// async_match_targets matches them for the MCP server's assistant: the
// exposed entities, by name (entity id, name or alias; "all" is any),
// domain, device class, area (id, name or alias) and floor. A name that
// several entities answer to means all of them (HA refuses such a call,
// but the preview does not count on it). Scripts turned on are resolved by
// what they run, scenes by their members, groups by theirs.
func (s *Snapshot) Intent(ctx context.Context, intent string, args map[string]any, lookup Lookup) Resolution {
	var r Resolution
	var c constraints
	var ok [5]bool
	c.name, ok[0] = slotString(args, "name")
	c.area, ok[1] = slotString(args, "area")
	c.floor, ok[2] = slotString(args, "floor")
	c.domains, ok[3] = slotStrings(args, "domain")
	c.classes, ok[4] = slotStrings(args, "device_class")
	if slices.Contains(ok[:], false) {
		r.unresolved("the target slots are not strings or lists of strings")
		return r
	}
	if len(c.domains) == 0 {
		c.domains = IntentDomains[intent]
	}
	if c.name == "all" {
		c.name = ""
	}
	if c.name == "" && c.area == "" && c.floor == "" && len(c.domains) == 0 && len(c.classes) == 0 {
		return r // HA refuses to target every device; nothing happens.
	}
	w := &walk{lookup: lookup, seen: map[string]bool{}}
	run := runsScripts[intent]
	if s.assist == nil {
		s.intentWithoutAssist(ctx, c, run, w, &r)
	} else {
		s.intentWithAssist(ctx, c, run, w, &r)
	}
	if len(r.Targets) == 0 && len(r.Unresolved) == 0 {
		// HA refuses a call that matches nothing; if it does not, it acts
		// on an entity this preview cannot see (one matched by a name
		// GetLiveContext does not list).
		r.unresolved("nothing shown here fits the call: Home Assistant refuses it, or acts on an entity this preview cannot see")
	}
	r.finish()
	return r
}

func (s *Snapshot) intentWithAssist(ctx context.Context, c constraints, run bool, w *walk, r *Resolution) {
	if c.floor != "" {
		r.note(fmt.Sprintf("floor aliases are not visible here: %q counts as any floor", c.floor))
	}
	var maybe []string
	named := 0
	for _, cand := range s.assist.cands {
		if len(c.domains) > 0 && !slices.Contains(c.domains, cand.domain) {
			continue
		}
		uncertain := false
		if c.name != "" {
			switch {
			case cand.id == c.name || joinedMatch(cand.names, c.name):
				named++
			case cand.namesKnown:
				continue
			default:
				uncertain = true
			}
		}
		if len(c.classes) > 0 && !slices.Contains(c.classes, cand.class) {
			continue
		}
		if c.floor != "" && !s.onAFloor(cand) {
			continue
		}
		if c.area != "" {
			in, perhaps := s.inArea(cand, c.area)
			if !in && !perhaps {
				continue
			}
			uncertain = uncertain || perhaps
		}
		if uncertain {
			maybe = append(maybe, cand.id)
		}
		if cand.id == "" {
			r.Targets = append(r.Targets, Target{Name: cand.names, Domain: cand.domain, DeviceClass: cand.class})
			continue
		}
		s.reach(ctx, cand.id, run, w, r)
	}
	if len(maybe) > 0 {
		r.note("counted because its aliases or its area's could not be read: " + strings.Join(maybe, ", "))
	}
	if c.name != "" && named == 0 {
		// HA matches an entity's registry name too, which GetLiveContext
		// may not show: one it alone matches is acted on.
		r.unresolved(fmt.Sprintf("no exposed entity answers to %q here; Home Assistant may still match an entity's own name", c.name))
	}
}

// onAFloor reports whether an exposed entity could be on some floor: it
// has an area on a floor (floor aliases are unknown here, so every floor
// might be the one named).
func (s *Snapshot) onAFloor(c candidate) bool {
	if s.placements == nil {
		return true
	}
	if c.id == "" {
		return c.areas != ""
	}
	p, placed := s.placements[c.id]
	return placed && p.FloorID != ""
}

// inArea reports whether an exposed entity is in the area HA would find
// by id, name or alias, or might be (its area's aliases unknown).
func (s *Snapshot) inArea(c candidate, area string) (in, perhaps bool) {
	p, placed := s.placements[c.id]
	if placed && p.AreaID == area {
		return true, false
	}
	names, known := c.areas, c.areasKnown
	if !known && placed {
		if n, ok := s.assist.areaNames[p.AreaID]; ok {
			names, known = n, true
		} else {
			names = p.AreaName
		}
	}
	if joinedMatch(names, area) {
		return true, false
	}
	switch {
	case !known && (placed || s.placements == nil):
		return false, true
	case known && names != "" && s.placements == nil && idLike.MatchString(area):
		// Its area's id is not visible; the slot may be it.
		return false, true
	}
	return false, false
}

// idLike is the shape of an area id.
var idLike = regexp.MustCompile(`^[a-z0-9_]{1,100}$`)

// intentWithoutAssist matches over every entity (exposure unknown), by
// entity id, friendly name, area and floor as the REST API shows them.
// Aliases are not visible, so anything addressed by name, area or floor
// stays unresolved.
func (s *Snapshot) intentWithoutAssist(ctx context.Context, c constraints, run bool, w *walk, r *Resolution) {
	if c.name != "" || c.area != "" || c.floor != "" {
		r.unresolved("Home Assistant's Assist view (which entities are exposed, their aliases and their areas' aliases) could not be read, so a name, area or floor may mean more than is listed")
	}
	if (c.area != "" || c.floor != "") && s.placements == nil {
		return
	}
	for _, id := range s.order {
		st := s.states[id]
		if len(c.domains) > 0 && !slices.Contains(c.domains, st.Domain()) {
			continue
		}
		if c.name != "" && id != c.name && norm(st.Name()) != norm(c.name) {
			continue
		}
		if len(c.classes) > 0 && !slices.Contains(c.classes, st.DeviceClass()) {
			continue
		}
		if c.floor != "" || c.area != "" {
			p, placed := s.placements[id]
			if !placed {
				continue
			}
			if c.floor != "" && !(p.FloorID == c.floor || (p.FloorName != "" && norm(p.FloorName) == norm(c.floor))) {
				continue
			}
			if c.area != "" && !(p.AreaID == c.area || norm(p.AreaName) == norm(c.area)) {
				continue
			}
		}
		s.reach(ctx, id, run, w, r)
	}
}
