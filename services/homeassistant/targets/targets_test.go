package targets

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const token = "targets-test-token-0123456789"

// home is a fake HA with the demo home, edited by the test.
type home struct {
	fake *fakehass.Fake
	ha   *hass.Client
	dir  string
}

func newHome(t *testing.T, notAdmin bool, edit func(*fakehass.Options)) *home {
	t.Helper()
	dir := t.TempDir()
	if err := fakehass.SeedConfig(dir); err != nil {
		t.Fatal(err)
	}
	o := fakehass.DemoHome(fakehass.Options{Token: token, ConfigDir: dir, NotAdmin: notAdmin})
	if edit != nil {
		edit(&o)
	}
	f := fakehass.New(o)
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	up, err := upstream.New(upstream.Config{BaseURL: srv.URL, AllowHTTP: true, Header: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	return &home{fake: f, ha: hass.New(up), dir: dir}
}

// scriptTool is a script's tool name in the fake's bare scheme.
var scriptTool = regexp.MustCompile(`^_?[a-z0-9_]+$`)

// snapshot reads the states, the area map and, unless blind, the Assist
// view the relay reads (GetLiveContext and the exposed scripts' tools).
func (h *home) snapshot(t *testing.T, blind bool) *Snapshot {
	t.Helper()
	s, err := Take(t.Context(), h.ha, true)
	if err != nil {
		t.Fatal(err)
	}
	if !blind {
		a, err := ParseLiveContext(h.fake.LiveContext())
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range h.fake.Tools() {
			name := tl["name"].(string)
			if scriptTool.MatchString(name) && name != "todo_get_items" {
				desc, _ := tl["description"].(string)
				a.AddScript("script."+strings.TrimPrefix(name, "_"), desc)
			}
		}
		s.SetAssist(a)
	}
	return s
}

func (h *home) lookup() Lookup {
	return func(ctx context.Context, key string) (map[string]any, error) { return h.ha.ScriptConfig(ctx, key) }
}

// writeScripts replaces scripts.yaml.
func (h *home) writeScripts(t *testing.T, yaml string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.dir, "scripts.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
}

func ids(r Resolution) []string {
	var out []string
	for _, t := range r.Targets {
		out = append(out, t.EntityID)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type factCase struct {
	domains    []string
	classes    []string
	unresolved bool
}

func checkFacts(t *testing.T, r Resolution, kind string, want factCase) {
	t.Helper()
	f := r.Facts(kind)
	if got := f["domains"].([]string); !slices.Equal(got, nonNil(want.domains)) {
		t.Errorf("domains %v, want %v", got, want.domains)
	}
	if got := f["device_classes"].([]string); !slices.Equal(got, nonNil(want.classes)) {
		t.Errorf("device classes %v, want %v", got, want.classes)
	}
	if f["unresolved"] != want.unresolved {
		t.Errorf("unresolved = %v (%s), want %v", f["unresolved"], strings.Join(r.Unresolved, "; "), want.unresolved)
	}
	if err := f.Validate(); err != nil {
		t.Error(err)
	}
}

// An intent's targets are found however the call addresses them — among
// the entities exposed to Assist, by name or alias, area (id, name or
// alias), floor, domain and device class — and the facts name their
// domains and device classes.
func TestIntentTargets(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	cases := []struct {
		name   string
		intent string
		args   map[string]any
		ids    []string
		want   factCase
	}{
		{"lock by name", "HassTurnOff", map[string]any{"name": "front door"}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"lock by alias", "HassTurnOff", map[string]any{"name": "Main Door"}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"lock by entity id", "HassTurnOn", map[string]any{"name": "lock.front_door"}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"everything exposed in an area", "HassTurnOn", map[string]any{"area": "Hallway"}, []string{"alarm_control_panel.home_alarm", "binary_sensor.front_door_contact", "climate.thermostat", "lock.front_door"},
			factCase{domains: []string{"alarm_control_panel", "binary_sensor", "climate", "lock"}, classes: []string{"binary_sensor.door"}}},
		{"lock by domain only", "HassTurnOn", map[string]any{"domain": []any{"lock"}}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"lock by domain string and area id", "HassTurnOn", map[string]any{"domain": "lock", "area": "hallway"}, []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"garage by device class on a floor", "HassTurnOn", map[string]any{"floor": "Ground Floor", "device_class": []any{"garage"}}, []string{"cover.garage_door"},
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}},
		{"garage area", "HassTurnOn", map[string]any{"area": "garage"}, []string{"cover.garage_door", "light.garage_light"},
			factCase{domains: []string{"cover", "light"}, classes: []string{"cover.garage"}}},
		{"area alias", "HassTurnOn", map[string]any{"area": "lounge", "domain": []any{"cover"}}, []string{"cover.living_room_blinds"},
			factCase{domains: []string{"cover"}, classes: []string{"cover.blind"}}},
		{"lights of an area", "HassLightSet", map[string]any{"area": "living_room", "brightness": 50}, []string{"light.living_room_lamp"}, factCase{domains: []string{"light"}}},
		{"all lights", "HassTurnOff", map[string]any{"name": "all", "domain": []any{"light"}},
			[]string{"light.bedroom_light", "light.garage_light", "light.kitchen_ceiling", "light.living_room_lamp"}, factCase{domains: []string{"light"}}},
		{"a floor alias counts as any floor", "HassTurnOn", map[string]any{"floor": "downstairs", "domain": []any{"cover"}}, []string{"cover.garage_door", "cover.living_room_blinds"},
			factCase{domains: []string{"cover"}, classes: []string{"cover.blind", "cover.garage"}}},
		{"an unexposed entity is not a target", "HassTurnOn", map[string]any{"name": "Living Room Humidity"}, nil, factCase{unresolved: true}},
		{"malformed slot", "HassTurnOn", map[string]any{"name": 3}, nil, factCase{unresolved: true}},
		{"no target at all", "HassTurnOn", map[string]any{}, nil, factCase{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Intent(t.Context(), c.intent, c.args, h.lookup())
			if got := ids(r); !slices.Equal(got, c.ids) {
				t.Errorf("targets %v, want %v", got, c.ids)
			}
			checkFacts(t, r, "intent", c.want)
		})
	}
}

// Name twins: an entity that is not exposed to Assist carries the name an
// exposed lock answers to by alias. HA matches only exposed entities, by
// name or alias, normalized as its _normalize_name does (strip, casefold),
// and unlocks the door; so does the preview. A name several exposed
// entities answer to means all of them. (Before, the preview matched every
// entity by friendly name only, saw the light, and let it apply.)
func TestNameTwinsResolveAsHomeAssistantMatches(t *testing.T) {
	h := newHome(t, false, func(o *fakehass.Options) {
		o.Entities = append(o.Entities,
			fakehass.Entity{ID: "light.hall_lamp", Name: "Main Door", State: "off", Area: "hallway", Exposed: false},
			fakehass.Entity{ID: "lock.back_door", Name: "Back Door", State: "locked", Area: "garage", Aliases: []string{"Straße"}, Exposed: true},
			fakehass.Entity{ID: "cover.side_gate", Name: "Side", State: "closed", Area: "garage", Aliases: []string{"Gate"}, Exposed: true,
				Attributes: map[string]any{"device_class": "gate"}},
			fakehass.Entity{ID: "light.gate_light", Name: "Gate", State: "off", Area: "garage", Exposed: true},
		)
	})
	s := h.snapshot(t, false)
	cases := []struct {
		name string
		slot string
		ids  []string
		want factCase
	}{
		{"the exposed lock's alias, not the unexposed light's name", "Main Door", []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"case and surrounding whitespace", "  MAIN DOOR\t", []string{"lock.front_door"}, factCase{domains: []string{"lock"}}},
		{"casefold, not lower-case", "STRASSE", []string{"lock.back_door"}, factCase{domains: []string{"lock"}}},
		{"a name two exposed entities answer to means both", "gate", []string{"cover.side_gate", "light.gate_light"},
			factCase{domains: []string{"cover", "light"}, classes: []string{"cover.gate"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Intent(t.Context(), "HassTurnOff", map[string]any{"name": c.slot}, h.lookup())
			if got := ids(r); !slices.Equal(got, c.ids) {
				t.Errorf("targets %v, want %v", got, c.ids)
			}
			checkFacts(t, r, "intent", c.want)
		})
	}
}

// Without Home Assistant's Assist view (GetLiveContext not offered or not
// readable) exposure and aliases are unknown: an intent addressed by name,
// area or floor is unresolved, whatever the friendly names show.
func TestIntentWithoutTheAssistViewIsUnresolved(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, true)
	for _, args := range []map[string]any{{"name": "Bedroom Light"}, {"area": "Bedroom"}, {"floor": "First Floor", "domain": "light"}} {
		if r := s.Intent(t.Context(), "HassTurnOn", args, h.lookup()); len(r.Unresolved) == 0 {
			t.Errorf("%v: resolved without aliases: %+v", args, r)
		}
	}
	if r := s.Intent(t.Context(), "HassTurnOff", map[string]any{"domain": "light"}, h.lookup()); len(r.Unresolved) != 0 || len(r.Targets) != 4 {
		t.Errorf("by domain only (every light, exposed or not): %v %v", ids(r), r.Unresolved)
	}
}

// Without an administrator's token area ids are unknown: an area named
// by an alias or name still resolves from the Assist view, an id-like
// slot that is none of them may be an id and counts as unknown.
func TestIntentByAreaWithoutAdmin(t *testing.T) {
	h := newHome(t, true, nil)
	s := h.snapshot(t, false)
	if r := s.Intent(t.Context(), "HassTurnOn", map[string]any{"area": "Hallway", "domain": []any{"lock"}}, h.lookup()); !slices.Equal(ids(r), []string{"lock.front_door"}) {
		t.Errorf("by area name: %v %v", ids(r), r.Unresolved)
	}
	r := s.Intent(t.Context(), "HassTurnOn", map[string]any{"area": "hall_1", "domain": []any{"lock"}}, h.lookup())
	if !slices.Equal(ids(r), []string{"lock.front_door"}) {
		t.Errorf("an id-like area counts every placed lock: %v", ids(r))
	}
}

// Scripts and scenes started through an intent: HassTurnOn on a script
// (by name, alias, entity id, or domain: script) runs it, so the preview
// resolves what it runs; on a scene it applies its members. HassTurnOff
// on a script only stops it. (Before, the preview saw only "script" or
// "scene" and left the consent to the model.)
func TestScriptsAndScenesStartedThroughAnIntent(t *testing.T) {
	h := newHome(t, false, func(o *fakehass.Options) {
		for i := range o.Entities {
			if o.Entities[i].ID == "script.good_night" {
				o.Entities[i].Aliases = []string{"Bedtime"}
			}
		}
	})
	s := h.snapshot(t, false)
	cases := []struct {
		name   string
		intent string
		args   map[string]any
		want   factCase
		opaque bool
	}{
		{"script by name", "HassTurnOn", map[string]any{"name": "Good night"}, factCase{domains: []string{"light", "lock", "script"}}, true},
		{"script by alias", "HassTurnOn", map[string]any{"name": "bedtime"}, factCase{domains: []string{"light", "lock", "script"}}, true},
		{"script by entity id", "HassTurnOn", map[string]any{"name": "script.good_night"}, factCase{domains: []string{"light", "lock", "script"}}, true},
		{"every exposed script", "HassTurnOn", map[string]any{"domain": "script"}, factCase{domains: []string{"light", "lock", "script"}}, true},
		{"toggle runs it too", "HassToggle", map[string]any{"name": "Good night"}, factCase{domains: []string{"light", "lock", "script"}}, true},
		{"turning a script off only stops it", "HassTurnOff", map[string]any{"name": "Good night"}, factCase{domains: []string{"script"}}, false},
		{"scene by name applies its members", "HassTurnOn", map[string]any{"name": "Movie time"},
			factCase{domains: []string{"cover", "light", "scene"}, classes: []string{"cover.blind"}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Intent(t.Context(), c.intent, c.args, h.lookup())
			checkFacts(t, r, "intent", c.want)
			if r.Opaque != c.opaque {
				t.Errorf("opaque = %v, want %v", r.Opaque, c.opaque)
			}
		})
	}
}

// A configuration operates the targets of its service calls, the members
// of scenes it activates and what the scripts it runs operate; what it
// only reads does not count; templates leave it unresolved.
func TestConfigTargets(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	cases := []struct {
		name   string
		cfg    any
		want   factCase
		opaque bool
	}{
		{"light action", map[string]any{"action": []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"entity_id": "light.kitchen_ceiling"}}}},
			factCase{domains: []string{"light"}}, false},
		{"new-style action key", map[string]any{"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": []any{"lock.front_door"}}}}},
			factCase{domains: []string{"lock"}}, false},
		{"read-only condition does not count", map[string]any{
			"trigger":   []any{map[string]any{"platform": "state", "entity_id": "lock.front_door"}},
			"condition": []any{map[string]any{"condition": "state", "entity_id": "alarm_control_panel.home_alarm", "state": "disarmed"}},
			"action":    []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"area_id": "hallway"}}}},
			factCase{domains: []string{"light"}}, false},
		{"scene activation sets its members", map[string]any{"sequence": []any{map[string]any{"scene": "scene.movie_time"}}},
			factCase{domains: []string{"cover", "light", "scene"}, classes: []string{"cover.blind"}}, false},
		{"scene config", map[string]any{"name": "x", "entities": map[string]any{"cover.garage_door": map[string]any{"state": "open"}}},
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}, false},
		{"nested script", map[string]any{"sequence": []any{map[string]any{"service": "script.good_night"}}},
			factCase{domains: []string{"light", "lock", "script"}}, true},
		{"script.turn_on of a script", map[string]any{"sequence": []any{map[string]any{"service": "script.turn_on", "target": map[string]any{"entity_id": "script.movie_mode"}}}},
			factCase{domains: []string{"cover", "light", "scene", "script"}, classes: []string{"cover.blind"}}, true},
		{"unknown script", map[string]any{"sequence": []any{map[string]any{"service": "script.nope"}}}, factCase{unresolved: true}, true},
		{"templated target", map[string]any{"action": []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"entity_id": "{{ states.light | map(attribute='entity_id') | list }}"}}}},
			factCase{domains: []string{"light"}, unresolved: true}, false},
		{"templated service", map[string]any{"action": []any{map[string]any{"service": "{{ 'lock.unlock' }}"}}}, factCase{unresolved: true}, false},
		{"generic service at entities", map[string]any{"action": []any{map[string]any{"service": "homeassistant.turn_on", "target": map[string]any{"entity_id": "cover.garage_door"}}}},
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}, false},
		{"a camera's own service, without a target", map[string]any{"action": []any{map[string]any{"action": "camera.disable_motion_detection"}}},
			factCase{domains: []string{"camera"}}, false},
		{"a generic service at a camera and a siren not in HA", map[string]any{"action": []any{map[string]any{"service": "homeassistant.turn_off", "target": map[string]any{"entity_id": []any{"camera.porch", "siren.hall"}}}}},
			factCase{domains: []string{"camera", "siren"}}, false},
		{"entity not in HA yet", map[string]any{"action": []any{map[string]any{"service": "switch.turn_on", "entity_id": "lock.new_one"}}},
			factCase{domains: []string{"lock", "switch"}}, false},
		{"a generic service without a target", map[string]any{"action": []any{map[string]any{"service": "homeassistant.turn_off"}}}, factCase{unresolved: true}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Config(t.Context(), c.cfg, h.lookup())
			checkFacts(t, r, "config", c.want)
			if r.Opaque != c.opaque {
				t.Errorf("opaque = %v, want %v", r.Opaque, c.opaque)
			}
		})
	}
}

