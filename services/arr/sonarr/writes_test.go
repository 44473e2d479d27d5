package sonarr_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
)

func TestEpisodeSearch(t *testing.T) {
	tests := []struct {
		name     string
		args     map[string]any
		search   []any // episode codes in the preview
		skipped  []any
		ids      []int // episodeIds of the one command
		errCode  string
		errMatch string
	}{
		{"drops episodes with a file", map[string]any{"series_id": 1, "season": 1, "episodes": []int{6, 4, 5}},
			[]any{"S01E05", "S01E06"}, []any{"S01E04"}, []int{1105, 1106}, "", ""},
		{"one episode", map[string]any{"series_id": 1, "season": 2, "episodes": []int{3}},
			[]any{"S02E03"}, []any{}, []int{1203}, "", ""},
		{"all have files", map[string]any{"series_id": 2, "season": 1, "episodes": []int{1, 2}}, nil, nil, nil, "invalid_argument", "already has a file"},
		{"unknown episode", map[string]any{"series_id": 1, "season": 1, "episodes": []int{5, 9}}, nil, nil, nil, "invalid_argument", "no episode 9"},
		{"unknown series", map[string]any{"series_id": 42, "season": 1, "episodes": []int{1}}, nil, nil, nil, "not_found", "no series with id 42"},
		{"duplicate numbers", map[string]any{"series_id": 1, "season": 1, "episodes": []int{5, 5}}, nil, nil, nil, "invalid_argument", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, tools := setup(t, apiKey, 0)
			svc := toolkittest.Start(t, "arr", tools)
			prev, isErr := svc.Call(t, "sonarr_episode_search", tt.args, "")
			if tt.errCode != "" {
				if !isErr || errCode(prev) != tt.errCode || !strings.Contains(errMsg(prev), tt.errMatch) {
					t.Fatalf("got %v", prev)
				}
				if len(fake.Writes()) != 0 {
					t.Fatalf("a refused preview wrote: %v", fake.Writes())
				}
				return
			}
			p, _ := prev["preview"].(map[string]any)
			var codes, skipped []any
			for _, e := range p["search"].([]any) {
				codes = append(codes, e.(map[string]any)["episode"])
			}
			skipped = []any{}
			for _, e := range p["skipped_have_file"].([]any) {
				skipped = append(skipped, e.(map[string]any)["episode"])
			}
			if isErr || !reflect.DeepEqual(codes, tt.search) || !reflect.DeepEqual(skipped, tt.skipped) {
				t.Fatalf("preview: %v", prev)
			}
			if len(tt.skipped) > 0 && !strings.Contains(p["note"].(string), "already have a file") {
				t.Fatalf("preview does not say it dropped episodes: %v", p["note"])
			}
			if len(fake.Writes()) != 0 {
				t.Fatalf("preview wrote: %v", fake.Writes())
			}
			tok := svc.Approve(t, "arr", "sonarr_episode_search", tt.args, "t-"+string(rune('a'+i)))
			done, isErr := svc.Call(t, "sonarr_episode_search", tt.args, tok)
			cmds := fake.Commands()
			if isErr || len(cmds) != 1 || cmds[0].Name != "EpisodeSearch" || !reflect.DeepEqual(cmds[0].EpisodeIDs, tt.ids) {
				t.Fatalf("apply: %v, commands %+v", done, cmds)
			}
			if get(done, "result", "command_id") != float64(cmds[0].ID) || len(fake.Writes()) != 1 {
				t.Fatalf("apply result %v, writes %v", done, fake.Writes())
			}
			// The command is then visible through the read tool.
			st, isErr := svc.Call(t, "sonarr_command_status", map[string]any{"command_id": cmds[0].ID}, "")
			if isErr || st["name"] != "EpisodeSearch" || st["status"] != "queued" {
				t.Fatalf("command status: %v", st)
			}
		})
	}
}

