package prowlarr_test

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
	"github.com/toolgate/toolgate/services/arr/prowlarr"
	"github.com/toolgate/toolgate/services/arr/prowlarr/fakeprowlarr"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

const apiKey = "prowlarr-SECRET-api-key-4e1b9c"

type env struct {
	fake *fakeprowlarr.Server
	spec *arrspec.Checker
	svc  *toolkittest.Service
	logs *capture.Buffer
	tool map[string]toolkit.Tool
}

// start runs the prowlarr_ tools against a fake Prowlarr; key is the key
// the service uses (the fake accepts apiKey only).
func start(t *testing.T, key string, searchTimeout time.Duration) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	fake := fakeprowlarr.New(apiKey, "http://"+srv.Listener.Addr().String())
	// Every request and answer is checked against Prowlarr's OpenAPI
	// document.
	h, spec := arrspec.Wrap(t, arrspec.Prowlarr, fake)
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	logs := &capture.Buffer{}
	api, err := arrapi.New(arrapi.Config{
		App: "prowlarr", APIRoot: prowlarr.APIRoot, URL: srv.URL, APIKey: []byte(key), AllowHTTP: true,
		SearchTimeout: searchTimeout, Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	tools := prowlarr.Tools(prowlarr.New(api))
	byName := map[string]toolkit.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	return &env{fake: fake, spec: spec, svc: toolkittest.Start(t, "arr", tools), logs: logs, tool: byName}
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
	if got := prowlarr.Tools(prowlarr.New(nil)); len(got) != 0 {
		t.Fatalf("tools without Prowlarr: %d", len(got))
	}
}

func TestReadTools(t *testing.T) {
	e := start(t, apiKey, 0)
	cases := []struct {
		name      string
		tool      string
		args      map[string]any
		want      []string // substrings of the JSON result
		wantNot   []string
		wantPath  string
		wantQuery map[string][]string
	}{
		{
			name: "indexer list", tool: "prowlarr_indexer_list", args: map[string]any{},
			want:     []string{`"count":4`, `"name":"NZBgeek"`, `"name":"TorrentLeech"`, `"disabled_till":"2026-02-01T08:00:00Z"`, `"enabled":false`},
			wantNot:  []string{"settings", "baseUrl"},
			wantPath: "/api/v1/indexer",
		},
		{
			name: "indexer get masks credentials", tool: "prowlarr_indexer_get", args: map[string]any{"id": 2},
			want:     []string{`"name":"TorrentLeech"`, `{"label":"Base Url","name":"baseUrl","value":"https://www.torrentleech.org/"}`, `{"label":"Username","masked":true,"name":"username"}`, `{"label":"Password","masked":true,"name":"password"}`, `{"label":"Cookie","masked":true,"name":"cookie"}`, `{"label":"Search freeleech only","name":"freeleech","value":false}`, `"2000 Movies"`},
			wantNot:  []string{"info_tpp", "Help text"},
			wantPath: "/api/v1/indexer/2",
		},
		{
			name: "indexer get masks api key and key-bearing links", tool: "prowlarr_indexer_get", args: map[string]any{"id": 4},
			want:     []string{`{"label":"RSS key","masked":true,"name":"rssKey"}`, `{"label":"Feed","masked":true,"name":"feedUrl"}`},
			wantPath: "/api/v1/indexer/4",
		},
		{
			name: "indexer status names failing indexers", tool: "prowlarr_indexer_status", args: map[string]any{},
			want:     []string{`"count":1`, `"indexer_id":2`, `"indexer":"TorrentLeech"`, `"most_recent_failure":"2025-11-03T06:00:00Z"`},
			wantPath: "/api/v1/indexerstatus",
		},
		{
			name: "indexer stats with window and ids", tool: "prowlarr_indexer_stats",
			args:      map[string]any{"start": "2025-10-01T00:00:00Z", "end": "2025-11-01T00:00:00+01:00", "indexer_ids": []int{1, 3}},
			want:      []string{`"indexer":"NZBgeek"`, `"indexer":"1337x"`, `"queries":120`, `"name":"Sonarr/4.0.15"`},
			wantNot:   []string{"TorrentLeech"},
			wantPath:  "/api/v1/indexerstats",
			wantQuery: map[string][]string{"startDate": {"2025-10-01T00:00:00Z"}, "endDate": {"2025-10-31T23:00:00Z"}, "indexers": {"1,3"}},
		},
		{
			name: "health", tool: "prowlarr_health", args: map[string]any{},
			want:     []string{`"ok":false`, `"source":"IndexerStatusCheck"`, `"type":"warning"`, `"wiki_url":"https://wiki.servarr.com/prowlarr/system#indexers-are-unavailable-due-to-failures"`},
			wantPath: "/api/v1/system/status",
		},
		{
			name: "search with filters", tool: "prowlarr_search",
			args:      map[string]any{"query": "matrix", "type": "movie", "categories": []int{2000}, "indexer_ids": []int{2, 3}},
			want:      []string{`"returned":2`, `"title":"The.Matrix.1999.720p.WEB-DL.DD5.1.H264"`, `"info_url":"https://1337x.to/torrent/123/The-Matrix-1999/"`, `"size":"57.0 GiB"`, `"seeders":54`, `"categories":["2000 Movies","2045 Movies/UHD"]`},
			wantNot:   []string{"NZBgeek", "downloadUrl", "download_url", "magnet:", "torrentleech.org/torrent", "guid"},
			wantPath:  "/api/v1/search",
			wantQuery: map[string][]string{"query": {"matrix"}, "type": {"movie"}, "categories": {"2000"}, "indexerIds": {"2", "3"}, "limit": {"25"}},
		},
		{
			name: "search limit cuts results", tool: "prowlarr_search", args: map[string]any{"query": "matrix", "limit": 1},
			want:     []string{`"returned":1`, `"total":3`},
			wantPath: "/api/v1/search",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(e.fake.Requests())
			got, isErr := e.svc.Call(t, tc.tool, tc.args, "")
			if isErr {
				t.Fatalf("error: %v", got)
			}
			s := encode(t, got)
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("result lacks %s:\n%s", w, s)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(s, w) {
					t.Errorf("result contains %s:\n%s", w, s)
				}
			}
			reqs := e.fake.Requests()[before:]
			if len(reqs) == 0 || reqs[0].Path != tc.wantPath {
				t.Fatalf("requests %v, want first %s", reqs, tc.wantPath)
			}
			for k, v := range tc.wantQuery {
				if got := reqs[0].Query[k]; strings.Join(got, "|") != strings.Join(v, "|") {
					t.Errorf("query %s = %v, want %v", k, got, v)
				}
			}
		})
	}
}

