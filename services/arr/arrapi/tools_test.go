package arrapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
)

func TestHumanSize(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{10 << 30, "10.0 GiB"}, {2 << 40, "2.0 TiB"}, {3 << 50, "3.0 PiB"}, {5 << 60, "5120.0 PiB"},
	}
	for _, tc := range cases {
		if got := HumanSize(tc.n); got != tc.want {
			t.Errorf("HumanSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes: never cut inside a rune
	}
	for _, tc := range cases {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestSafeDetails(t *testing.T) {
	data := map[string]string{
		"indexer": "NZBgeek", "message": "a long message", "empty": "",
		"downloadUrl": "http://prowlarr:9696/1/download?apikey=SECRET",
		"reason":      "https://tracker.example/dl?passkey=SECRET",
	}
	keys := []string{"indexer", "message", "empty", "reason", "absent"}
	cases := []struct {
		name string
		keys []string
		clip int
		want map[string]string
	}{
		{"unclipped", keys, 0, map[string]string{"indexer": "NZBgeek", "message": "a long message"}},
		{"clipped", keys, 6, map[string]string{"indexer": "NZBgee…", "message": "a long…"}},
		{"nothing left", []string{"empty", "downloadUrl"}, 0, nil},
	}
	for _, tc := range cases {
		if got := SafeDetails(data, tc.keys, tc.clip); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSortedUnique(t *testing.T) {
	cases := []struct {
		in     []int
		want   []int
		unique bool
	}{
		{[]int{3, 1, 2}, []int{1, 2, 3}, true},
		{[]int{2, 1, 2}, []int{1, 2, 2}, false},
		{nil, []int{}, true},
	}
	for _, tc := range cases {
		in := append([]int(nil), tc.in...)
		got, unique := SortedUnique(tc.in)
		if unique != tc.unique || len(got) != len(tc.want) || (len(got) > 0 && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("SortedUnique(%v) = %v, %v; want %v, %v", tc.in, got, unique, tc.want, tc.unique)
		}
		if !reflect.DeepEqual(in, tc.in) {
			t.Errorf("SortedUnique changed its argument: %v", tc.in)
		}
	}
}

func TestLanguageNames(t *testing.T) {
	if got := LanguageNames(nil); got != nil {
		t.Errorf("no languages: %v", got)
	}
	if got := LanguageNames([]Language{{1, "English"}, {2, "German"}}); !reflect.DeepEqual(got, []string{"English", "German"}) {
		t.Errorf("names: %v", got)
	}
}

// Grab posts exactly the guid, the indexer id and the ids a release
// Radarr or Sonarr cannot match needs (movieId; seriesId and episodeId),
// and explains each refusal with the app's own names while keeping its
// status.
func TestGrab(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
		var body struct {
			GUID string `json:"guid"`
		}
		_ = json.Unmarshal(b, &body)
		switch body.GUID {
		case "gone":
			w.WriteHeader(http.StatusNotFound)
		case "refused":
			w.WriteHeader(http.StatusConflict)
		case "odd":
			w.WriteHeader(http.StatusBadRequest)
		case "unmatched":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"Unable to find matching movie, will need to be manually provided","description":"NzbDrone.Core.Exceptions.NzbDroneClientException: …\n   at Radarr.Api.V3.Indexers.ReleaseController"}`))
		default:
			_, _ = w.Write([]byte(`{}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{App: "radarr", URL: srv.URL, APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Grab(context.Background(), GrabRequest{GUID: "abc", IndexerID: 3, MovieID: 7}, "radarr_release_search"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		guid   string
		status int
		code   toolerr.Code
		says   string
	}{
		{"gone", http.StatusNotFound, toolerr.NotFound, "search again with radarr_release_search"},
		{"refused", http.StatusConflict, toolerr.UpstreamUnavailable, "check radarr_health"},
		{"odd", http.StatusBadRequest, toolerr.InvalidArgument, "Radarr refused the grab (HTTP 400)"},
		{"unmatched", http.StatusNotFound, toolerr.InvalidArgument, "cannot tell which movie or episodes"},
	} {
		err := c.Grab(context.Background(), GrabRequest{GUID: tc.guid, IndexerID: 3}, "radarr_release_search")
		if Status(err) != tc.status || toolerr.CodeOf(err) != tc.code || !strings.Contains(toolerr.MessageOf(err), tc.says) ||
			!strings.Contains(toolerr.MessageOf(err), "nothing was grabbed") {
			t.Errorf("%s: %v (status %d, code %s)", tc.guid, err, Status(err), toolerr.CodeOf(err))
		}
	}
	want := []string{`POST /api/v3/release {"guid":"abc","indexerId":3,"movieId":7}`, `POST /api/v3/release {"guid":"gone","indexerId":3}`,
		`POST /api/v3/release {"guid":"refused","indexerId":3}`, `POST /api/v3/release {"guid":"odd","indexerId":3}`,
		`POST /api/v3/release {"guid":"unmatched","indexerId":3}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
}

// An app runs at most MaxSearches indexer searches at once; one more is
// busy at once and never reaches the app, and a search is never retried.
func TestSearchesAreBounded(t *testing.T) {
	entered, release := make(chan struct{}, MaxSearches), make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/api/v3/release" {
			entered <- struct{}{}
			<-release
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{App: "sonarr", URL: srv.URL, APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, MaxSearches)
	for range MaxSearches {
		wg.Go(func() { errs <- c.GetSlow(context.Background(), "/release", nil, &[]any{}) })
	}
	for range MaxSearches {
		<-entered
	}
	err = c.GetSlow(context.Background(), "/release", nil, &[]any{})
	if toolerr.CodeOf(err) != toolerr.Busy || hits.Load() != MaxSearches {
		t.Errorf("a third search: %v, hits %d", err, hits.Load())
	}
	// Other requests are not bound by the searches.
	if err := c.Get(context.Background(), "/series", nil, &[]any{}); err != nil {
		t.Errorf("a read during the searches: %v", err)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if toolerr.CodeOf(err) != toolerr.UpstreamUnavailable {
			t.Errorf("search: %v", err)
		}
	}
	if got := hits.Load(); got != MaxSearches+1 {
		t.Errorf("%d requests reached the app; a 503 search must not be retried", got)
	}
}
