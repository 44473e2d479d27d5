package targets

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const token = "targets-test-token-0123456789"

func snapshot(t *testing.T, notAdmin bool) (*Snapshot, *hass.Client) {
	t.Helper()
	dir := t.TempDir()
	if err := fakehass.SeedConfig(dir); err != nil {
		t.Fatal(err)
	}
	f := fakehass.New(fakehass.DemoHome(fakehass.Options{Token: token, ConfigDir: dir, NotAdmin: notAdmin}))
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	up, err := upstream.New(upstream.Config{BaseURL: srv.URL, AllowHTTP: true, Header: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	ha := hass.New(up)
	s, err := Take(t.Context(), ha, true)
	if err != nil {
		t.Fatal(err)
	}
	return s, ha
}

func ids(r Resolution) []string {
	var out []string
	for _, t := range r.Targets {
		out = append(out, t.EntityID)
	}
	return out
}

// An intent's targets are found however the call addresses them, and the
// facts name their domains and device classes; whatever cannot be matched
// here (an alias, an unknown area) is unresolved, never silently empty.
func TestIntentTargets(t *testing.T) {
	s, _ := snapshot(t, false)
	cases := []struct {
		name       string
		intent     string
		args       map[string]any
		ids        []string
		domains    []string
		classes    []string
		unresolved bool
	}{
		{"lock by name", "HassTurnOff", map[string]any{"name": "front door"}, []string{"lock.front_door"}, []string{"lock"}, nil, false},
		{"lock by entity id", "HassTurnOn", map[string]any{"name": "lock.front_door"}, []string{"lock.front_door"}, []string{"lock"}, nil, false},
		{"lock by area", "HassTurnOn", map[string]any{"area": "Hallway"}, []string{"alarm_control_panel.home_alarm", "binary_sensor.front_door_contact", "climate.thermostat", "lock.front_door"}, []string{"alarm_control_panel", "binary_sensor", "climate", "lock"}, []string{"binary_sensor.door"}, false},
		{"lock by domain only", "HassTurnOn", map[string]any{"domain": []any{"lock"}}, []string{"lock.front_door"}, []string{"lock"}, nil, false},
		{"lock by domain string", "HassTurnOn", map[string]any{"domain": "lock", "area": "hallway"}, []string{"lock.front_door"}, []string{"lock"}, nil, false},
		{"lock intent", "HassUnlock", map[string]any{"area": "hallway"}, []string{"lock.front_door"}, []string{"lock"}, nil, false},
		{"garage by device class and floor", "HassTurnOn", map[string]any{"floor": "Ground Floor", "device_class": []any{"garage"}}, []string{"cover.garage_door"}, []string{"cover"}, []string{"cover.garage"}, false},
		{"garage area", "HassTurnOn", map[string]any{"area": "garage"}, []string{"cover.garage_door", "light.garage_light"}, []string{"cover", "light"}, []string{"cover.garage"}, false},
		{"lights of an area", "HassLightSet", map[string]any{"area": "living_room", "brightness": 50}, []string{"light.living_room_lamp"}, []string{"light"}, nil, false},
		{"all lights", "HassTurnOff", map[string]any{"name": "all", "domain": []any{"light"}}, []string{"light.bedroom_light", "light.garage_light", "light.kitchen_ceiling", "light.living_room_lamp"}, []string{"light"}, nil, false},
		{"alias is unresolved", "HassTurnOff", map[string]any{"name": "Main Door"}, nil, nil, nil, true},
		{"area alias is unresolved", "HassTurnOn", map[string]any{"area": "lounge"}, nil, nil, nil, true},
		{"floor alias is unresolved", "HassTurnOn", map[string]any{"floor": "downstairs", "domain": []any{"cover"}}, nil, nil, nil, true},
		{"malformed slot", "HassTurnOn", map[string]any{"name": 3}, nil, nil, nil, true},
		{"no target at all", "HassTurnOn", map[string]any{}, nil, nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Intent(c.intent, c.args)
			if got := ids(r); !slices.Equal(got, c.ids) {
				t.Errorf("targets %v, want %v", got, c.ids)
			}
			f := r.Facts("intent")
			if got := f["domains"].([]string); !slices.Equal(got, nonNil(c.domains)) {
				t.Errorf("domains %v, want %v", got, c.domains)
			}
			if got := f["device_classes"].([]string); !slices.Equal(got, nonNil(c.classes)) {
				t.Errorf("device classes %v, want %v", got, c.classes)
			}
			if f["unresolved"] != c.unresolved {
				t.Errorf("unresolved = %v (%v), want %v", f["unresolved"], r.Unresolved, c.unresolved)
			}
			if err := f.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Without an administrator's token areas and floors are unknown: an
// intent addressed by area is unresolved instead of matching nothing.
func TestIntentByAreaWithoutAdminIsUnresolved(t *testing.T) {
	s, _ := snapshot(t, true)
	r := s.Intent("HassTurnOn", map[string]any{"area": "Hallway", "domain": []any{"lock"}})
	if len(r.Unresolved) == 0 || len(r.Targets) != 0 {
		t.Fatalf("resolution %+v", r)
	}
	if r := s.Intent("HassTurnOn", map[string]any{"name": "Front Door"}); len(r.Unresolved) != 0 || len(r.Targets) != 1 {
		t.Fatalf("by name without admin: %+v", r)
	}
}

// A configuration operates the targets of its service calls, the members
// of scenes it activates and what the scripts it runs operate; what it
// only reads does not count; templates, devices and generic services aimed
// at areas leave it unresolved.
func TestConfigTargets(t *testing.T) {
	s, ha := snapshot(t, false)
	lookup := func(ctx context.Context, key string) (map[string]any, error) { return ha.ScriptConfig(ctx, key) }
	cases := []struct {
		name       string
		cfg        any
		domains    []string
		classes    []string
		unresolved bool
		opaque     bool
	}{
		{"light action", map[string]any{"action": []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"entity_id": "light.kitchen_ceiling"}}}},
			[]string{"light"}, nil, false, false},
		{"new-style action key", map[string]any{"actions": []any{map[string]any{"action": "lock.unlock", "target": map[string]any{"entity_id": []any{"lock.front_door"}}}}},
			[]string{"lock"}, nil, false, false},
		{"read-only condition does not count", map[string]any{
			"trigger":   []any{map[string]any{"platform": "state", "entity_id": "lock.front_door"}},
			"condition": []any{map[string]any{"condition": "state", "entity_id": "alarm_control_panel.home_alarm", "state": "disarmed"}},
			"action":    []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"area_id": "hallway"}}}},
			[]string{"light"}, nil, false, false},
		{"scene activation sets its members", map[string]any{"sequence": []any{map[string]any{"scene": "scene.movie_time"}}},
			[]string{"cover", "light", "scene"}, []string{"cover.blind"}, false, false},
		{"scene config", map[string]any{"name": "x", "entities": map[string]any{"cover.garage_door": map[string]any{"state": "open"}}},
			[]string{"cover"}, []string{"cover.garage"}, false, false},
		{"nested script", map[string]any{"sequence": []any{map[string]any{"service": "script.good_night"}}},
			[]string{"light", "lock"}, nil, false, true},
		{"script.turn_on of a script", map[string]any{"sequence": []any{map[string]any{"service": "script.turn_on", "target": map[string]any{"entity_id": "script.movie_mode"}}}},
			[]string{"cover", "light", "scene", "script"}, []string{"cover.blind"}, false, true},
		{"unknown script", map[string]any{"sequence": []any{map[string]any{"service": "script.nope"}}}, nil, nil, true, true},
		{"templated target", map[string]any{"action": []any{map[string]any{"service": "light.turn_on", "target": map[string]any{"entity_id": "{{ states.light | map(attribute='entity_id') | list }}"}}}},
			[]string{"light"}, nil, true, false},
		{"templated service", map[string]any{"action": []any{map[string]any{"service": "{{ 'lock.unlock' }}"}}}, nil, nil, true, false},
		{"device target", map[string]any{"action": []any{map[string]any{"service": "lock.unlock", "target": map[string]any{"device_id": "abc123"}}}},
			[]string{"lock"}, nil, true, false},
		{"generic service at an area", map[string]any{"action": []any{map[string]any{"service": "homeassistant.turn_off", "target": map[string]any{"area_id": "garage"}}}},
			nil, nil, true, false},
		{"generic service at entities", map[string]any{"action": []any{map[string]any{"service": "homeassistant.turn_on", "target": map[string]any{"entity_id": "cover.garage_door"}}}},
			[]string{"cover"}, []string{"cover.garage"}, false, false},
		{"a camera's own service, without a target", map[string]any{"action": []any{map[string]any{"action": "camera.disable_motion_detection"}}},
			[]string{"camera"}, nil, false, false},
		{"a generic service at a camera and a siren not in HA", map[string]any{"action": []any{map[string]any{"service": "homeassistant.turn_off", "target": map[string]any{"entity_id": []any{"camera.porch", "siren.hall"}}}}},
			[]string{"camera", "siren"}, nil, false, false},
		{"entity not in HA yet", map[string]any{"action": []any{map[string]any{"service": "switch.turn_on", "entity_id": "lock.new_one"}}},
			[]string{"lock", "switch"}, nil, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := s.Config(t.Context(), c.cfg, lookup)
			f := r.Facts("config")
			if got := f["domains"].([]string); !slices.Equal(got, nonNil(c.domains)) {
				t.Errorf("domains %v, want %v", got, c.domains)
			}
			if got := f["device_classes"].([]string); !slices.Equal(got, nonNil(c.classes)) {
				t.Errorf("device classes %v, want %v", got, c.classes)
			}
			if f["unresolved"] != c.unresolved || f["opaque"] != c.opaque {
				t.Errorf("unresolved %v opaque %v (%s), want %v %v", f["unresolved"], f["opaque"], strings.Join(r.Unresolved, "; "), c.unresolved, c.opaque)
			}
		})
	}
}

// A relayed script is opaque; its configuration says what it operates,
// and a script HA cannot show stays unresolved.
func TestScriptTargets(t *testing.T) {
	s, ha := snapshot(t, false)
	lookup := func(ctx context.Context, key string) (map[string]any, error) { return ha.ScriptConfig(ctx, key) }
	r := s.Script(t.Context(), "good_night", lookup)
	f := r.Facts("script")
	if !slices.Equal(f["domains"].([]string), []string{"light", "lock", "script"}) || f["opaque"] != true || f["unresolved"] != false {
		t.Fatalf("good_night: %v %v", f, r.Unresolved)
	}
	s2, ha2 := snapshot(t, true)
	lookup2 := func(ctx context.Context, key string) (map[string]any, error) { return ha2.ScriptConfig(ctx, key) }
	if f := s2.Script(t.Context(), "good_night", lookup2).Facts("script"); f["unresolved"] != true {
		t.Fatalf("a script without admin rights: %v", f)
	}
}
