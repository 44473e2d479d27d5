package targets

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
)

// scene.apply sets the states it is given, keyed by entity id
// (components/homeassistant/scene.py, SCENE_APPLY: a lock set to
// "unlocked" is unlocked); scene.create only stores them. Whether called
// directly or from a script, the entities it sets count. (Before, the
// preview walked the values "unlocked", found no entity and reported
// nothing, so the script needed only the model's word.)
func TestSceneApplyCountsTheEntitiesItSets(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	apply := map[string]any{"action": "scene.apply", "data": map[string]any{
		"entities": map[string]any{"lock.front_door": "unlocked", "cover.garage_door": map[string]any{"state": "open"}}}}
	checkFacts(t, s.Config(t.Context(), []any{apply}, h.lookup()), "service",
		factCase{domains: []string{"cover", "lock"}, classes: []string{"cover.garage"}})

	h.writeScripts(t, "let_in:\n  sequence:\n    - action: scene.apply\n      data:\n        entities:\n          lock.front_door: unlocked\n")
	checkFacts(t, s.Script(t.Context(), "let_in", h.lookup()), "script", factCase{domains: []string{"lock"}})
}

// The service-call schema still takes the older keys (config_validation.py
// SERVICE_SCHEMA: service_template next to action/service, data_template
// next to data), and HA's service helper reads targets from either. A
// script written with them reaches what it names.
func TestLegacyServiceKeysAreRead(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	cases := []struct {
		name string
		step map[string]any
		want factCase
	}{
		{"service_template", map[string]any{"service_template": "lock.unlock", "entity_id": "lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"a templated service_template", map[string]any{"service_template": "{{ 'lock.unlock' }}", "entity_id": "lock.front_door"}, factCase{unresolved: true}},
		{"data_template naming the scene", map[string]any{"service": "scene.turn_on", "data_template": map[string]any{"entity_id": "scene.movie_time"}},
			factCase{domains: []string{"cover", "light", "scene"}, classes: []string{"cover.blind"}}},
		{"data_template naming the script", map[string]any{"service": "script.turn_on", "data_template": map[string]any{"entity_id": "script.good_night"}},
			factCase{domains: []string{"light", "lock", "script"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkFacts(t, s.Config(t.Context(), map[string]any{"sequence": []any{c.step}}, h.lookup()), "config", c.want)
		})
	}
}

// A script or automation made from a blueprint is stored as use_blueprint
// with its inputs; the actions live in the blueprint, which this service
// cannot read. Its entities count, and it stays unresolved.
func TestABlueprintsActionsAreUnresolved(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	h.writeScripts(t, "door_helper:\n  alias: Door helper\n  use_blueprint:\n    path: homeassistant/confirmable_notification.yaml\n    input:\n      door: lock.front_door\n")
	checkFacts(t, s.Script(t.Context(), "door_helper", h.lookup()), "script", factCase{domains: []string{"lock"}, unresolved: true})
}

// python_script, pyscript, shell_command and rest_command run code or
// requests whose effect is not in the call (a python_script may call
// lock.unlock itself): unresolved.
func TestServicesThatRunCodeAreUnresolved(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	for _, svc := range []string{"python_script.open_up", "pyscript.open_up", "shell_command.open_up", "rest_command.open_up"} {
		t.Run(svc, func(t *testing.T) {
			r := s.Config(t.Context(), map[string]any{"sequence": []any{map[string]any{"action": svc}}}, h.lookup())
			if f := r.Facts("config"); f["unresolved"] != true || f["opaque"] != true {
				t.Errorf("%s: %v", svc, f)
			}
		})
	}
}

// The intents Home Assistant registers as constrained aliases of turn on
// and off (components/intent _async_register_onoff_aliases: HassLock and
// HassUnlock on locks, HassOpen and HassClose on covers and valves,
// HassPress on buttons) carry required domains, so HA acts on every
// exposed entity of those domains even when no slot names one. (Before,
// the preview read empty slots as "HA refuses" and HassOpen {} — every
// garage door and water valve — needed only the model's word.)
func TestConstrainedIntentsReachTheirRequiredDomains(t *testing.T) {
	h := newHome(t, false, func(o *fakehass.Options) {
		o.Entities = append(o.Entities,
			fakehass.Entity{ID: "valve.water_main", Name: "Water Main", State: "open", Area: "garage", Exposed: true,
				Attributes: map[string]any{"device_class": "water"}},
			fakehass.Entity{ID: "button.doorbell", Name: "Doorbell", State: "unknown", Area: "hallway", Exposed: true},
		)
	})
	s := h.snapshot(t, false)
	cases := []struct {
		intent string
		args   map[string]any
		ids    []string
		want   factCase
	}{
		{"HassOpen", map[string]any{}, []string{"cover.garage_door", "cover.living_room_blinds", "valve.water_main"},
			factCase{domains: []string{"cover", "valve"}, classes: []string{"cover.blind", "cover.garage", "valve.water"}}},
		{"HassClose", map[string]any{"area": "Garage"}, []string{"cover.garage_door", "valve.water_main"},
			factCase{domains: []string{"cover", "valve"}, classes: []string{"cover.garage", "valve.water"}}},
		{"HassUnlock", map[string]any{}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"HassLock", map[string]any{"area": "Hallway"}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"HassPress", map[string]any{}, []string{"button.doorbell"}, factCase{domains: []string{"button"}}},
	}
	for _, c := range cases {
		t.Run(c.intent, func(t *testing.T) {
			r := s.Intent(t.Context(), c.intent, c.args, h.lookup())
			if got := ids(r); !slices.Equal(got, c.ids) {
				t.Errorf("targets %v, want %v", got, c.ids)
			}
			checkFacts(t, r, "intent", c.want)
		})
	}
}

// An intent that names something but matches none of the exposed
// entities shown here: Home Assistant either refuses it or acts on an
// entity this preview cannot see (one it matches by a name that
// GetLiveContext did not list). Unresolved, even when the name alone
// matched some entity that the other slots then ruled out. (Before, a
// light called "Door" in the kitchen made {name: Door, area: Hallway}
// "resolved, no targets", and HassTurnOff — a low-risk tool — applied.)
func TestAnIntentMatchingNothingShownIsUnresolved(t *testing.T) {
	h := newHome(t, false, func(o *fakehass.Options) {
		o.Entities = append(o.Entities, fakehass.Entity{ID: "light.door", Name: "Door", State: "off", Area: "kitchen", Exposed: true})
	})
	s := h.snapshot(t, false)
	for _, args := range []map[string]any{
		{"name": "Door", "area": "Hallway"},
		{"name": "Door", "domain": "lock"},
		{"name": "Door", "device_class": "garage"},
		{"area": "Attic"},
		{"domain": "lock", "area": "Garage"},
	} {
		r := s.Intent(t.Context(), "HassTurnOff", args, h.lookup())
		if len(r.Targets) != 0 || r.Facts("intent")["unresolved"] != true {
			t.Errorf("%v: targets %v, facts %v", args, ids(r), r.Facts("intent"))
		}
	}
}

// Home Assistant strips a name with Python's str.strip(), whose blanks
// include the separators \x1c–\x1f that Go's unicode.IsSpace does not
// know: an alias written with one still answers to the plain name.
func TestNamesAreStrippedAsPythonStripsThem(t *testing.T) {
	for _, c := range []struct{ joined, name string }{
		{"Front Door, Gate\x1f", "gate"},
		{"Front Door", "\x1cfront door\x1e"},
		{"Front Door", "\u3000Front Door\u00a0"},
	} {
		if !joinedMatch(c.joined, c.name) {
			t.Errorf("%q does not answer to %q", c.joined, c.name)
		}
	}
	if joinedMatch("Front Door", "Front\x1fDoor") {
		t.Error("a separator inside a name was stripped")
	}
}

// A scene that does not list its entities (an integration's scene, a
// Hue or KNX scene, has no entity_id attribute) may set anything when
// turned on: unresolved. A scene that lists them is resolved by them.
func TestASceneThatHidesItsEntitiesIsUnresolved(t *testing.T) {
	h := newHome(t, false, func(o *fakehass.Options) {
		o.Entities = append(o.Entities, fakehass.Entity{ID: "scene.relax", Name: "Relax", State: "unknown", Area: "living_room", Exposed: true,
			Attributes: map[string]any{"group_name": "Living room", "is_dynamic": false}})
	})
	s := h.snapshot(t, false)
	if r := s.Intent(t.Context(), "HassTurnOn", map[string]any{"name": "Relax"}, h.lookup()); r.Facts("intent")["unresolved"] != true {
		t.Errorf("a scene without members: %v", r.Facts("intent"))
	}
	if r := s.Intent(t.Context(), "HassTurnOff", map[string]any{"name": "Relax"}, h.lookup()); r.Facts("intent")["unresolved"] != false {
		t.Errorf("turning a scene off applies nothing: %v %v", r.Facts("intent"), r.Unresolved)
	}
	if r := s.Intent(t.Context(), "HassTurnOn", map[string]any{"name": "Movie time"}, h.lookup()); r.Facts("intent")["unresolved"] != false {
		t.Errorf("a scene with members: %v", r.Unresolved)
	}
}

// HA lower-cases an entity id in a service call before it looks it up
// (config_validation.py entity_id and comp_entity_ids, vol.Lower for
// "all"): COVER.GARAGE_DOOR is the garage door. (Before, the preview's
// lower-case pattern found nothing, so cover.open_cover at it reported a
// plain cover and the garage opened on the model's word.)
func TestEntityIDsAreReadLowerCasedAsHomeAssistantReadsThem(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	call := func(action string, target any) any {
		return map[string]any{"sequence": []any{map[string]any{"action": action, "target": map[string]any{"entity_id": target}}}}
	}
	cases := []struct {
		name string
		cfg  any
		want factCase
	}{
		{"upper-case id", call("cover.open_cover", "COVER.GARAGE_DOOR"), factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}},
		{"mixed case in a list", call("homeassistant.turn_off", []any{"Lock.Front_Door"}), factCase{domains: []string{"lock"}}},
		{"a scene", call("scene.turn_on", "SCENE.MOVIE_TIME"), factCase{domains: []string{"cover", "light", "scene"}, classes: []string{"cover.blind"}}},
		{"a script", call("script.turn_on", "Script.Good_Night"), factCase{domains: []string{"light", "lock", "script"}}},
		{"ALL", call("cover.open_cover", "ALL"), factCase{domains: []string{"cover"}, classes: []string{"cover.blind", "cover.garage"}}},
		{"the old entity_id key", map[string]any{"sequence": []any{map[string]any{"service": "cover.open_cover", "entity_id": "COVER.GARAGE_DOOR"}}},
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkFacts(t, s.Config(t.Context(), c.cfg, h.lookup()), "config", c.want)
		})
	}
}