// An episode that got its file between preview and confirm changes the
// preview, so the approval no longer matches and nothing is started.
func TestEpisodeSearchScopeChanged(t *testing.T) {
	fake, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	args := map[string]any{"series_id": 1, "season": 1, "episodes": []int{5, 6}}
	tok := svc.Approve(t, "arr", "sonarr_episode_search", args, "t-1")
	fake.SetHasFile(1105, true)
	got, isErr := svc.Call(t, "sonarr_episode_search", args, tok)
	if !isErr || errCode(got) != "forbidden" || len(fake.Commands()) != 0 {
		t.Fatalf("got %v, commands %v", got, fake.Commands())
	}
}

func TestReleaseGrab(t *testing.T) {
	notAllowed := arrapi.PublicGUID(fakesonarr.GUIDNotAllowed)
	grab := func(guid string, indexer int, force bool) map[string]any {
		a := map[string]any{"series_id": 1, "season": 1, "guid": guid, "indexer_id": indexer}
		if force {
			a["force"] = true
		}
		return a
	}
	tests := []struct {
		name       string
		args       map[string]any
		previewErr string // code when the preview refuses
		previewMsg string
		existing   []any // episodes with files shown
		needsForce bool
		applyErr   string // code when the grab fails
		applyMsg   string
		grabbed    string // GUID Sonarr received
	}{
		{"season pack", grab(fakesonarr.GUIDSeasonPack, 1, false), "", "", []any{"S01E01", "S01E02", "S01E03", "S01E04"}, false, "", "", fakesonarr.GUIDSeasonPack},
		{"single episode", grab(fakesonarr.GUIDEpisode5, 1, false), "", "", []any{}, false, "", "", fakesonarr.GUIDEpisode5},
		{"rejected without force", grab(fakesonarr.GUIDRejected, 1, false), "forbidden", "not wanted in profile", nil, false, "", "", ""},
		{"rejected with force", grab(fakesonarr.GUIDRejected, 1, true), "", "", []any{"S01E01", "S01E02", "S01E03", "S01E04"}, true, "", "", fakesonarr.GUIDRejected},
		{"download not allowed without force", grab(notAllowed, 2, false), "forbidden", "download_allowed=false", nil, false, "", "", ""},
		{"download not allowed with force, passkey GUID", grab(notAllowed, 2, true), "", "", []any{}, true, "", "", fakesonarr.GUIDNotAllowed},
		{"raw passkey GUID is not accepted", grab(fakesonarr.GUIDNotAllowed, 2, true), "not_found", "search again", nil, false, "", "", ""},
		{"wrong indexer", grab(fakesonarr.GUIDSeasonPack, 2, false), "not_found", "search again", nil, false, "", "", ""},
		{"unknown guid", grab("nope", 1, false), "not_found", "does not offer this release", nil, false, "", "", ""},
		{"from an episode search", map[string]any{"series_id": 1, "season": 1, "episode_id": 1105, "guid": fakesonarr.GUIDEpisode5, "indexer_id": 1}, "", "", []any{}, false, "", "", fakesonarr.GUIDEpisode5},
		{"episode outside the season", map[string]any{"series_id": 1, "season": 2, "episode_id": 1105, "guid": fakesonarr.GUIDEpisode5, "indexer_id": 1}, "invalid_argument", "not in The Expanse season 2", nil, false, "", "", ""},
		{"not in cache", grab(fakesonarr.GUIDUncached, 1, false), "", "", []any{}, false, "not_found", "search again with sonarr_release_search", ""},
		{"grab refused", grab(fakesonarr.GUIDRefused, 1, false), "", "", []any{}, false, "upstream_unavailable", "refused it (HTTP 409)", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, tools := setup(t, apiKey, 0)
			svc := toolkittest.Start(t, "arr", tools)
			prev, isErr := svc.Call(t, "sonarr_release_grab", tt.args, "")
			noSecrets(t, "preview", prev)
			if len(fake.Writes()) != 0 {
				t.Fatalf("preview wrote: %v", fake.Writes())
			}
			if tt.previewErr != "" {
				if !isErr || errCode(prev) != tt.previewErr || !strings.Contains(errMsg(prev), tt.previewMsg) {
					t.Fatalf("got %v", prev)
				}
				return
			}
			p, _ := prev["preview"].(map[string]any)
			var existing []any
			for _, f := range p["existing_files"].([]any) {
				existing = append(existing, f.(map[string]any)["episode"])
			}
			if existing == nil {
				existing = []any{}
			}
			if isErr || !reflect.DeepEqual(existing, tt.existing) || p["needs_force"] != tt.needsForce || get(p, "release", "title") == nil ||
				get(p, "release", "size_bytes") == nil || get(p, "release", "indexer") == nil || get(p, "release", "quality") == nil ||
				get(p, "release", "rejections") == nil || get(p, "release", "download_allowed") == nil || !strings.Contains(p["note"].(string), "deletes no files") {
				t.Fatalf("preview: %v", prev)
			}
			if len(tt.existing) > 0 && get(p, "existing_files", 0, "quality") != "WEBDL-1080p" {
				t.Fatalf("existing files lack detail: %v", p["existing_files"])
			}
			tok := svc.Approve(t, "arr", "sonarr_release_grab", tt.args, "g-"+string(rune('a'+i)))
			done, isErr := svc.Call(t, "sonarr_release_grab", tt.args, tok)
			noSecrets(t, "apply", done)
			if tt.applyErr != "" {
				if !isErr || errCode(done) != tt.applyErr || !strings.Contains(errMsg(done), tt.applyMsg) || len(fake.Grabs()) != 0 {
					t.Fatalf("got %v, grabs %v", done, fake.Grabs())
				}
				return
			}
			g := fake.Grabs()
			if isErr || len(g) != 1 || g[0].GUID != tt.grabbed || get(done, "result", "grabbed") != true || len(fake.Commands()) != 0 {
				t.Fatalf("apply: %v, grabs %+v", done, g)
			}
		})
	}
}

