package radarr_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/radarr"
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

// A release Radarr could not match to a movie has no mappedMovieId, and
// DownloadRelease grabs it only with the movieId of the grab ("Unable to
// find matching movie, will need to be manually provided" otherwise): the
// forced grab sends the previewed movie and says so in the preview.
func TestForcedGrabOfAnUnmatchedReleaseNamesTheMovie(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	args := map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDNotAllowed, "indexer_id": 3, "force": true}
	prev, isErr := svc.Call(t, "radarr_release_grab", args, "")
	pv, _ := prev["preview"].(map[string]any)
	note, _ := pv["note"].(string)
	if isErr || !strings.Contains(note, "could not tell which movie") || !strings.Contains(note, "Dune: Part Two (movie 2)") {
		t.Fatalf("preview: %v", prev)
	}
	if got, isErr := svc.Call(t, "radarr_release_grab", args, svc.Approve(t, "arr", "radarr_release_grab", args, "r-unmatched")); isErr {
		t.Fatalf("grab: %v", got)
	}
	if g := e.fake.Grabs(); len(g) != 1 || g[0]["movieId"] != float64(2) {
		t.Fatalf("grabs %v", g)
	}
}

// A release Radarr matched to another movie would be grabbed for that
// movie (DownloadRelease keeps its own match): the preview refuses it.
func TestGrabOfAReleaseMatchedToAnotherMovieIsRefused(t *testing.T) {
	fake := fakeradarr.New(apiKey)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/api/v3/release" {
			fake.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		fake.ServeHTTP(rec, r)
		var rels []map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &rels)
		for _, rel := range rels {
			rel["mappedMovieId"] = 5
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rels)
	}))
	t.Cleanup(srv.Close)
	api, err := arrapi.New(arrapi.Config{App: "radarr", APIRoot: radarr.APIRoot, URL: srv.URL, APIKey: []byte(apiKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := toolkittest.Start(t, "arr", radarr.NewTools(radarr.New(api), func() time.Time { return fixedNow }))
	got, isErr := svc.Call(t, "radarr_release_grab", map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDApproved, "indexer_id": 1}, "")
	e, _ := got["error"].(map[string]any)
	if msg, _ := e["message"].(string); !isErr || e["code"] != "invalid_argument" || !strings.Contains(msg, "another movie (id 5)") {
		t.Fatalf("got %v", got)
	}
	if len(fake.Grabs()) != 0 {
		t.Fatal("grabbed")
	}
}
