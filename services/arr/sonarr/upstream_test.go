package sonarr_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/sonarr"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
)

// Sonarr's own reason reaches the result, framed as its words: the message
// of an NzbDroneClientException (SonarrErrorPipeline writes {message,
// description}; the description is the exception with its stack trace and
// never shown) and of the search's catch-all 500.
func TestSonarrsReasonReachesTheResult(t *testing.T) {
	grab := func(guid string) map[string]any {
		return map[string]any{"series_id": 1, "season": 1, "guid": guid, "indexer_id": 1}
	}
	for _, tc := range []struct {
		name, guid, code, said string
	}{
		{"not in the release cache", fakesonarr.GUIDUncached, "not_found", `Sonarr said: "Couldn't find requested release in cache, try searching again"`},
		{"the indexer refused", fakesonarr.GUIDRefused, "upstream_unavailable", `Sonarr said: "Getting release from indexer failed"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tools := setup(t, apiKey, 0)
			svc := toolkittest.Start(t, "arr", tools)
			if _, isErr := svc.Call(t, "sonarr_release_grab", grab(tc.guid), ""); isErr {
				t.Fatal("preview failed")
			}
			tok := svc.Approve(t, "arr", "sonarr_release_grab", grab(tc.guid), "r-"+tc.code)
			got, isErr := svc.Call(t, "sonarr_release_grab", grab(tc.guid), tok)
			msg := errMsg(got)
			if !isErr || errCode(got) != tc.code || !strings.HasSuffix(msg, tc.said) || strings.Contains(msg, "   at ") || strings.Contains(msg, "NzbDrone") {
				t.Fatalf("got %q (%s)", msg, errCode(got))
			}
			noSecrets(t, "grab", got)
		})
	}
}

// Sonarr hides queue items it cannot match to a series unless asked
// (QueueController.GetQueue, includeUnknownSeriesItems=false); those are
// the stuck downloads the queue tool exists to explain.
func TestQueueShowsDownloadsSonarrCannotMatch(t *testing.T) {
	fake, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	got, isErr := svc.Call(t, "sonarr_queue", map[string]any{}, "")
	if isErr || got["total_records"] != 3.0 || get(got, "items", 2, "title") != "Some.Unknown.Show.S01E01.1080p.WEB-DL-XYZ" ||
		get(got, "items", 2, "status_messages", 0, "messages", 0) != "Unable to parse download, automatic import is not possible." {
		t.Fatalf("%v", got)
	}
	last := fake.Requests()[len(fake.Requests())-1]
	if last.Query.Get("includeUnknownSeriesItems") != "true" || last.Query.Get("sortKey") != "timeleft" || last.Query.Get("sortDirection") != "ascending" {
		t.Errorf("queue asked with %v", last.Query)
	}
}

// Sonarr answers a queue page past the end with an earlier page; the
// result says so instead of passing the records off as the page asked for.
func TestQueuePagePastTheEndIsNamed(t *testing.T) {
	_, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	got, isErr := svc.Call(t, "sonarr_queue", map[string]any{"page": 5, "page_size": 2}, "")
	note, _ := got["note"].(string)
	if isErr || got["page"] != 1.0 || !strings.Contains(note, "page 5 is past the end") {
		t.Fatalf("%v", got)
	}
}

// MissingController sorts only by episodes.airDateUtc,
// episodes.lastSearchTime or series.sortTitle and silently falls back for
// any other key; the tool asks with the key Sonarr knows.
func TestWantedMissingAsksWithASortKeySonarrKnows(t *testing.T) {
	fake, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	if got, isErr := svc.Call(t, "sonarr_wanted_missing", map[string]any{}, ""); isErr {
		t.Fatalf("%v", got)
	}
	last := fake.Requests()[len(fake.Requests())-1]
	if last.Query.Get("sortKey") != "episodes.airDateUtc" || last.Query.Get("sortDirection") != "descending" {
		t.Errorf("wanted/missing asked with %v", last.Query)
	}
}

// A release Sonarr matched to another series would be grabbed for that
// series (DownloadRelease keeps its own match): the preview refuses it.
func TestGrabOfAReleaseMatchedToAnotherSeriesIsRefused(t *testing.T) {
	fake := fakesonarr.New(apiKey, clock)
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
			rel["mappedSeriesId"] = 2
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rels)
	}))
	t.Cleanup(srv.Close)
	api, err := arrapi.New(arrapi.Config{App: "sonarr", URL: srv.URL, APIKey: []byte(apiKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	svc := toolkittest.Start(t, "arr", sonarr.Tools(sonarr.NewClient(api), clock))
	got, isErr := svc.Call(t, "sonarr_release_grab", map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1}, "")
	if !isErr || errCode(got) != "invalid_argument" || !strings.Contains(errMsg(got), "another series (id 2)") {
		t.Fatalf("got %v", got)
	}
	if len(fake.Writes()) != 0 {
		t.Fatal("grabbed")
	}
}
