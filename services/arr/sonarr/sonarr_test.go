package sonarr_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake/arrspec"
	"github.com/toolgate/toolgate/services/arr/sonarr"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
)

const apiKey = "sonarr-test-SECRET-apikey-0123456789"

// now is the fixed clock of the fake and the tools.
var now = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// setup starts a fake Sonarr and returns it with the Sonarr tools over a
// client that uses key. searchTimeout 0 means the default.
// Every request and answer is checked against Sonarr's OpenAPI document
// (arrspec).
func setup(t *testing.T, key string, searchTimeout time.Duration) (*fakesonarr.Server, []toolkit.Tool) {
	t.Helper()
	fake, tools, _ := setupSpec(t, key, searchTimeout)
	return fake, tools
}

// setupSpec is setup that also returns the document's checker.
func setupSpec(t *testing.T, key string, searchTimeout time.Duration) (*fakesonarr.Server, []toolkit.Tool, *arrspec.Checker) {
	t.Helper()
	fake := fakesonarr.New(apiKey, clock)
	h, spec := arrspec.Wrap(t, arrspec.Sonarr, fake, sonarrLooseBodies...)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	api, err := arrapi.New(arrapi.Config{App: "sonarr", URL: srv.URL, APIKey: []byte(key), AllowHTTP: true, SearchTimeout: searchTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return fake, sonarr.Tools(sonarr.NewClient(api), clock), spec
}

// secrets are every credential a result must never show.
var secrets = []string{apiKey, fakesonarr.ProwlarrKey, fakesonarr.TrackerPasskey, "passkey", "apikey", "magnet:"}

func noSecrets(t *testing.T, what string, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	for _, s := range secrets {
		if strings.Contains(strings.ToLower(string(b)), strings.ToLower(s)) {
			t.Errorf("%s shows %q: %.400s", what, s, b)
		}
	}
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func errMsg(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["message"].(string)
	return c
}

// get walks a decoded JSON value: get(m, "series", 0, "id").
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestReads(t *testing.T) {
	_, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, got map[string]any)
	}{
		{"series search", "sonarr_series_list", map[string]any{"query": "EXP"}, func(t *testing.T, got map[string]any) {
			if got["matched"] != 1.0 || got["library_size"] != 3.0 || get(got, "series", 0, "id") != 1.0 || get(got, "series", 0, "episodes") != "6/12" {
				t.Fatalf("%v", got)
			}
		}},
		{"series list limit", "sonarr_series_list", map[string]any{"limit": 1}, func(t *testing.T, got map[string]any) {
			if got["matched"] != 3.0 || len(got["series"].([]any)) != 1 || get(got, "series", 0, "title") != "Severance" {
				t.Fatalf("%v", got)
			}
		}},
		{"series with seasons", "sonarr_series_get", map[string]any{"series_id": 1}, func(t *testing.T, got map[string]any) {
			if get(got, "seasons", 0, "season") != 1.0 || get(got, "seasons", 0, "episodes_with_file") != 4.0 || get(got, "seasons", 1, "episodes_with_file") != 2.0 || get(got, "seasons", 1, "episodes_total") != 6.0 {
				t.Fatalf("%v", got)
			}
		}},
		{"episodes of a season", "sonarr_episodes", map[string]any{"series_id": 1, "season": 1}, func(t *testing.T, got map[string]any) {
			if got["count"] != 6.0 || got["with_file"] != 4.0 || get(got, "episodes", 4, "episode") != "S01E05" || get(got, "episodes", 4, "has_file") != false ||
				get(got, "episodes", 4, "id") != 1105.0 || get(got, "episodes", 0, "air_date") != "2015-12-14" || get(got, "episodes", 0, "monitored") != true {
				t.Fatalf("%v", got)
			}
		}},
		{"missing, paged", "sonarr_wanted_missing", map[string]any{"page_size": 2}, func(t *testing.T, got map[string]any) {
			// Expanse S01E05-06 and S02E03-06, Severance S02E02-03 (E03 aired this morning).
			if got["total_records"] != 8.0 || len(got["episodes"].([]any)) != 2 || get(got, "episodes", 0, "series") != "Severance" || get(got, "episodes", 0, "episode") != "S02E03" {
				t.Fatalf("%v", got)
			}
		}},
		{"missing, page 4", "sonarr_wanted_missing", map[string]any{"page_size": 2, "page": 4}, func(t *testing.T, got map[string]any) {
			if got["page"] != 4.0 || len(got["episodes"].([]any)) != 2 || get(got, "episodes", 1, "episode") != "S01E05" {
				t.Fatalf("%v", got)
			}
		}},
		{"calendar default week", "sonarr_calendar", map[string]any{}, func(t *testing.T, got map[string]any) {
			if got["count"] != 2.0 || got["start"] != "2025-06-15" || got["end"] != "2025-06-22" || get(got, "episodes", 1, "episode") != "S02E04" {
				t.Fatalf("%v", got)
			}
		}},
		{"calendar range", "sonarr_calendar", map[string]any{"start": "2022-04-01", "end": "2022-04-30", "include_unmonitored": true}, func(t *testing.T, got map[string]any) {
			if got["count"] != 5.0 || get(got, "episodes", 0, "series") != "Slow Horses" {
				t.Fatalf("%v", got)
			}
		}},
		{"queue with messages", "sonarr_queue", map[string]any{}, func(t *testing.T, got map[string]any) {
			if got["total_records"] != 3.0 || get(got, "items", 0, "progress_percent") != 66.3 || get(got, "items", 0, "episode") != "S02E03" ||
				get(got, "items", 1, "tracked_state") != "importBlocked" || !strings.Contains(get(got, "items", 1, "status_messages", 0, "messages", 0).(string), "Automatic import is not possible") {
				t.Fatalf("%v", got)
			}
		}},
		{"history grabs", "sonarr_history", map[string]any{"event_type": "grabbed"}, func(t *testing.T, got map[string]any) {
			if got["total_records"] != 2.0 || get(got, "records", 0, "event_type") != "grabbed" || get(got, "records", 0, "details", "indexer") == nil || get(got, "records", 0, "details", "downloadUrl") != nil {
				t.Fatalf("%v", got)
			}
		}},
		{"history of an episode", "sonarr_history", map[string]any{"episode_id": 1105, "series_id": 1}, func(t *testing.T, got map[string]any) {
			if got["total_records"] != 1.0 || get(got, "records", 0, "event_type") != "downloadFailed" || get(got, "records", 0, "episode") != "S01E05" {
				t.Fatalf("%v", got)
			}
		}},
		{"health", "sonarr_health", map[string]any{}, func(t *testing.T, got map[string]any) {
			if got["version"] != "4.0.14.2939" || get(got, "checks", 0, "type") != "warning" || got["ok"] != false {
				t.Fatalf("%v", got)
			}
		}},
		{"disk space", "sonarr_disk_space", map[string]any{}, func(t *testing.T, got map[string]any) {
			if get(got, "disks", 0, "path") != "/tv" || get(got, "disks", 0, "free_bytes") != 1234e9 || get(got, "disks", 0, "free") != "1.1 TiB" || get(got, "disks", 0, "free_percent") != 30.8 {
				t.Fatalf("%v", got)
			}
		}},
		{"release search season", "sonarr_release_search", map[string]any{"series_id": 1, "season": 1}, func(t *testing.T, got map[string]any) {
			if got["total"] != 6.0 || got["approved"] != 5.0 || get(got, "releases", 0, "guid") != fakesonarr.GUIDSeasonPack || get(got, "releases", 0, "full_season") != true ||
				get(got, "releases", 2, "rejected") != true || get(got, "releases", 2, "rejections", 0) == nil || get(got, "releases", 3, "download_allowed") != false ||
				!strings.HasPrefix(get(got, "releases", 3, "guid").(string), "sha256:") || get(got, "releases", 3, "seeders") != 41.0 {
				t.Fatalf("%v", got)
			}
		}},
		{"release search episode", "sonarr_release_search", map[string]any{"episode_id": 1105, "limit": 1}, func(t *testing.T, got map[string]any) {
			if got["total"] != 2.0 || got["returned"] != 1.0 || get(got, "releases", 0, "episodes", 0) != "S01E05" {
				t.Fatalf("%v", got)
			}
		}},
	}
	cases := make([]toolkittest.ReadCase, 0, len(tests))
	for _, tt := range tests {
		cases = append(cases, toolkittest.ReadCase{Name: tt.name, Tool: tt.tool, Args: tt.args, Check: func(t *testing.T, got map[string]any) {
			tt.check(t, got)
			noSecrets(t, tt.tool, got)
		}})
	}
	svc.RunReads(t, cases, secrets[:3]...)
}

func TestReadErrors(t *testing.T) {
	_, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	_, badTools := setup(t, "wrong-key-0123456789abcdef", 0)
	bad := toolkittest.Start(t, "arr", badTools)
	tests := []struct {
		name string
		svc  *toolkittest.Service
		tool string
		args map[string]any
		code string
		msg  string
	}{
		{"unknown series", svc, "sonarr_series_get", map[string]any{"series_id": 99}, "not_found", "no series with id 99"},
		{"unknown series episodes", svc, "sonarr_episodes", map[string]any{"series_id": 99}, "not_found", "sonarr_series_list"},
		{"unknown command", svc, "sonarr_command_status", map[string]any{"command_id": 5}, "not_found", "no command 5"},
		{"calendar reversed", svc, "sonarr_calendar", map[string]any{"start": "2025-06-10", "end": "2025-06-01"}, "invalid_argument", "before start"},
		{"calendar too long", svc, "sonarr_calendar", map[string]any{"start": "2025-01-01", "end": "2025-06-01"}, "invalid_argument", "62 days"},
		{"calendar bad date", svc, "sonarr_calendar", map[string]any{"start": "2025-13-01"}, "invalid_argument", "not valid date"},
		{"search without scope", svc, "sonarr_release_search", map[string]any{"series_id": 1}, "invalid_argument", "series_id and season"},
		{"search with both scopes", svc, "sonarr_release_search", map[string]any{"series_id": 1, "season": 1, "episode_id": 1105}, "invalid_argument", "not both"},
		{"search unknown episode", svc, "sonarr_release_search", map[string]any{"episode_id": 77}, "not_found", "no episode with id 77"},
		{"extra argument", svc, "sonarr_series_list", map[string]any{"series": "x"}, "invalid_argument", "additional properties"},
		{"wrong key", bad, "sonarr_health", map[string]any{}, "auth_failed", "SONARR_API_KEY_FILE"},
	}
	for _, tt := range tests {
		tt.svc.RunReads(t, []toolkittest.ReadCase{{Name: tt.name, Tool: tt.tool, Args: tt.args, Code: toolerr.Code(tt.code),
			Check: func(t *testing.T, got map[string]any) {
				if !strings.Contains(errMsg(got), tt.msg) {
					t.Errorf("message %q does not say %q", errMsg(got), tt.msg)
				}
				noSecrets(t, tt.tool, got)
			}}}, secrets[:3]...)
	}
}

// A release search that outlives its deadline fails with timeout and
// says so; the fake holds the search instead of sleeping.
func TestReleaseSearchDeadline(t *testing.T) {
	fake, tools := setup(t, apiKey, 200*time.Millisecond)
	release := fake.HoldSearches()
	defer release()
	var search toolkit.Tool
	for _, tl := range tools {
		if tl.Name == "sonarr_release_search" {
			search = tl
		}
	}
	if search.Timeout <= 200*time.Millisecond || !strings.Contains(search.Description, "up to 0 s") {
		// 200 ms rounds to 0 s in the description; the real default is 75 s.
		t.Fatalf("release search has no own deadline: %v %q", search.Timeout, search.Description)
	}
	svc := toolkittest.Start(t, "arr", tools)
	got, isErr := svc.Call(t, "sonarr_release_search", map[string]any{"series_id": 1, "season": 1}, "")
	if !isErr || errCode(got) != "timeout" {
		t.Fatalf("got %v", got)
	}
}

func TestDefaultSearchTimeoutInDescription(t *testing.T) {
	_, tools := setup(t, apiKey, 0)
	for _, tl := range tools {
		if tl.Name == "sonarr_release_search" && (!strings.Contains(tl.Description, "up to 75 s") || tl.Timeout != 85*time.Second) {
			t.Fatalf("%v %q", tl.Timeout, tl.Description)
		}
	}
}

// sonarrLooseBodies are the operations whose request body Sonarr's
// document describes wrongly: POST /command is declared as a
// CommandResource, but CommandController reads the body as the named
// command's own type (EpisodeSearchCommand takes episodeIds), which
// TestEpisodeSearch checks (its name and episodeIds).
var sonarrLooseBodies = []string{"POST /api/v3/command"}
