package fakesonarr

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake/arrfaketest"
)

const key = "fake-test-key-0123456789"

// The fake answers like Sonarr: the key in the header or the apikey
// parameter, 401 otherwise; the release cache and the awkward grabs.
func TestFake(t *testing.T) {
	s := New(key, nil)
	tests := []struct {
		name, method, target, key, body string
		status                          int
		contains                        string
	}{
		{"no key", "GET", "/api/v3/system/status", "", "", 401, ""},
		{"wrong key", "GET", "/api/v3/system/status", "nope", "", 401, ""},
		{"key header", "GET", "/api/v3/system/status", key, "", 200, `"appName":"Sonarr"`},
		{"key parameter", "GET", "/api/v3/health?apikey=" + key, "", "", 200, "DownloadClientRootFolderCheck"},
		{"unknown series", "GET", "/api/v3/series/9", key, "", 404, ""},
		{"bad id matches no {id:int} route", "GET", "/api/v3/series/x", key, "", 404, ""},
		{"episodes need a series", "GET", "/api/v3/episode", key, "", 400, ""},
		{"grab before search", "POST", "/api/v3/release", key, `{"guid":"` + GUIDSeasonPack + `","indexerId":1}`, 404, "cache"},
		{"search fills cache", "GET", "/api/v3/release?seriesId=1&seasonNumber=1", key, "", 200, ProwlarrKey},
		{"grab after search", "POST", "/api/v3/release", key, `{"guid":"` + GUIDSeasonPack + `","indexerId":1}`, 200, "FuN"},
		{"uncached", "POST", "/api/v3/release", key, `{"guid":"` + GUIDUncached + `","indexerId":1}`, 404, ""},
		{"refused", "POST", "/api/v3/release", key, `{"guid":"` + GUIDRefused + `","indexerId":1}`, 409, "indexer failed"},
		{"empty grab", "POST", "/api/v3/release", key, `{}`, 400, ""},
		{"unknown command throws", "POST", "/api/v3/command", key, `{"name":"DeleteEverything"}`, 500, `"message":"Sequence contains no matching element"`},
		{"command is created", "POST", "/api/v3/command", key, `{"name":"EpisodeSearch","episodeIds":[1105]}`, 201, `"status":"queued"`},
		{"paging", "GET", "/api/v3/wanted/missing?page=1&pageSize=3", key, "", 200, `"pageSize":3`},
	}
	cases := make([]arrfaketest.Case, 0, len(tests))
	for _, tt := range tests {
		cases = append(cases, arrfaketest.Case{Name: tt.name, Method: tt.method, Target: tt.target, Key: tt.key, Body: tt.body, Status: tt.status, Contains: tt.contains})
	}
	arrfaketest.Check(t, s, cases)
	if g := s.Grabs(); len(g) != 1 || g[0].GUID != GUIDSeasonPack {
		t.Fatalf("grabs %+v", g)
	}
	if c := s.Commands(); len(c) != 1 || c[0].EpisodeIDs[0] != 1105 {
		t.Fatalf("commands %+v", c)
	}
	// A command is seen queued, started, then completed.
	for _, want := range []string{"queued", "started", "completed"} {
		_, body := arrfaketest.Do(t, s, "GET", "/api/v3/command/1001", key, "")
		var c map[string]any
		_ = json.Unmarshal([]byte(body), &c)
		if c["status"] != want {
			t.Fatalf("command status %v, want %s", c["status"], want)
		}
	}
	if NewDemo(key) == nil {
		t.Fatal("no demo handler")
	}
}