// Area-, floor-, device- and label-targeted service calls (and "all",
// groups, device actions) are expanded to the entities they hit, with
// domain and device class, as async_extract_referenced_entity_ids expands
// them; what cannot be expanded (areas without an administrator's token)
// is unresolved. (Before, cover.open_cover with target area_id: garage
// reported only "cover", and the garage opened on the model's word.)
func TestServiceTargetFormsExpandToEntities(t *testing.T) {
	edit := func(o *fakehass.Options) {
		o.Devices = []fakehass.Device{
			{ID: "dev_garage_opener", Name: "Garage opener", Area: "garage", Labels: []string{"outdoor"}},
			{ID: "dev_lock", Name: "Door lock", Area: "hallway"},
		}
		for i := range o.Entities {
			switch o.Entities[i].ID {
			case "cover.garage_door":
				o.Entities[i].Area, o.Entities[i].Device = "", "dev_garage_opener"
			case "lock.front_door":
				o.Entities[i].Device = "dev_lock"
			case "light.kitchen_ceiling":
				o.Entities[i].Labels = []string{"evening"}
			}
		}
		o.Areas[0].Labels = []string{"evening"} // living room
		o.Entities = append(o.Entities,
			fakehass.Entity{ID: "cover.all_doors", Name: "All doors", State: "closed", Exposed: false,
				Attributes: map[string]any{"entity_id": []any{"cover.garage_door", "cover.living_room_blinds"}}},
		)
	}
	call := func(action string, target map[string]any) any {
		return map[string]any{"sequence": []any{map[string]any{"action": action, "target": target}}}
	}
	cases := []struct {
		name string
		cfg  any
		want factCase
	}{
		{"an area: its covers, one inherited from its device", call("cover.open_cover", map[string]any{"area_id": "garage"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}},
		{"a floor: its areas' covers", call("cover.open_cover", map[string]any{"floor_id": "ground_floor"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.blind", "cover.garage"}}},
		{"a device", call("cover.open_cover", map[string]any{"device_id": "dev_garage_opener"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}},
		{"a label on a device", call("cover.open_cover", map[string]any{"label_id": "outdoor"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}}},
		{"a label on an entity and an area (unexposed entities too)", call("homeassistant.turn_on", map[string]any{"label_id": "evening"}),
			factCase{domains: []string{"cover", "light", "media_player", "sensor"}, classes: []string{"cover.blind", "media_player.tv", "sensor.humidity"}}},
		{"homeassistant.turn_off at an area reaches every domain", call("homeassistant.turn_off", map[string]any{"area_id": "hallway"}),
			factCase{domains: []string{"alarm_control_panel", "binary_sensor", "climate", "lock"}, classes: []string{"binary_sensor.door"}}},
		{"entity_id all: every entity of the domain", call("cover.open_cover", map[string]any{"entity_id": "all"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.blind", "cover.garage"}}},
		{"a group reaches its members", call("cover.open_cover", map[string]any{"entity_id": "cover.all_doors"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.blind", "cover.garage"}}},
		{"ids as a comma-separated string", call("cover.open_cover", map[string]any{"entity_id": "cover.living_room_blinds, cover.garage_door"}),
			factCase{domains: []string{"cover"}, classes: []string{"cover.blind", "cover.garage"}}},
		{"a device action", map[string]any{"sequence": []any{map[string]any{"device_id": "dev_lock", "domain": "lock", "type": "unlock", "entity_id": "0123abcd"}}},
			factCase{domains: []string{"lock"}}},
		{"a device trigger is only read", map[string]any{"triggers": []any{map[string]any{"trigger": "device", "device_id": "dev_lock", "domain": "lock", "type": "unlocked"}}},
			factCase{}},
		{"a templated area", call("cover.open_cover", map[string]any{"area_id": "{{ 'garage' }}"}),
			factCase{domains: []string{"cover"}, unresolved: true}},
	}
	h := newHome(t, false, edit)
	s := h.snapshot(t, false)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkFacts(t, s.Config(t.Context(), c.cfg, h.lookup()), "config", c.want)
		})
	}
	t.Run("a script the relay runs", func(t *testing.T) {
		h.writeScripts(t, "open_garage:\n  sequence:\n    - action: cover.open_cover\n      target:\n        area_id: garage\n")
		checkFacts(t, s.Script(t.Context(), "open_garage", h.lookup()), "script", factCase{domains: []string{"cover"}, classes: []string{"cover.garage"}})
	})
	t.Run("without an administrator's token it is unresolved", func(t *testing.T) {
		na := newHome(t, true, edit)
		ns := na.snapshot(t, false)
		for _, c := range []any{
			call("cover.open_cover", map[string]any{"area_id": "garage"}),
			call("cover.open_cover", map[string]any{"floor_id": "ground_floor"}),
			call("cover.open_cover", map[string]any{"device_id": "dev_garage_opener"}),
			call("cover.open_cover", map[string]any{"label_id": "outdoor"}),
		} {
			if r := ns.Config(t.Context(), c, na.lookup()); len(r.Unresolved) == 0 {
				t.Errorf("%v: resolved without the area map: %v", c, r.Facts("config"))
			}
		}
	})
}

// A relayed script is opaque; its configuration says what it operates,
// and a script HA cannot show stays unresolved.
func TestScriptTargets(t *testing.T) {
	h := newHome(t, false, nil)
	s := h.snapshot(t, false)
	r := s.Script(t.Context(), "good_night", h.lookup())
	f := r.Facts("script")
	if !slices.Equal(f["domains"].([]string), []string{"light", "lock", "script"}) || f["opaque"] != true || f["unresolved"] != false {
		t.Fatalf("good_night: %v %v", f, r.Unresolved)
	}
	na := newHome(t, true, nil)
	if f := na.snapshot(t, false).Script(t.Context(), "good_night", na.lookup()).Facts("script"); f["unresolved"] != true {
		t.Fatalf("a script without admin rights: %v", f)
	}
}

// The Assist view is read from GetLiveContext's answer and the aliases
// HA appends to a script tool's description; what cannot be read is
// refused or left unknown, never guessed.
func TestParseTheAssistView(t *testing.T) {
	if _, err := ParseLiveContext(`{"success": false, "error": "No entities"}`); err == nil {
		t.Error("a failed GetLiveContext was read")
	}
	if _, err := ParseLiveContext(`{"success": true, "result": "Live Context:\n- names: [unclosed"}`); err == nil {
		t.Error("broken YAML was read")
	}
	for _, c := range []struct {
		desc    string
		aliases []string
		known   bool
	}{
		{"Turn off the lights", nil, true},
		{"Turn off. Aliases: ['Bedtime', \"Kid's night\"]", []string{"Bedtime", "Kid's night"}, true},
		{"Aliases: ['a, b', 'c']", []string{"a, b", "c"}, true},
		{"Aliases: ['odd\\nescape']", nil, false},
		{"Says Aliases: ['x'] in its own words", nil, false},
	} {
		got, known := scriptAliases(c.desc)
		if known != c.known || !slices.Equal(got, c.aliases) {
			t.Errorf("%q: %q %v, want %q %v", c.desc, got, known, c.aliases, c.known)
		}
	}
	for _, c := range []struct {
		joined, name string
		want         bool
	}{
		{"Front Door, Main Door", "main door", true},
		{"Kitchen, Dining, Snacks", "kitchen, dining", true},
		{"Kitchen", "kitchen, dining", false},
		{"", "", false},
	} {
		if got := joinedMatch(c.joined, c.name); got != c.want {
			t.Errorf("joinedMatch(%q, %q) = %v", c.joined, c.name, got)
		}
	}
}
