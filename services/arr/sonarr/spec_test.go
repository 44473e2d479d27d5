package sonarr_test

import (
	"slices"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
)

// sonarrCalls are the operations of Sonarr's API the service uses, as its
// OpenAPI document names them; docs/services/arr.md's Upstream table lists
// each with the controller that defines it.
var sonarrCalls = []string{
	"GET /api/v3/calendar",
	"GET /api/v3/command/{id}",
	"GET /api/v3/diskspace",
	"GET /api/v3/episode",
	"GET /api/v3/episode/{id}",
	"GET /api/v3/episodefile",
	"GET /api/v3/health",
	"GET /api/v3/history",
	"GET /api/v3/queue",
	"GET /api/v3/release",
	"GET /api/v3/series",
	"GET /api/v3/series/{id}",
	"GET /api/v3/system/status",
	"GET /api/v3/wanted/missing",
	"POST /api/v3/command",
	"POST /api/v3/release",
}

// Every tool, reads and both writes, sends only operations of Sonarr's
// OpenAPI document with parameters it declares, and the fake answers
// them in the document's shapes (arrspec checks each exchange); together
// the tools use exactly sonarrCalls.
func TestEveryCallIsAnOperationOfSonarrsDocument(t *testing.T) {
	_, tools, spec := setupSpec(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	reads := []struct {
		tool string
		args map[string]any
	}{
		{"sonarr_series_list", map[string]any{"query": "exp"}},
		{"sonarr_series_get", map[string]any{"series_id": 1}},
		{"sonarr_episodes", map[string]any{"series_id": 1, "season": 1}},
		{"sonarr_wanted_missing", map[string]any{"page": 1, "page_size": 5}},
		{"sonarr_calendar", map[string]any{"start": "2025-06-01", "end": "2025-06-30", "include_unmonitored": true}},
		{"sonarr_queue", map[string]any{"page": 1, "page_size": 5}},
		{"sonarr_history", map[string]any{"series_id": 1, "event_type": "grabbed"}},
		{"sonarr_history", map[string]any{"episode_id": 1101}},
		{"sonarr_health", map[string]any{}},
		{"sonarr_disk_space", map[string]any{}},
		{"sonarr_release_search", map[string]any{"series_id": 1, "season": 1}},
		{"sonarr_release_search", map[string]any{"episode_id": 1105}},
	}
	for _, r := range reads {
		if got, isErr := svc.Call(t, r.tool, r.args, ""); isErr {
			t.Fatalf("%s: %v", r.tool, got)
		}
	}
	search := map[string]any{"series_id": 1, "season": 1, "episodes": []int{5}}
	if _, isErr := svc.Call(t, "sonarr_episode_search", search, ""); isErr {
		t.Fatal("episode search preview failed")
	}
	started, isErr := svc.Call(t, "sonarr_episode_search", search, svc.Approve(t, "arr", "sonarr_episode_search", search, "spec-1"))
	if isErr {
		t.Fatalf("episode search: %v", started)
	}
	if got, isErr := svc.Call(t, "sonarr_command_status", map[string]any{"command_id": get(started, "result", "command_id")}, ""); isErr {
		t.Fatalf("command status: %v", got)
	}
	grab := map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1}
	if _, isErr := svc.Call(t, "sonarr_release_grab", grab, ""); isErr {
		t.Fatal("grab preview failed")
	}
	if got, isErr := svc.Call(t, "sonarr_release_grab", grab, svc.Approve(t, "arr", "sonarr_release_grab", grab, "spec-2")); isErr {
		t.Fatalf("grab: %v", got)
	}
	if got := spec.Used(); !slices.Equal(got, sonarrCalls) {
		t.Errorf("operations used:\n%q\nwant\n%q", got, sonarrCalls)
	}
}
