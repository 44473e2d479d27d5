package main

import (
	"fmt"
	"maps"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/radarr"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
	"github.com/toolgate/toolgate/services/arr/sonarr"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
)

// bothApps serves the Sonarr and the Radarr tools over the two fakes.
func bothApps(t *testing.T) *toolkittest.Service {
	t.Helper()
	const key = "arr-shape-SECRET-key-0123456789"
	now := func() time.Time { return time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC) }
	client := func(app, url string) *arrapi.Client {
		c, err := arrapi.New(arrapi.Config{App: app, URL: url, APIKey: []byte(key), AllowHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	s := httptest.NewServer(fakesonarr.New(key, now))
	t.Cleanup(s.Close)
	r := httptest.NewServer(fakeradarr.New(key))
	t.Cleanup(r.Close)
	tools := append(sonarr.Tools(sonarr.NewClient(client("sonarr", s.URL)), now), radarr.NewTools(radarr.New(client("radarr", r.URL)), now)...)
	return toolkittest.Start(t, "arr", tools)
}

// shapeOf maps every path of v ("items[].size") to the JSON kinds found
// there.
func shapeOf(v any, path string, out map[string]map[string]bool) {
	kind := "null"
	switch x := v.(type) {
	case map[string]any:
		kind = "object"
		for k, e := range x {
			shapeOf(e, strings.TrimPrefix(path+"."+k, "."), out)
		}
	case []any:
		kind = "array"
		for _, e := range x {
			shapeOf(e, path+"[]", out)
		}
	case string:
		kind = "string"
	case float64:
		kind = "number"
	case bool:
		kind = "bool"
	}
	if path == "" {
		return
	}
	if out[path] == nil {
		out[path] = map[string]bool{}
	}
	out[path][kind] = true
}

// keysOf are the members of the object at path ("" for the top).
func keysOf(shape map[string]map[string]bool, path string) []string {
	var out []string
	for p := range shape {
		parent, key := "", p
		if i := strings.LastIndex(p, "."); i >= 0 {
			parent, key = p[:i], p[i+1:]
		}
		if parent == path && !strings.HasSuffix(key, "[]") {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

var (
	camel = regexp.MustCompile(`[a-z][A-Z]`)
	human = regexp.MustCompile(`^\d+(\.\d)? ([KMGTP]i)?B$`)
)

// rulesOf lists where one answer breaks the shape every arr tool keeps:
// members in snake_case, no sizes in GB, and every size in binary units
// beside its exact bytes.
func rulesOf(v any, path string) []string {
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			if camel.MatchString(k) || strings.HasSuffix(k, "_gb") {
				bad = append(bad, p+": not the agreed name")
			}
			if b, ok := x[k+"_bytes"].(float64); ok && (k == "size" || k == "size_on_disk" || k == "free" || k == "total") {
				if s, _ := e.(string); !human.MatchString(s) || s != arrapi.HumanSize(int64(b)) {
					bad = append(bad, fmt.Sprintf("%s: %v is not %v bytes in binary units", p, e, b))
				}
			}
			if strings.HasSuffix(k, "_bytes") {
				if _, ok := x[strings.TrimSuffix(k, "_bytes")]; !ok {
					bad = append(bad, p+": bytes without the readable size")
				}
			}
			bad = append(bad, rulesOf(e, p)...)
		}
	case []any:
		for _, e := range x {
			bad = append(bad, rulesOf(e, path+"[]")...)
		}
	}
	return bad
}

// Sonarr's and Radarr's tools for the same thing answer in one shape: the
// same members (but for what only one application has), each of the same
// JSON kind wherever both have it, and sizes, names and percentages alike
// (they had drifted apart: a queue's progress "42%" beside 42.3, sizes in
// GB beside bytes and GiB, total beside library_size).
func TestSonarrAndRadarrAnswerInOneShape(t *testing.T) {
	svc := bothApps(t)
	pairs := []struct {
		name                 string
		sonarr, radarr       string
		sonarrArgs, radarArg map[string]any
		at                   string // the object compared: "" or "preview"
		onlySonarr           []string
		onlyRadarr           []string
	}{
		{"library list", "sonarr_series_list", "radarr_movie_list", nil, nil, "", []string{"series", "episodes_note"}, []string{"movies", "offset"}},
		{"wanted", "sonarr_wanted_missing", "radarr_wanted_missing", nil, nil, "", []string{"episodes"}, []string{"movies"}},
		{"calendar", "sonarr_calendar", "radarr_calendar", map[string]any{"start": "2025-05-01", "end": "2025-06-30"}, map[string]any{"start": "2025-10-01", "end": "2025-12-31"}, "", []string{"episodes"}, []string{"movies"}},
		{"queue", "sonarr_queue", "radarr_queue", nil, nil, "", nil, nil},
		{"history", "sonarr_history", "radarr_history", nil, nil, "", nil, nil},
		{"health", "sonarr_health", "radarr_health", nil, nil, "", nil, nil},
		{"disk space", "sonarr_disk_space", "radarr_disk_space", nil, nil, "", nil, nil},
		{"release search", "sonarr_release_search", "radarr_release_search", map[string]any{"series_id": 1, "season": 1}, map[string]any{"movie_id": 2}, "", nil, []string{"movie", "existing_file"}},
		{"grab preview", "sonarr_release_grab", "radarr_release_grab",
			map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1},
			map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDApproved, "indexer_id": 1}, "preview",
			[]string{"series_id", "series", "season", "searched_by", "existing_files"}, []string{"movie", "existing_file"}},
		{"forced grab preview", "sonarr_release_grab", "radarr_release_grab",
			map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDRejected, "indexer_id": 1, "force": true},
			map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDRejected, "indexer_id": 2, "force": true}, "preview",
			[]string{"series_id", "series", "season", "searched_by", "existing_files"}, []string{"movie", "existing_file"}},
		{"search preview", "sonarr_episode_search", "radarr_movie_search",
			map[string]any{"series_id": 1, "season": 1, "episodes": []int{4, 5}}, map[string]any{"movie_ids": []int{1, 2}}, "preview",
			[]string{"series_id", "series", "season"}, nil},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			shapes := [2]map[string]map[string]bool{{}, {}}
			for i, call := range []struct {
				tool string
				args map[string]any
			}{{p.sonarr, p.sonarrArgs}, {p.radarr, p.radarArg}} {
				args := call.args
				if args == nil {
					args = map[string]any{}
				}
				got, isErr := svc.Call(t, call.tool, args, "")
				if isErr {
					t.Fatalf("%s: %v", call.tool, got)
				}
				for _, b := range rulesOf(got, "") {
					t.Errorf("%s: %s", call.tool, b)
				}
				var at any = got
				if p.at != "" {
					at = got[p.at]
				}
				shapeOf(at, "", shapes[i])
			}
			s := slices.DeleteFunc(keysOf(shapes[0], ""), func(k string) bool { return slices.Contains(p.onlySonarr, k) })
			r := slices.DeleteFunc(keysOf(shapes[1], ""), func(k string) bool { return slices.Contains(p.onlyRadarr, k) })
			if !slices.Equal(s, r) {
				t.Errorf("members differ: %s %v, %s %v", p.sonarr, s, p.radarr, r)
			}
			for _, path := range slices.Sorted(maps.Keys(shapes[0])) {
				if kinds, ok := shapes[1][path]; ok && !maps.Equal(withoutNull(kinds), withoutNull(shapes[0][path])) && len(withoutNull(kinds)) > 0 && len(withoutNull(shapes[0][path])) > 0 {
					t.Errorf("%s is %v in %s, %v in %s", path, slices.Sorted(maps.Keys(shapes[0][path])), p.sonarr, slices.Sorted(maps.Keys(kinds)), p.radarr)
				}
			}
		})
	}
}