func TestBadInputNeverReachesProwlarr(t *testing.T) {
	e := start(t, apiKey, 0)
	cases := []struct {
		tool string
		args map[string]any
		code string
	}{
		{"prowlarr_indexer_get", map[string]any{"id": 0}, "invalid_argument"},
		{"prowlarr_indexer_get", map[string]any{"id": "2"}, "invalid_argument"},
		{"prowlarr_indexer_list", map[string]any{"extra": 1}, "invalid_argument"},
		{"prowlarr_indexer_stats", map[string]any{"start": "yesterday"}, "invalid_argument"},
		{"prowlarr_indexer_stats", map[string]any{"start": "2025-11-02T00:00:00Z", "end": "2025-11-01T00:00:00Z"}, "invalid_argument"},
		{"prowlarr_search", map[string]any{}, "invalid_argument"},
		{"prowlarr_search", map[string]any{"query": "x", "type": "audio"}, "invalid_argument"},
		{"prowlarr_search", map[string]any{"query": "x", "limit": 500}, "invalid_argument"},
		{"prowlarr_search", map[string]any{"query": "x", "categories": []any{"movies"}}, "invalid_argument"},
	}
	for _, tc := range cases {
		got, isErr := e.svc.Call(t, tc.tool, tc.args, "")
		if !isErr || gatewaytest.ErrorCode(got) != tc.code {
			t.Errorf("%s %v: %v", tc.tool, tc.args, got)
		}
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Fatalf("bad input sent %d requests to Prowlarr", n)
	}
}

