package radarr_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
)

// radarrCalls are the operations of Radarr's API the service uses, as its
// OpenAPI document names them (docs/services/arr.md, Upstream).
var radarrCalls = []string{
	"GET /api/v3/calendar",
	"GET /api/v3/command/{id}",
	"GET /api/v3/diskspace",
	"GET /api/v3/health",
	"GET /api/v3/history",
	"GET /api/v3/movie",
	"GET /api/v3/movie/lookup",
	"GET /api/v3/movie/{id}",
	"GET /api/v3/queue",
	"GET /api/v3/release",
	"GET /api/v3/system/status",
	"GET /api/v3/wanted/missing",
	"POST /api/v3/command",
	"POST /api/v3/release",
}

// Every tool sends only operations of Radarr's OpenAPI document with
// parameters it declares, the fake answers in the document's shapes
// (arrspec checks each exchange), and the tools use exactly radarrCalls.
func TestEveryCallIsAnOperationOfRadarrsDocument(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	reads := []struct {
		tool string
		args map[string]any
	}{
		{"radarr_movie_list", map[string]any{"search": "dune"}},
		{"radarr_movie_lookup", map[string]any{"term": "arrival"}},
		{"radarr_movie_get", map[string]any{"movie_id": 1}},
		{"radarr_wanted_missing", map[string]any{"page_size": 2}},
		{"radarr_calendar", map[string]any{"start": "2024-12-01", "end": "2025-01-31", "unmonitored": true}},
		{"radarr_queue", map[string]any{}},
		{"radarr_history", map[string]any{"movie_id": 1}},
		{"radarr_health", map[string]any{}},
		{"radarr_disk_space", map[string]any{}},
		{"radarr_release_search", map[string]any{"movie_id": 2}},
	}
	for _, r := range reads {
		if got, isErr := svc.Call(t, r.tool, r.args, ""); isErr {
			t.Fatalf("%s: %v", r.tool, got)
		}
	}
	search := map[string]any{"movie_ids": []int{3}}
	if _, isErr := svc.Call(t, "radarr_movie_search", search, ""); isErr {
		t.Fatal("movie search preview failed")
	}
	if got, isErr := svc.Call(t, "radarr_movie_search", search, svc.Approve(t, "arr", "radarr_movie_search", search, "spec-1")); isErr {
		t.Fatalf("movie search: %v", got)
	}
	if got, isErr := svc.Call(t, "radarr_command_status", map[string]any{"command_id": 1001}, ""); isErr {
		t.Fatalf("command status: %v", got)
	}
	grab := map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDApproved, "indexer_id": 1}
	if _, isErr := svc.Call(t, "radarr_release_grab", grab, ""); isErr {
		t.Fatal("grab preview failed")
	}
	if got, isErr := svc.Call(t, "radarr_release_grab", grab, svc.Approve(t, "arr", "radarr_release_grab", grab, "spec-2")); isErr {
		t.Fatalf("grab: %v", got)
	}
	if got := e.spec.Used(); !slices.Equal(got, radarrCalls) {
		t.Errorf("operations used:\n%q\nwant\n%q", got, radarrCalls)
	}
}
