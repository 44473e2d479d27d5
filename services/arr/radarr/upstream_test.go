package radarr_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
)

// Radarr's own reason reaches the result, framed as its words
// (ReleaseController: NzbDroneClientException(409, "Getting release from
// indexer failed"); the pipeline's description, the stack trace, never
// shows).
func TestRadarrsReasonReachesTheResult(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	args := map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDRefused, "indexer_id": 3}
	if _, isErr := svc.Call(t, "radarr_release_grab", args, ""); isErr {
		t.Fatal("preview failed")
	}
	got, isErr := svc.Call(t, "radarr_release_grab", args, svc.Approve(t, "arr", "radarr_release_grab", args, "r-1"))
	e2, _ := got["error"].(map[string]any)
	msg, _ := e2["message"].(string)
	if !isErr || e2["code"] != "upstream_unavailable" || !strings.HasSuffix(msg, `Radarr said: "Getting release from indexer failed"`) || strings.Contains(msg, "   at ") {
		t.Fatalf("got %v", got)
	}
}

// Without a sort direction Radarr sorts wanted/missing descending by its
// default key, the title: Z to A. The tool asks for A to Z.
func TestWantedMissingListsTitlesAToZ(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	got, isErr := svc.Call(t, "radarr_wanted_missing", map[string]any{}, "")
	movies, _ := got["movies"].([]any)
	var titles []string
	for _, m := range movies {
		titles = append(titles, m.(map[string]any)["title"].(string))
	}
	if isErr || len(titles) < 2 || strings.ToLower(titles[0]) > strings.ToLower(titles[len(titles)-1]) {
		t.Fatalf("titles %q (%v)", titles, got)
	}
}

// Radarr hides queue items it cannot match to a movie unless asked
// (includeUnknownMovieItems); those are the stuck imports.
func TestQueueShowsDownloadsRadarrCannotMatch(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	got, isErr := svc.Call(t, "radarr_queue", map[string]any{}, "")
	if isErr || got["total_records"] != 3.0 || !strings.Contains(encode(t, got), "Unable to parse download, automatic import is not possible.") {
		t.Fatalf("%v", got)
	}
}