func TestUpstreamErrors(t *testing.T) {
	t.Run("unknown indexer", func(t *testing.T) {
		e := start(t, apiKey, 0)
		got, isErr := e.svc.Call(t, "prowlarr_indexer_get", map[string]any{"id": 99}, "")
		if !isErr || gatewaytest.ErrorCode(got) != "not_found" || !strings.Contains(encode(t, got), "prowlarr_indexer_list") {
			t.Fatalf("got %v", got)
		}
	})
	t.Run("wrong API key", func(t *testing.T) {
		wrong := "wrong-SECRET-key-000000"
		e := start(t, wrong, 0)
		for _, tool := range []string{"prowlarr_indexer_list", "prowlarr_health"} {
			got, isErr := e.svc.Call(t, tool, map[string]any{}, "")
			s := encode(t, got)
			if !isErr || gatewaytest.ErrorCode(got) != "auth_failed" || !strings.Contains(s, "PROWLARR_API_KEY_FILE") || strings.Contains(s, wrong) {
				t.Fatalf("%s: %v", tool, got)
			}
		}
	})
	t.Run("search deadline", func(t *testing.T) {
		// The fake holds the search until the client gives up, so the
		// outcome does not depend on timing.
		e := start(t, apiKey, 200*time.Millisecond)
		release := e.fake.BlockSearches()
		defer release()
		got, isErr := e.svc.Call(t, "prowlarr_search", map[string]any{"query": "matrix"}, "")
		if !isErr || gatewaytest.ErrorCode(got) != "timeout" {
			t.Fatalf("got %v", got)
		}
		// Searches are never retried: each one costs every indexer a query.
		if n := len(e.fake.Requests()); n != 1 {
			t.Fatalf("search sent %d requests", n)
		}
	})
}

func TestSearchHasItsOwnDeadline(t *testing.T) {
	e := start(t, apiKey, 45*time.Second)
	s := e.tool["prowlarr_search"]
	if s.Timeout != 55*time.Second || !strings.Contains(s.Description, "own deadline of 55s") {
		t.Fatalf("timeout %v, description %q", s.Timeout, s.Description)
	}
	for name, tl := range e.tool {
		if name != "prowlarr_search" && tl.Timeout != 0 {
			t.Errorf("%s has a custom timeout", name)
		}
		if tl.IsWrite() || !tl.Annotations.ReadOnly {
			t.Errorf("%s is not a read-only tool", name)
		}
	}
}

// Every tool runs behind a real gateway; no API key or planted indexer
// credential may appear in any result, log line, audit line or response
// on the wire. The redactor is not told the keys, so this proves the tools
// themselves drop them.
func TestNoSecretLeaves(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	fake := fakeprowlarr.New(apiKey, "http://"+srv.Listener.Addr().String())
	srv.Config.Handler = fake
	srv.Start()
	t.Cleanup(srv.Close)
	logs := &capture.Buffer{}
	api, err := arrapi.New(arrapi.Config{
		App: "prowlarr", APIRoot: prowlarr.APIRoot, URL: srv.URL, APIKey: []byte(apiKey), AllowHTTP: true,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "arr", Tools: prowlarr.Tools(prowlarr.New(api))})
	c := g.Client("openwebui", "ann@example.org")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"prowlarr_indexer_list", map[string]any{}},
		{"prowlarr_indexer_get", map[string]any{"id": 1}},
		{"prowlarr_indexer_get", map[string]any{"id": 2}},
		{"prowlarr_indexer_get", map[string]any{"id": 4}},
		{"prowlarr_indexer_status", map[string]any{}},
		{"prowlarr_indexer_stats", map[string]any{}},
		{"prowlarr_health", map[string]any{}},
		{"prowlarr_search", map[string]any{"query": "matrix"}},
		{"prowlarr_search", map[string]any{"query": "severance", "type": "tvsearch"}},
	}
	var results strings.Builder
	for _, cl := range calls {
		got, isErr := gatewaytest.Call(t, c, cl.tool, cl.args)
		if isErr {
			t.Fatalf("%s: %v", cl.tool, got)
		}
		results.WriteString(encode(t, got))
	}
	if !strings.Contains(results.String(), "Severance S02") || !strings.Contains(results.String(), `masked`) {
		t.Fatalf("calls did not return the seeded data: %.500s", results.String())
	}
	g.NoLeaks(t, append([]string{apiKey}, fakeprowlarr.PlantedSecrets()...), map[string]string{"results": results.String(), "client logs": logs.String()})
}
