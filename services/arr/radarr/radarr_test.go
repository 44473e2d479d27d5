package radarr_test

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake/arrspec"
	"github.com/toolgate/toolgate/services/arr/radarr"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

const apiKey = "radarr-SECRET-api-key-77c0e2"

// fixedNow is "today" for the calendar default.
var fixedNow = time.Date(2025, 11, 3, 12, 0, 0, 0, time.UTC)

type env struct {
	fake  *fakeradarr.Server
	spec  *arrspec.Checker
	tools []toolkit.Tool
	logs  *capture.Buffer
}

// newEnv runs a fake Radarr and builds the radarr_ tools against it with
// key (the fake accepts apiKey only).
func newEnv(t *testing.T, key string, searchTimeout time.Duration) *env {
	t.Helper()
	fake := fakeradarr.New(apiKey)
	// Every request and answer is checked against Radarr's OpenAPI
	// document.
	h, spec := arrspec.Wrap(t, arrspec.Radarr, fake, radarrLooseBodies...)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	logs := &capture.Buffer{}
	api, err := arrapi.New(arrapi.Config{
		App: "radarr", APIRoot: radarr.APIRoot, URL: srv.URL, APIKey: []byte(key), AllowHTTP: true,
		SearchTimeout: searchTimeout, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return &env{fake: fake, spec: spec, tools: radarr.NewTools(radarr.New(api), func() time.Time { return fixedNow }), logs: logs}
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestNilClientHasNoTools(t *testing.T) {
	if got := radarr.Tools(radarr.New(nil)); len(got) != 0 {
		t.Fatalf("tools without Radarr: %d", len(got))
	}
}

func TestReadTools(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	cases := []struct {
		name      string
		tool      string
		args      map[string]any
		want      []string
		wantNot   []string
		wantPath  string
		wantQuery map[string]string
	}{
		{"list all", "radarr_movie_list", map[string]any{}, []string{`"library_size":5`, `"matched":5`, `"title":"Blade Runner 2049"`, `"quality":"Bluray-1080p"`, `"has_file":true`}, nil, "/api/v3/movie", nil},
		{"list search", "radarr_movie_list", map[string]any{"search": "DUNE"}, []string{`"matched":1`, `"id":2`, `"title":"Dune: Part Two"`}, []string{"Matrix"}, "/api/v3/movie", nil},
		{"list paging", "radarr_movie_list", map[string]any{"limit": 2, "offset": 1}, []string{`"returned":2`, `"title":"Dune: Part Two"`, `"title":"Mickey 17"`}, []string{"Blade Runner"}, "/api/v3/movie", nil},
		{"lookup", "radarr_movie_lookup", map[string]any{"term": "arrival"}, []string{`"title":"Arrival"`, `"in_library":false`, `"tmdb_id":329865`}, nil, "/api/v3/movie/lookup", map[string]string{"term": "arrival"}},
		{"lookup in library", "radarr_movie_lookup", map[string]any{"term": "matrix"}, []string{`"in_library":true`, `"library_id":1`}, nil, "/api/v3/movie/lookup", nil},
		{"get with file", "radarr_movie_get", map[string]any{"movie_id": 1}, []string{`"title":"The Matrix"`, `"movie_file":{`, `"quality":"Bluray-1080p"`, `"size":"10.0 GiB"`, `"languages":["English"]`}, nil, "/api/v3/movie/1", nil},
		{"missing monitored", "radarr_wanted_missing", map[string]any{"page_size": 2}, []string{`"total_records":3`, `"page_size":2`, `"title":"Dune: Part Two"`}, []string{"Nosferatu", "Matrix"}, "/api/v3/wanted/missing", map[string]string{"page": "1", "pageSize": "2", "monitored": "true"}},
		{"missing unmonitored", "radarr_wanted_missing", map[string]any{"monitored": false}, []string{`"total_records":1`, `"title":"Nosferatu"`}, nil, "/api/v3/wanted/missing", map[string]string{"monitored": "false"}},
		{"calendar default window", "radarr_calendar", map[string]any{}, []string{`"start":"2025-11-03"`, `"end":"2025-12-03"`, `"title":"Mickey 17"`, `"count":1`}, nil, "/api/v3/calendar", map[string]string{"start": "2025-11-03T00:00:00Z", "end": "2025-12-03T23:59:59Z", "unmonitored": "false"}},
		{"calendar window", "radarr_calendar", map[string]any{"start": "2024-12-01", "end": "2025-01-31", "unmonitored": true}, []string{`"title":"Nosferatu"`}, []string{"Mickey"}, "/api/v3/calendar", map[string]string{"unmonitored": "true"}},
		{"queue with status messages", "radarr_queue", map[string]any{}, []string{`"movie":"Blade Runner 2049"`, `"progress_percent":75`, `"tracked_state":"importBlocked"`, `"Not an upgrade for existing movie file. Existing quality: Bluray-1080p"`, `"total_records":3`}, []string{"downloadId", "SABnzbd_nzo", "/downloads/"}, "/api/v3/queue", map[string]string{"includeMovie": "true", "pageSize": "20"}},
		{"history", "radarr_history", map[string]any{"movie_id": 1}, []string{`"event_type":"grabbed"`, `"indexer":"NZBgeek (Prowlarr)"`, `"movie":"The Matrix"`, `"total_records":2`}, []string{"downloadUrl", "guid", "droppedPath", "importedPath"}, "/api/v3/history", map[string]string{"movieIds": "1", "sortKey": "date", "sortDirection": "descending"}},
		{"health", "radarr_health", map[string]any{}, []string{`"ok":false`, `"source":"DownloadClientCheck"`, `"version":`}, nil, "/api/v3/system/status", nil},
		{"disk space", "radarr_disk_space", map[string]any{}, []string{`"path":"/movies"`, `"free":"2.0 TiB"`, `"free_percent":12`}, nil, "/api/v3/diskspace", nil},
		{"release search", "radarr_release_search", map[string]any{"movie_id": 2}, []string{`"total":6`, `"temporarily_rejected":true`, `"guid":"` + fakeradarr.GUIDApproved + `"`, `"guid":"sha256:`, `"download_allowed":false`, `"rejections":["CAM is not wanted in profile"]`, `"indexer_id":3`, `"existing_file":null`}, []string{"magnet:", "downloadUrl", "download_url", "prowlarr:9696"}, "/api/v3/movie/2", nil},
		{"release search limit", "radarr_release_search", map[string]any{"movie_id": 2, "limit": 1}, []string{`"returned":1`, `"total":6`}, nil, "/api/v3/movie/2", nil},
	}
	reads := make([]toolkittest.ReadCase, 0, len(cases))
	for _, tc := range cases {
		var before int
		reads = append(reads, toolkittest.ReadCase{Name: tc.name, Tool: tc.tool, Args: tc.args, Has: tc.want, HasNot: tc.wantNot,
			Before: func() { before = len(e.fake.Requests()) },
			Check: func(t *testing.T, _ map[string]any) {
				reqs := e.fake.Requests()[before:]
				if len(reqs) == 0 || reqs[0].Path != tc.wantPath {
					t.Fatalf("requests %v, want first %s", reqs, tc.wantPath)
				}
				for k, v := range tc.wantQuery {
					if got := reqs[0].Query.Get(k); got != v {
						t.Errorf("query %s = %q, want %q", k, got, v)
					}
				}
			}})
	}
	svc.RunReads(t, reads, append([]string{apiKey}, fakeradarr.PlantedSecrets()...)...)
	t.Run("command status", func(t *testing.T) {
		tok := svc.Approve(t, "arr", "radarr_movie_search", map[string]any{"movie_ids": []int{3}}, "t-cmd")
		done, isErr := svc.Call(t, "radarr_movie_search", map[string]any{"movie_ids": []int{3}}, tok)
		if isErr {
			t.Fatalf("apply: %v", done)
		}
		got, isErr := svc.Call(t, "radarr_command_status", map[string]any{"command_id": 1001}, "")
		if s := encode(t, got); isErr || !strings.Contains(s, `"status":"queued"`) || !strings.Contains(s, `"name":"MoviesSearch"`) {
			t.Fatalf("status: %v", got)
		}
		got, isErr = svc.Call(t, "radarr_command_status", map[string]any{"command_id": 9}, "")
		if !isErr || gatewaytest.ErrorCode(got) != "not_found" {
			t.Fatalf("unknown command: %v", got)
		}
	})
}

func TestBadInputNeverReachesRadarr(t *testing.T) {
	e := newEnv(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", e.tools)
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"radarr_movie_get", map[string]any{}},
		{"radarr_movie_get", map[string]any{"movie_id": -1}},
		{"radarr_movie_list", map[string]any{"limit": 0}},
		{"radarr_movie_lookup", map[string]any{"term": ""}},
		{"radarr_wanted_missing", map[string]any{"page_size": 1000}},
		{"radarr_calendar", map[string]any{"start": "03.11.2025"}},
		{"radarr_calendar", map[string]any{"start": "2025-11-10", "end": "2025-11-01"}},
		{"radarr_calendar", map[string]any{"start": "2020-01-01", "end": "2025-01-01"}},
		{"radarr_history", map[string]any{"movie_id": "1"}},
		{"radarr_command_status", map[string]any{"command_id": 0}},
		{"radarr_release_search", map[string]any{"movie_id": 2, "extra": true}},
		{"radarr_movie_search", map[string]any{"movie_ids": []int{}}},
		{"radarr_movie_search", map[string]any{"movie_ids": []int{2, 2}}},
		{"radarr_release_grab", map[string]any{"movie_id": 2, "guid": "", "indexer_id": 1}},
		{"radarr_release_grab", map[string]any{"movie_id": 2, "guid": " x", "indexer_id": 1}},
		{"radarr_release_grab", map[string]any{"movie_id": 2, "guid": "x", "indexer_id": 1, "force": "yes"}},
	}
	for _, tc := range cases {
		got, isErr := svc.Call(t, tc.tool, tc.args, "")
		if !isErr || gatewaytest.ErrorCode(got) != "invalid_argument" {
			t.Errorf("%s %v: %v", tc.tool, tc.args, got)
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Fatalf("bad input sent %d requests to Radarr", n)
	}
}

func TestUpstreamErrors(t *testing.T) {
	t.Run("unknown movie", func(t *testing.T) {
		e := newEnv(t, apiKey, 0)
		svc := toolkittest.Start(t, "arr", e.tools)
		for _, tool := range []string{"radarr_movie_get", "radarr_release_search"} {
			got, isErr := svc.Call(t, tool, map[string]any{"movie_id": 99}, "")
			if !isErr || gatewaytest.ErrorCode(got) != "not_found" || !strings.Contains(encode(t, got), "radarr_movie_list") {
				t.Fatalf("%s: %v", tool, got)
			}
		}
	})
	t.Run("wrong API key", func(t *testing.T) {
		wrong := "wrong-SECRET-radarr-key-0000"
		e := newEnv(t, wrong, 0)
		svc := toolkittest.Start(t, "arr", e.tools)
		for _, tool := range []string{"radarr_movie_list", "radarr_health", "radarr_queue"} {
			got, isErr := svc.Call(t, tool, map[string]any{}, "")
			s := encode(t, got)
			if !isErr || gatewaytest.ErrorCode(got) != "auth_failed" || !strings.Contains(s, "RADARR_API_KEY_FILE") || strings.Contains(s, wrong) {
				t.Fatalf("%s: %v", tool, got)
			}
		}
	})
	t.Run("release search deadline", func(t *testing.T) {
		// The fake holds the search until the client gives up, so the
		// outcome does not depend on timing.
		e := newEnv(t, apiKey, 200*time.Millisecond)
		svc := toolkittest.Start(t, "arr", e.tools)
		release := e.fake.BlockSearches()
		defer release()
		got, isErr := svc.Call(t, "radarr_release_search", map[string]any{"movie_id": 2}, "")
		if !isErr || gatewaytest.ErrorCode(got) != "timeout" {
			t.Fatalf("got %v", got)
		}
		n := 0
		for _, r := range e.fake.Requests() {
			if r.Path == "/api/v3/release" {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("release search sent %d times; it must never be retried", n)
		}
	})
}

func TestToolDefinitions(t *testing.T) {
	e := newEnv(t, apiKey, 45*time.Second)
	byName := map[string]toolkit.Tool{}
	for _, tl := range e.tools {
		byName[tl.Name] = tl
	}
	for _, name := range []string{"radarr_release_search", "radarr_release_grab"} {
		tl := byName[name]
		if tl.Timeout != 55*time.Second || !strings.Contains(tl.Description, "55s") {
			t.Errorf("%s: timeout %v, description %q", name, tl.Timeout, tl.Description)
		}
	}
	writes := map[string]bool{"radarr_movie_search": true, "radarr_release_grab": true}
	for name, tl := range byName {
		if tl.IsWrite() != writes[name] {
			t.Errorf("%s: write=%v", name, tl.IsWrite())
		}
		if tl.IsWrite() && (tl.Annotations.Destructive || tl.Annotations.ReadOnly) {
			t.Errorf("%s: annotations %+v", name, tl.Annotations)
		}
		if name != "radarr_release_search" && name != "radarr_release_grab" && tl.Timeout != 0 {
			t.Errorf("%s has a custom timeout", name)
		}
	}
	if d := byName["radarr_release_grab"].Description; !strings.Contains(d, "quality profile") || !strings.Contains(d, "Deletes nothing") {
		t.Errorf("grab description does not say who decides replacement: %q", d)
	}
	if len(byName) != 13 {
		t.Errorf("%d tools", len(byName))
	}
}

// radarrLooseBodies: as Sonarr's, Radarr's document declares POST /command
// as a CommandResource while CommandController binds the named command's
// type (MoviesSearchCommand takes movieIds), which TestMovieSearchFlow
// checks.
var radarrLooseBodies = []string{"POST /api/v3/command"}
