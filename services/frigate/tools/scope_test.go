package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

func restricted(s *Settings) { s.Cameras = []string{"front_door"} }

func TestCameraScope(t *testing.T) {
	h := newHarness(t, harnessOpts{settings: restricted})

	t.Run("cameras list is filtered", func(t *testing.T) {
		out := h.mustOK(t, "frigate_list_cameras", nil)
		cams := out["cameras"].([]any)
		if len(cams) != 1 || cams[0].(map[string]any)["name"] != "front_door" || out["scope"] != "restricted" {
			t.Fatalf("cameras = %v", out)
		}
	})
	t.Run("events are asked for in-scope cameras only", func(t *testing.T) {
		out := h.mustOK(t, "frigate_list_events", window())
		for _, e := range out["events"].([]any) {
			if cam := e.(map[string]any)["camera"]; cam != "front_door" {
				t.Errorf("event from %v", cam)
			}
		}
		reqs := h.requests("GET /api/events?")
		if len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1], "cameras=front_door") {
			t.Errorf("query did not carry the scope: %v", reqs)
		}
	})
	t.Run("status omits other cameras and unscopable aggregates", func(t *testing.T) {
		out := h.mustOK(t, "frigate_get_system_status", nil)
		if _, ok := out["detectors"]; ok {
			t.Error("detectors reported under a restricted scope")
		}
		if _, ok := out["detectionFps"]; ok {
			t.Error("total detection rate reported under a restricted scope")
		}
		if cams := out["cameras"].([]any); len(cams) != 1 {
			t.Errorf("cameras = %v", cams)
		}
	})
	t.Run("capabilities count the scope, labels only from it", func(t *testing.T) {
		out := h.mustOK(t, "frigate_get_capabilities", nil)
		if n := out["limits"].(map[string]any)["permittedCameraCount"]; n != float64(1) {
			t.Errorf("permittedCameraCount = %v", n)
		}
		for _, l := range out["trackedLabels"].([]any) {
			if l == "car" || l == "cat" {
				t.Errorf("label %v comes from an out-of-scope camera", l)
			}
		}
	})

	// Refusals: no upstream request, and neither the camera's name nor
	// anything about the scope in the answer.
	refusals := []struct {
		tool string
		args map[string]any
	}{
		{"frigate_list_cameras", map[string]any{"camera": "driveway"}},
		{"frigate_list_events", with(window(), "cameras", []any{"front_door", "driveway"})},
		{"frigate_search_events", with(window(), "query", "car", "cameras", []any{"driveway"})},
		{"frigate_get_latest_frame", map[string]any{"camera": "driveway"}},
		{"frigate_get_latest_frame", map[string]any{"camera": "no_such_camera"}},
	}
	for _, tc := range refusals {
		t.Run("refuses "+tc.tool, func(t *testing.T) {
			before := h.hits.Load()
			out, isErr := h.call(t, tc.tool, tc.args)
			if !isErr || errCode(out) != "forbidden" {
				t.Fatalf("want forbidden, got %v", out)
			}
			if h.hits.Load() != before {
				t.Error("an out-of-scope request reached Frigate")
			}
			msg := errMessage(out)
			for _, leak := range []string{"front_door", "1 camera", "backyard"} {
				if strings.Contains(msg, leak) {
					t.Errorf("refusal leaks %q: %s", leak, msg)
				}
			}
		})
	}

	// An event on an out-of-scope camera is answered exactly like an event
	// that does not exist, so a client cannot learn which ids exist beyond
	// its scope.
	t.Run("out-of-scope event answers exactly like a missing one", func(t *testing.T) {
		var id string
		// Find a driveway event id straight from the fixture.
		for _, e := range demoEvents() {
			if e.Camera == "driveway" && e.HasSnapshot {
				id = e.ID
				break
			}
		}
		// Same length and alphabet, so the message cannot differ by echo.
		missing := id[:len(id)-1] + "x"
		for _, tool := range []string{"frigate_get_event", "frigate_get_event_snapshot"} {
			out, isErr := h.call(t, tool, map[string]any{"eventId": id})
			if !isErr || errCode(out) != "not_found" {
				t.Fatalf("%s: want not_found, got %v", tool, out)
			}
			if s := errMessage(out); strings.Contains(s, "driveway") || strings.Contains(s, "car") || strings.Contains(s, id) || strings.Contains(s, "scope") {
				t.Errorf("%s: refusal leaks event metadata or its scope: %s", tool, s)
			}
			inScope, _ := json.Marshal(h.raw(t, tool, map[string]any{"eventId": id}))
			absent, _ := json.Marshal(h.raw(t, tool, map[string]any{"eventId": missing}))
			if string(inScope) != string(absent) {
				t.Errorf("%s: out-of-scope and missing events answer differently:\n%s\n%s", tool, inScope, absent)
			}
		}
		if n := len(h.requests("/snapshot.jpg")); n != 0 {
			t.Errorf("snapshot requested %d times for an out-of-scope event", n)
		}
	})
	assertNoSecrets(t, h)
}

// From 0.17 Frigate answers 403 for an event of a camera the account's
// role may not see (require_camera_access). That 403 used to reach the
// client as forbidden, telling that the id exists; it is now the answer
// for a missing id, byte for byte.
func TestEventOfARoleForbiddenCameraAnswersLikeAMissingOne(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) { o.RoleCameras = []string{"front_door"} }})
	var id string
	for _, e := range demoEvents() {
		if e.Camera == "driveway" && e.HasSnapshot {
			id = e.ID
			break
		}
	}
	missing := id[:len(id)-1] + "x"
	for _, tool := range []string{"frigate_get_event", "frigate_get_event_snapshot"} {
		out, isErr := h.call(t, tool, map[string]any{"eventId": id})
		if !isErr || errCode(out) != "not_found" {
			t.Fatalf("%s: want not_found, got %v", tool, out)
		}
		forbidden, _ := json.Marshal(h.raw(t, tool, map[string]any{"eventId": id}))
		absent, _ := json.Marshal(h.raw(t, tool, map[string]any{"eventId": missing}))
		if string(forbidden) != string(absent) {
			t.Errorf("%s: a role-forbidden and a missing event answer differently:\n%s\n%s", tool, forbidden, absent)
		}
	}
	assertNoSecrets(t, h)
}
