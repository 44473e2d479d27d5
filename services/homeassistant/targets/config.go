package targets

import (
	"context"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// servicePattern is a service in "domain.service" form.
var servicePattern = regexp.MustCompile(`^([a-z0-9_]{1,64})\.([a-z0-9_]{1,200})$`)

// Config resolves what a script, automation or scene configuration (as
// decoded JSON or YAML) would operate: the services it calls and the
// entities they target (entity ids, "all", areas, floors, devices and
// labels expanded to their entities, groups to their members), the
// entities a scene sets, the scenes it activates, device actions and,
// through lookup, the scripts it runs. Entities that are only read
// (triggers, conditions) do not count. A template where a target or a
// service is named, or a target that cannot be expanded here (areas
// without an administrator's token) leaves it unresolved.
func (s *Snapshot) Config(ctx context.Context, cfg any, lookup Lookup) Resolution {
	var r Resolution
	s.walkConfig(ctx, cfg, &walk{lookup: lookup, seen: map[string]bool{}}, &r)
	r.finish()
	return r
}

// walkConfig looks for what a configuration operates.
func (s *Snapshot) walkConfig(ctx context.Context, v any, w *walk, r *Resolution) {
	switch v := v.(type) {
	case map[string]any:
		if isDeviceAction(v) {
			s.deviceAction(ctx, v, w, r)
			return
		}
		for _, k := range sortedMapKeys(v) {
			val := v[k]
			switch {
			case (k == "service" || k == "action" || k == "service_template") && isString(val):
				s.service(ctx, val.(string), v, w, r)
			case k == "use_blueprint":
				// The actions are in the blueprint file, which is not
				// readable here; its inputs name what it is given.
				r.Opaque = true
				r.unresolved("made from a blueprint, whose actions are not visible here")
				if bp, ok := val.(map[string]any); ok {
					s.mentioned(ctx, bp["input"], "", true, w, r)
				}
			case k == "scene" && isString(val):
				// The "scene:" action activates a scene.
				s.mentioned(ctx, val, "scene", true, w, r)
			case k == "entities":
				// A scene's entities, keyed by entity id.
				if m, ok := val.(map[string]any); ok {
					for _, id := range sortedMapKeys(m) {
						s.mentioned(ctx, id, "", true, w, r)
					}
				}
			default:
				s.walkConfig(ctx, val, w, r)
			}
		}
	case []any:
		for _, x := range v {
			s.walkConfig(ctx, x, w, r)
		}
	}
}

// isDeviceAction: a device action ({device_id, domain, type}) operates the
// device itself (a lock's unlock); device triggers and conditions carry a
// platform, trigger or condition key instead.
func isDeviceAction(m map[string]any) bool {
	if _, ok := m["device_id"]; !ok {
		return false
	}
	if !isString(m["domain"]) || !isString(m["type"]) {
		return false
	}
	for _, k := range []string{"platform", "trigger", "condition"} {
		if _, ok := m[k]; ok {
			return false
		}
	}
	return true
}

func (s *Snapshot) deviceAction(ctx context.Context, m map[string]any, w *walk, r *Resolution) {
	domain := m["domain"].(string)
	if !servicePattern.MatchString(domain + ".x") {
		r.unresolved("a device action names no domain")
		return
	}
	r.domains = append(r.domains, domain)
	s.targetKey(ctx, "device_id", m["device_id"], domain, true, w, r)
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

func isTemplate(s string) bool { return strings.Contains(s, "{{") || strings.Contains(s, "{%") }

// service records one service call of a configuration: its domain, what
// it targets, and for generic or nested services what they reach.
func (s *Snapshot) service(ctx context.Context, svc string, call map[string]any, w *walk, r *Resolution) {
	if isTemplate(svc) {
		r.unresolved("a service is chosen by a template")
		return
	}
	m := servicePattern.FindStringSubmatch(svc)
	if m == nil {
		r.unresolved("a service name is not domain.service")
		return
	}
	domain, name := m[1], m[2]
	r.Services = append(r.Services, svc)
	// A script turned off, a scene or group turned off: nothing runs.
	run := name != "turn_off" && name != "stop"
	named := 0
	for _, key := range []string{"target", "data", "data_template", "entity_id", "service_data", "area_id", "floor_id", "device_id", "label_id"} {
		if v, ok := call[key]; ok {
			named += s.mentionedKey(ctx, key, v, domain, run, w, r)
		}
	}
	switch domain {
	case "homeassistant":
		// turn_on/off/toggle reach any domain, covers and locks included.
		if named == 0 {
			r.unresolved("homeassistant." + name + " without a target")
		}
	case "script":
		r.Opaque = true
		if name != "turn_on" && name != "toggle" && name != "turn_off" && name != "reload" {
			// script.<key> runs that script.
			if t, ok := s.target("script." + name); ok {
				r.Targets = append(r.Targets, t)
			}
			s.nested(ctx, name, w, r)
		} else if named == 0 && name != "turn_off" && name != "reload" {
			r.unresolved("script." + name + " without a script entity")
		}
	case "automation":
		if name == "trigger" {
			r.Opaque = true
			r.unresolved("automation.trigger runs another automation's actions")
		}
	case "scene":
		// Its entities were added with the scene target.
	case "python_script", "pyscript", "shell_command", "rest_command":
		// Code or a request: it may call any service itself.
		r.Opaque = true
		r.domains = append(r.domains, domain)
		r.unresolved(svc + " runs code whose effect is not in the call")
	default:
		r.domains = append(r.domains, domain)
	}
}

// mentionedKey resolves one value of a service call: target forms under
// their keys, anything else by the entity ids it names.
func (s *Snapshot) mentionedKey(ctx context.Context, key string, v any, domain string, run bool, w *walk, r *Resolution) int {
	switch key {
	case "entity_id", "area_id", "floor_id", "device_id", "label_id":
		return s.targetKey(ctx, key, v, domain, run, w, r)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return s.mentioned(ctx, v, domain, run, w, r)
	}
	n := 0
	for _, k := range sortedMapKeys(m) {
		n += s.mentionedKey(ctx, k, m[k], domain, run, w, r)
	}
	return n
}

// targetKey expands one target form as async_extract_referenced_entity_ids
// does: entity ids (groups by their members), "all" (every entity of the
// service's domain), areas (their entities and their devices' entities),
// floors (their areas), devices and labels (their entities, devices and
// areas). Entities reached indirectly count only in the service's domain
// (homeassistant.* reaches every domain).
func (s *Snapshot) targetKey(ctx context.Context, key string, v any, domain string, run bool, w *walk, r *Resolution) int {
	ids, ok := idList(v)
	if !ok {
		// Not a string or a list of strings: look for entity ids in it.
		return s.mentioned(ctx, v, domain, run, w, r)
	}
	n := 0
	for _, id := range ids {
		if isTemplate(id) {
			r.unresolved("a target is chosen by a template")
			continue
		}
		if key == "entity_id" {
			// config_validation.py entity_id (and vol.Lower for all and
			// none): HA looks the id up lower-cased.
			id = strings.ToLower(id)
		}
		if id == "none" {
			continue
		}
		n++
		switch key {
		case "entity_id":
			if id == "all" {
				s.all(ctx, domain, run, w, r)
				continue
			}
			s.mentioned(ctx, id, domain, run, w, r)
		case "area_id":
			s.inAreas(ctx, []string{id}, domain, run, w, r)
		case "floor_id":
			if s.placements == nil {
				r.unresolved("a floor is targeted and areas could not be read (Home Assistant's template API needs an administrator's token)")
				continue
			}
			for _, eid := range s.order {
				if p, ok := s.placements[eid]; ok && p.FloorID == id && inDomain(eid, domain) {
					s.reach(ctx, eid, run, w, r)
				}
			}
		case "device_id":
			if !s.expand(ctx, []string{id}, nil, r) {
				continue
			}
			for _, eid := range s.devices[id] {
				if inDomain(eid, domain) {
					s.reach(ctx, eid, run, w, r)
				}
			}
		case "label_id":
			if !s.expand(ctx, nil, []string{id}, r) {
				continue
			}
			for _, eid := range s.labels[id] {
				if inDomain(eid, domain) {
					s.reach(ctx, eid, run, w, r)
				}
			}
			s.inAreas(ctx, s.labelAreas[id], domain, run, w, r)
		}
	}
	return n
}

// idList reads a target value: a string (comma-separated ids allowed, as
// HA's comp_entity_ids) or a list of strings.
func idList(v any) ([]string, bool) {
	switch v := v.(type) {
	case string:
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		if isTemplate(v) {
			return []string{v}, true
		}
		return out, true
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, false
			}
			out = append(out, strings.TrimSpace(s))
		}
		return out, true
	}
	return nil, false
}

