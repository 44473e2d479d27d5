package radarr_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

type flow struct {
	e *env
	g *gatewaytest.Gateway
	c *client.Client
}

// newFlow puts the radarr_ tools behind a real gateway. The redactor is
// not told the API key, so the secret checks prove the tools drop it.
func newFlow(t *testing.T, allowWrites bool) *flow {
	t.Helper()
	e := newEnv(t, apiKey, 0)
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "arr", Tools: e.tools, AllowWrites: allowWrites})
	return &flow{e: e, g: g, c: g.Client("openwebui", "ann@example.org")}
}

func (f *flow) call(t *testing.T, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	return gatewaytest.Call(t, f.c, tool, args)
}

func confirmArgs(args map[string]any, ticket any) map[string]any {
	return gatewaytest.With(args, map[string]any{"confirm": true, "ticket": ticket})
}

func (f *flow) posts(path string) int {
	n := 0
	for _, r := range f.e.fake.Requests() {
		if r.Method == "POST" && r.Path == path {
			n++
		}
	}
	return n
}

// noSecrets fails when an API key or planted credential shows up in any
// result, log, audit line or response body on the wire.
func (f *flow) noSecrets(t *testing.T) {
	t.Helper()
	f.g.NoLeaks(t, append([]string{apiKey}, fakeradarr.PlantedSecrets()...), map[string]string{"client logs": f.e.logs.String()})
}

func TestMovieSearchFlow(t *testing.T) {
	f := newFlow(t, true)
	args := map[string]any{"movie_ids": []int{3, 1, 2}}
	prev, isErr := f.call(t, "radarr_movie_search", args)
	s := encode(t, prev)
	if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "model" {
		t.Fatalf("preview: %v", prev)
	}
	for _, w := range []string{`"search":[{"id":2,"monitored":true,"title":"Dune: Part Two","year":2024},{"id":3,`, `"skipped_have_file":[{"existing_quality":"Bluray-1080p","id":1,`, "already have a file"} {
		if !strings.Contains(s, w) {
			t.Errorf("preview lacks %s: %s", w, s)
		}
	}
	if f.posts("/api/v3/command") != 0 {
		t.Fatal("the preview started a command")
	}

	// A different scope with this ticket is refused.
	other, isErr := f.call(t, "radarr_movie_search", confirmArgs(map[string]any{"movie_ids": []int{3, 2}}, prev["ticket"]))
	if !isErr || gatewaytest.ErrorCode(other) != "forbidden" || f.posts("/api/v3/command") != 0 {
		t.Fatalf("changed ids: %v", other)
	}

	// The mismatch did not use up the ticket: the right call applies once.
	done, isErr := f.call(t, "radarr_movie_search", confirmArgs(args, prev["ticket"]))
	if isErr || !strings.Contains(encode(t, done), `"command_id":1001`) {
		t.Fatalf("confirm: %v", done)
	}
	cmds := f.e.fake.Commands()
	if len(cmds) != 1 || cmds[0]["name"] != "MoviesSearch" || encode(t, cmds[0]["movieIds"]) != "[2,3]" || len(cmds[0]) != 2 {
		t.Fatalf("commands: %v", cmds)
	}
	again, isErr := f.call(t, "radarr_movie_search", confirmArgs(args, prev["ticket"]))
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || len(f.e.fake.Commands()) != 1 {
		t.Fatalf("replay: %v", again)
	}

	// Nothing to search: every movie has a file.
	if got, isErr := f.call(t, "radarr_movie_search", map[string]any{"movie_ids": []int{1}}); !isErr || gatewaytest.ErrorCode(got) != "invalid_argument" {
		t.Fatalf("all have files: %v", got)
	}
	// An unknown movie is named.
	if got, isErr := f.call(t, "radarr_movie_search", map[string]any{"movie_ids": []int{2, 77}}); !isErr || gatewaytest.ErrorCode(got) != "not_found" {
		t.Fatalf("unknown movie: %v", got)
	}

	// Radarr changed between preview and confirm (movie 3 was imported):
	// the approved scope no longer holds and nothing runs.
	args = map[string]any{"movie_ids": []int{3}}
	prev, _ = f.call(t, "radarr_movie_search", args)
	f.e.fake.SetMovieFile(3, true)
	stale, isErr := f.call(t, "radarr_movie_search", confirmArgs(args, prev["ticket"]))
	if !isErr || len(f.e.fake.Commands()) != 1 {
		t.Fatalf("stale scope: %v", stale)
	}
	f.noSecrets(t)
}