func withoutNull(kinds map[string]bool) map[string]bool {
	out := maps.Clone(kinds)
	delete(out, "null")
	return out
}

// The checks above catch what the apps answered before they were made one:
// the rules a wrong name or size, the kind comparison "42%" beside 42.3.
func TestShapeChecksCatchTheOldDrift(t *testing.T) {
	for name, v := range map[string]map[string]any{
		"GB":                          {"size_on_disk_gb": 10.93},
		"camelCase":                   {"downloadAllowed": true},
		"a wrong readable size":       {"size": "1.0 GiB", "size_bytes": float64(3 << 30)},
		"bytes without readable size": {"items": []any{map[string]any{"size_bytes": float64(5)}}},
	} {
		if len(rulesOf(v, "")) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
	if bad := rulesOf(map[string]any{"size": "3.0 GiB", "size_bytes": float64(3 << 30), "free": "0 B", "free_bytes": float64(0)}, ""); len(bad) > 0 {
		t.Errorf("the agreed shape refused: %v", bad)
	}
	a, b := map[string]map[string]bool{}, map[string]map[string]bool{}
	shapeOf(map[string]any{"items": []any{map[string]any{"progress": "42%"}}}, "", a)
	shapeOf(map[string]any{"items": []any{map[string]any{"progress": 42.3}}}, "", b)
	if maps.Equal(a["items[].progress"], b["items[].progress"]) {
		t.Error(`"42%" and 42.3 compared alike`)
	}
}

// Both apps' grab previews, and their force rule, are one: a guid with
// control characters or blanks around it is refused before anything is
// asked of the app, and a release the app only holds back for now (a
// temporary rejection: approved false, rejected false) needs force.
func TestSonarrAndRadarrGrabTheSameWay(t *testing.T) {
	svc := bothApps(t)
	for _, app := range []struct {
		tool string
		args map[string]any
	}{
		{"sonarr_release_grab", map[string]any{"series_id": 1, "season": 1, "indexer_id": 1}},
		{"radarr_release_grab", map[string]any{"movie_id": 2, "indexer_id": 1}},
	} {
		for _, guid := range []string{" " + fakeradarr.GUIDApproved, fakeradarr.GUIDApproved + " ", "guid\nX-Injected: 1", "guid\x00"} {
			args := maps.Clone(app.args)
			args["guid"] = guid
			got, isErr := svc.Call(t, app.tool, args, "")
			if !isErr || !strings.Contains(fmt.Sprint(got), "invalid_argument") || !strings.Contains(fmt.Sprint(got), "guid must") {
				t.Errorf("%s guid %q: %v", app.tool, guid, got)
			}
		}
	}
	held := arrapi.ReleaseRecord{Approved: false, Rejected: false, TemporarilyRejected: true, DownloadAllowed: true, Rejections: []string{"Indexer X is blocked till later due to failures, cannot grab release."}}
	if !held.NeedsForce() || !strings.Contains(held.Refusal("Radarr"), "holds this release back for now") {
		t.Fatalf("a release held back for now: needs force %v, refusal %q", held.NeedsForce(), held.Refusal("Radarr"))
	}
}