// The release vanishing between preview and confirm refuses the grab.
func TestReleaseGrabGone(t *testing.T) {
	fake, tools := setup(t, apiKey, 0)
	svc := toolkittest.Start(t, "arr", tools)
	args := map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1}
	tok := svc.Approve(t, "arr", "sonarr_release_grab", args, "g-1")
	fake.RemoveRelease(fakesonarr.GUIDSeasonPack)
	got, isErr := svc.Call(t, "sonarr_release_grab", args, tok)
	if !isErr || errCode(got) != "not_found" || len(fake.Grabs()) != 0 {
		t.Fatalf("got %v", got)
	}
}

// The grab names the series, and the episode when the search was for one:
// Sonarr's DownloadRelease uses them for a release it could not match to
// the series or its episodes ("Unable to parse episodes in the release,
// will need to be manually provided" otherwise), and ignores them for one
// it matched.
func TestGrabNamesTheSeriesAndTheEpisode(t *testing.T) {
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"season", map[string]any{"series_id": 1, "season": 1, "guid": fakesonarr.GUIDSeasonPack, "indexer_id": 1},
			`{"guid":"` + fakesonarr.GUIDSeasonPack + `","indexerId":1,"seriesId":1}`},
		{"episode", map[string]any{"series_id": 1, "season": 1, "episode_id": 1105, "guid": fakesonarr.GUIDEpisode5, "indexer_id": 1},
			`{"guid":"` + fakesonarr.GUIDEpisode5 + `","indexerId":1,"seriesId":1,"episodeId":1105}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake, tools := setup(t, apiKey, 0)
			svc := toolkittest.Start(t, "arr", tools)
			if got, isErr := svc.Call(t, "sonarr_release_grab", tc.args, svc.Approve(t, "arr", "sonarr_release_grab", tc.args, "g-"+tc.name)); isErr {
				t.Fatalf("grab: %v", got)
			}
			w := fake.Writes()
			if len(w) != 1 || strings.TrimSpace(w[0].Body) != tc.want {
				t.Fatalf("writes %+v, want the body %s", w, tc.want)
			}
		})
	}
}