// inDomain: an entity reached indirectly counts for a service of its own
// domain, or for homeassistant.* (which reaches every domain); a service
// whose domain is unknown here counts every entity.
func inDomain(id, domain string) bool {
	d, _, _ := strings.Cut(id, ".")
	return domain == "" || domain == "homeassistant" || d == domain
}

// all reaches every entity of a domain (entity_id: all).
func (s *Snapshot) all(ctx context.Context, domain string, run bool, w *walk, r *Resolution) {
	for _, id := range s.order {
		if inDomain(id, domain) {
			s.reach(ctx, id, run, w, r)
		}
	}
	if domain != "homeassistant" && domain != "" {
		r.domains = append(r.domains, domain)
	}
}

// inAreas reaches the entities of areas (an entity's own area, else its
// device's, as the area map shows it).
func (s *Snapshot) inAreas(ctx context.Context, areas []string, domain string, run bool, w *walk, r *Resolution) {
	if len(areas) == 0 {
		return
	}
	if s.placements == nil {
		r.unresolved("an area is targeted and areas could not be read (Home Assistant's template API needs an administrator's token)")
		return
	}
	for _, eid := range s.order {
		if p, ok := s.placements[eid]; ok && slices.Contains(areas, p.AreaID) && inDomain(eid, domain) {
			s.reach(ctx, eid, run, w, r)
		}
	}
}