func TestReleaseGrabFlow(t *testing.T) {
	f := newFlow(t, true)
	search, isErr := f.call(t, "radarr_release_search", map[string]any{"movie_id": 2})
	if isErr {
		t.Fatalf("search: %v", search)
	}
	var hidden string // the public form of the passkey-carrying GUID
	for _, r := range search["releases"].([]any) {
		if g := r.(map[string]any)["guid"].(string); strings.HasPrefix(g, "sha256:") {
			hidden = g
		}
	}
	if hidden == "" {
		t.Fatal("the passkey GUID was not hidden")
	}

	t.Run("approved release: preview, confirm once, replay refused", func(t *testing.T) {
		args := map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDApproved, "indexer_id": 1}
		prev, isErr := f.call(t, "radarr_release_grab", args)
		s := encode(t, prev)
		if isErr || prev["status"] != "confirmation_required" || prev["approval"] != "model" {
			t.Fatalf("preview: %v", prev)
		}
		for _, w := range []string{`"title":"Dune.Part.Two.2024.2160p.UHD.BluRay.x265-TERMiNAL"`, `"size":"60.0 GiB"`, `"indexer":"NZBgeek (Prowlarr)"`, `"quality":"Bluray-2160p"`, `"rejections":[]`, `"download_allowed":true`, `"existing_file":null`, "quality profile"} {
			if !strings.Contains(s, w) {
				t.Errorf("preview lacks %s: %s", w, s)
			}
		}
		if f.posts("/api/v3/release") != 0 {
			t.Fatal("the preview grabbed")
		}
		for _, changed := range []map[string]any{
			{"movie_id": 2, "guid": fakeradarr.GUIDRefused, "indexer_id": 1},
			{"movie_id": 2, "guid": fakeradarr.GUIDApproved, "indexer_id": 1, "force": true},
		} {
			got, isErr := f.call(t, "radarr_release_grab", confirmArgs(changed, prev["ticket"]))
			if !isErr || gatewaytest.ErrorCode(got) != "forbidden" || f.posts("/api/v3/release") != 0 {
				t.Fatalf("changed scope %v: %v", changed, got)
			}
		}
		done, isErr := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"]))
		if isErr || !strings.Contains(encode(t, done), `"grabbed":true`) || !strings.Contains(encode(t, done), `"title":"Dune.Part.Two.2024.2160p.UHD.BluRay.x265-TERMiNAL"`) {
			t.Fatalf("confirm: %v", done)
		}
		grabs := f.e.fake.Grabs()
		// Exactly the release and the movie it is grabbed for (the movie
		// matters only for a release Radarr could not match).
		if len(grabs) != 1 || grabs[0]["guid"] != fakeradarr.GUIDApproved || grabs[0]["indexerId"] != float64(1) || grabs[0]["movieId"] != float64(2) || len(grabs[0]) != 3 {
			t.Fatalf("grabs: %v", grabs)
		}
		again, isErr := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"]))
		if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || len(f.e.fake.Grabs()) != 1 {
			t.Fatalf("replay: %v", again)
		}
	})

	t.Run("hidden GUID grabs the real release", func(t *testing.T) {
		args := map[string]any{"movie_id": 2, "guid": hidden, "indexer_id": 2}
		prev, isErr := f.call(t, "radarr_release_grab", args)
		if isErr {
			t.Fatalf("preview: %v", prev)
		}
		before := len(f.e.fake.Grabs())
		if done, isErr := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"])); isErr {
			t.Fatalf("confirm: %v", done)
		}
		grabs := f.e.fake.Grabs()
		if len(grabs) != before+1 || grabs[len(grabs)-1]["guid"] != fakeradarr.GUIDWithPasskey {
			t.Fatalf("grabs: %v", grabs)
		}
	})

	t.Run("rejected, held-back and not-allowed releases need force and a person", func(t *testing.T) {
		for _, rel := range []struct {
			guid    string
			indexer int
			why     string
		}{
			{fakeradarr.GUIDRejected, 2, "CAM is not wanted"},
			{fakeradarr.GUIDNotAllowed, 3, "download_allowed=false"},
			// Temporarily rejected (approved false, rejected false): as
			// Sonarr's rule, not only the model's word.
			{fakeradarr.GUIDHeldBack, 4, "holds this release back for now (Indexer DrunkenSlug"},
		} {
			before := f.posts("/api/v3/release")
			args := map[string]any{"movie_id": 2, "guid": rel.guid, "indexer_id": rel.indexer}
			got, isErr := f.call(t, "radarr_release_grab", args)
			if s := encode(t, got); !isErr || gatewaytest.ErrorCode(got) != "forbidden" || !strings.Contains(s, rel.why) || !strings.Contains(s, `force`) || got["ticket"] != nil {
				t.Fatalf("%s without force: %v", rel.guid, got)
			}
			args["force"] = true
			prev, isErr := f.call(t, "radarr_release_grab", args)
			if isErr || prev["approval"] != "human" || !strings.Contains(encode(t, prev), "grabbing anyway because force is set") {
				t.Fatalf("%s with force: %v", rel.guid, prev)
			}
			pending, _ := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"]))
			if pending["status"] != "pending" || f.posts("/api/v3/release") != before {
				t.Fatalf("confirm before approval: %v", pending)
			}
			if code := f.g.Approve(prev["ticket"].(string)); code != 200 {
				t.Fatalf("approve: HTTP %d", code)
			}
			// The not-allowed release is one Radarr could not match to a
			// movie: DownloadRelease grabs it only with the movieId.
			done, isErr := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"]))
			if isErr || f.posts("/api/v3/release") != before+1 {
				t.Fatalf("forced grab: %v", done)
			}
		}
	})

	t.Run("release gone from Radarr's cache", func(t *testing.T) {
		args := map[string]any{"movie_id": 3, "guid": "https://nzbgeek.info/geekseek.php?guid=m3", "indexer_id": 1}
		prev, isErr := f.call(t, "radarr_release_grab", args)
		if isErr {
			t.Fatalf("preview: %v", prev)
		}
		f.e.fake.Evict("https://nzbgeek.info/geekseek.php?guid=m3")
		before := len(f.e.fake.Grabs())
		got, isErr := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"]))
		if !isErr || gatewaytest.ErrorCode(got) != "not_found" || !strings.Contains(encode(t, got), "search again") || len(f.e.fake.Grabs()) != before {
			t.Fatalf("evicted: %v", got)
		}
	})

	t.Run("grab refused by the indexer", func(t *testing.T) {
		args := map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDRefused, "indexer_id": 3}
		prev, _ := f.call(t, "radarr_release_grab", args)
		before := len(f.e.fake.Grabs())
		got, isErr := f.call(t, "radarr_release_grab", confirmArgs(args, prev["ticket"]))
		if !isErr || gatewaytest.ErrorCode(got) != "upstream_unavailable" || !strings.Contains(encode(t, got), "refused it (HTTP 409)") || len(f.e.fake.Grabs()) != before {
			t.Fatalf("refused: %v", got)
		}
	})

	t.Run("release no longer offered", func(t *testing.T) {
		got, isErr := f.call(t, "radarr_release_grab", map[string]any{"movie_id": 2, "guid": "gone-guid", "indexer_id": 1})
		if !isErr || gatewaytest.ErrorCode(got) != "not_found" || !strings.Contains(encode(t, got), "search again") {
			t.Fatalf("gone: %v", got)
		}
	})

	t.Run("existing file is shown", func(t *testing.T) {
		prev, isErr := f.call(t, "radarr_release_grab", map[string]any{"movie_id": 1, "guid": "https://nzbgeek.info/geekseek.php?guid=m1", "indexer_id": 1})
		if s := encode(t, prev); isErr || !strings.Contains(s, `"existing_file":{`) || !strings.Contains(s, `"relative_path":"Movie (1) Bluray-1080p.mkv"`) {
			t.Fatalf("preview: %v", prev)
		}
	})
	f.noSecrets(t)
}

func TestWritesAbsentWithoutOptIn(t *testing.T) {
	f := newFlow(t, false)
	res, err := f.c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if len(names) != 11 || slices.Contains(names, "radarr_movie_search") || slices.Contains(names, "radarr_release_grab") {
		t.Fatalf("tools: %v", names)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"radarr_movie_search", map[string]any{"movie_ids": []int{2}}},
		{"radarr_release_grab", map[string]any{"movie_id": 2, "guid": fakeradarr.GUIDApproved, "indexer_id": 1, "confirm": true, "ticket": "forged"}},
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = c.tool, c.args
		got, err := f.c.CallTool(t.Context(), req)
		if err == nil && !got.IsError {
			t.Fatalf("%s answered: %v", c.tool, got)
		}
	}
	if f.posts("/api/v3/command") != 0 || f.posts("/api/v3/release") != 0 {
		t.Fatal("a write reached Radarr")
	}
}