// expand reads the entities of devices and labels not read yet; false
// (and unresolved) when HA cannot tell.
func (s *Snapshot) expand(ctx context.Context, devices, labels []string, r *Resolution) bool {
	var needD, needL []string
	for _, d := range devices {
		if _, ok := s.devices[d]; !ok {
			needD = append(needD, d)
		}
	}
	for _, l := range labels {
		if _, ok := s.labels[l]; !ok {
			needL = append(needL, l)
		}
	}
	if len(needD)+len(needL) == 0 {
		return true
	}
	if s.expandErr == nil && s.ha != nil {
		exp, err := s.ha.Expand(ctx, needD, needL)
		if err == nil {
			for _, d := range needD {
				s.devices[d] = exp.Devices[d]
			}
			for _, l := range needL {
				s.labels[l] = exp.Labels[l]
				s.labelAreas[l] = exp.LabelAreas[l]
			}
			return true
		}
		s.expandErr = err
	}
	if r != nil {
		r.unresolved("a device or label is targeted and its entities could not be read (Home Assistant's template API needs an administrator's token)")
	}
	return false
}

// mentioned reaches every existing entity named in v (a string, or any
// value or map key in a structure); a template there makes the call
// unresolved, an unknown entity id is kept by its domain. It returns how
// many entity ids it found.
func (s *Snapshot) mentioned(ctx context.Context, v any, domain string, run bool, w *walk, r *Resolution) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedMapKeys(v) {
			switch k {
			case "entity_id", "area_id", "floor_id", "device_id", "label_id":
				n += s.targetKey(ctx, k, v[k], domain, run, w, r)
				continue
			}
			if m := entityIDPattern.FindString(k); m == k {
				n++
				s.reach(ctx, k, run, w, r)
			}
			n += s.mentioned(ctx, v[k], domain, run, w, r)
		}
	case []any:
		for _, x := range v {
			n += s.mentioned(ctx, x, domain, run, w, r)
		}
	case string:
		if isTemplate(v) {
			r.unresolved("a target is chosen by a template")
			return 0
		}
		for _, m := range entityIDPattern.FindAllString(v, -1) {
			n++
			s.reach(ctx, m, run, w, r)
		}
	}
	return n
}
