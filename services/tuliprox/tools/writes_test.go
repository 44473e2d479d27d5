package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

func operator(t *testing.T, o faketuliprox.Options) *env {
	return start(t, o, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword, true)
}

// preview is the preview inside a write's first answer.
func preview(t *testing.T, got map[string]any) map[string]any {
	t.Helper()
	p, ok := got["preview"].(map[string]any)
	if !ok || got["status"] != "preview" {
		t.Fatalf("not a preview: %v", got)
	}
	return p
}

func code(got map[string]any) toolerr.Code {
	e, _ := got["error"].(map[string]any)
	c, _ := e["code"].(string)
	return toolerr.Code(c)
}

func TestUpdatePlaylistsPreviewThenApply(t *testing.T) {
	cases := []struct {
		name    string
		args    map[string]any
		preview string
		body    []string
	}{
		{"named targets", map[string]any{"targets": []any{"kids", "main"}}, `"targets":["kids","main"]`, []string{"kids", "main"}},
		{"every target", map[string]any{}, `"all_targets":true`, []string{"main", "kids", "sports", "radio", "never"}},
		{"an empty list is every target", map[string]any{"targets": []any{}}, `"all_targets":true`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := operator(t, faketuliprox.Options{})
			svc := e.service(t)
			got, isErr := svc.Call(t, tools.ToolUpdatePlaylist, c.args, "")
			b, _ := json.Marshal(preview(t, got))
			if isErr || !strings.Contains(string(b), c.preview) || !strings.Contains(string(b), `"update_state":"idle"`) {
				t.Fatalf("preview: %s", b)
			}
			if n := e.fake.Updates(); n != 0 {
				t.Fatalf("the preview queued %d update(s)", n)
			}
			tok := svc.Approve(t, "tuliprox", tools.ToolUpdatePlaylist, c.args, "ticket-1")
			got, isErr = svc.Call(t, tools.ToolUpdatePlaylist, c.args, tok)
			b, _ = json.Marshal(got)
			if isErr || !strings.Contains(string(b), `"outcome":"queued"`) || !strings.Contains(string(b), `"run_id":1`) || got["status"] != "applied" {
				t.Fatalf("apply: %s", b)
			}
			if n := e.fake.Updates(); n != 1 {
				t.Fatalf("%d updates queued, want 1", n)
			}
			if c.body != nil {
				st, _ := svc.Call(t, tools.ToolUpdateStatus, map[string]any{}, "")
				sb, _ := json.Marshal(st["targets"])
				want, _ := json.Marshal(c.body)
				if string(sb) != string(want) {
					t.Fatalf("Tuliprox updates %s, want %s", sb, want)
				}
			}
		})
	}
}

func TestUpdatePlaylistsRefusals(t *testing.T) {
	t.Run("unknown target named in the preview", func(t *testing.T) {
		e := operator(t, faketuliprox.Options{})
		got, _ := e.service(t).Call(t, tools.ToolUpdatePlaylist, map[string]any{"targets": []any{"main", "Nope"}}, "")
		b, _ := json.Marshal(got)
		if code(got) != toolerr.InvalidArgument || !strings.Contains(string(b), `\"Nope\"`) || !strings.Contains(string(b), `\"kids\"`) {
			t.Fatalf("%s", b)
		}
	})
	t.Run("409 is an update already queued", func(t *testing.T) {
		// A user who may update but not read playlists: the preview cannot
		// see the queue, and Tuliprox's 409 is what tells.
		users := map[string]faketuliprox.User{"writer": {Password: "writer-password-1", Permissions: []string{"playlist.write"}}}
		e := start(t, faketuliprox.Options{Users: users}, "writer", "writer-password-1", true)
		svc := e.service(t)
		args := map[string]any{}
		for i, want := range []toolerr.Code{"", toolerr.Busy} {
			got, _ := svc.Call(t, tools.ToolUpdatePlaylist, args, "")
			if prev := preview(t, got); prev["update_state"] != "unknown" {
				t.Fatalf("preview: %v", prev)
			}
			tok := svc.Approve(t, "tuliprox", tools.ToolUpdatePlaylist, args, "ticket-"+string(rune('a'+i)))
			got, _ = svc.Call(t, tools.ToolUpdatePlaylist, args, tok)
			b, _ := json.Marshal(got)
			if code(got) != want || (want == toolerr.Busy && !strings.Contains(string(b), "an update is already queued")) {
				t.Fatalf("apply %d: %s", i, b)
			}
		}
		if n := e.fake.Updates(); n != 1 {
			t.Fatalf("%d updates queued", n)
		}
	})
	t.Run("the preview shows a queued update", func(t *testing.T) {
		e := operator(t, faketuliprox.Options{})
		svc := e.service(t)
		tok := svc.Approve(t, "tuliprox", tools.ToolUpdatePlaylist, map[string]any{}, "t1")
		svc.Call(t, tools.ToolUpdatePlaylist, map[string]any{}, tok)
		got, _ := svc.Call(t, tools.ToolUpdatePlaylist, map[string]any{}, "")
		prev := preview(t, got)
		if prev["update_state"] != "queued" || !strings.Contains(prev["note"].(string), "already queued") {
			t.Fatalf("%v", prev)
		}
	})
	t.Run("without playlist.write", func(t *testing.T) {
		e := start(t, faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, true)
		svc := e.service(t)
		tok := svc.Approve(t, "tuliprox", tools.ToolUpdatePlaylist, map[string]any{}, "t1")
		got, _ := svc.Call(t, tools.ToolUpdatePlaylist, map[string]any{}, tok)
		if code(got) != toolerr.Forbidden || !strings.Contains(got["error"].(map[string]any)["message"].(string), "playlist.write") {
			t.Fatalf("%v", got)
		}
	})
}

// Without web authentication in Tuliprox the writes refuse whatever
// TULIPROX_ALLOW_WRITES says, and nothing reaches Tuliprox's write routes.
func TestWritesRefusedWithoutWebAuthentication(t *testing.T) {
	e := start(t, faketuliprox.Options{NoAuth: true}, "someone", "some-password-1", true)
	svc := e.service(t)
	for _, tool := range []string{tools.ToolUpdatePlaylist, tools.ToolUpdateGeoIP} {
		got, isErr := svc.Call(t, tool, map[string]any{}, "")
		if !isErr || code(got) != toolerr.Forbidden || !strings.Contains(got["error"].(map[string]any)["message"].(string), "without web authentication") {
			t.Fatalf("%s: %v", tool, got)
		}
	}
	if e.fake.Updates() != 0 || e.fake.GeoIPUpdates() != 0 {
		t.Fatal("a write reached Tuliprox")
	}
}

func TestUpdateGeoIP(t *testing.T) {
	e := operator(t, faketuliprox.Options{})
	svc := e.service(t)
	got, isErr := svc.Call(t, tools.ToolUpdateGeoIP, map[string]any{}, "")
	if prev := preview(t, got); isErr || e.fake.GeoIPUpdates() != 0 || !strings.Contains(prev["action"].(string), "GeoIP") {
		t.Fatalf("preview: %v", prev)
	}
	got, isErr = svc.Call(t, tools.ToolUpdateGeoIP, map[string]any{}, svc.Approve(t, "tuliprox", tools.ToolUpdateGeoIP, map[string]any{}, "g1"))
	if res, _ := got["result"].(map[string]any); isErr || res["updated"] != true || e.fake.GeoIPUpdates() != 1 {
		t.Fatalf("apply: %v", got)
	}
	off := operator(t, faketuliprox.Options{NoGeoIP: true})
	svc = off.service(t)
	got, _ = svc.Call(t, tools.ToolUpdateGeoIP, map[string]any{}, svc.Approve(t, "tuliprox", tools.ToolUpdateGeoIP, map[string]any{}, "g2"))
	if code(got) != toolerr.InvalidArgument || !strings.Contains(got["error"].(map[string]any)["message"].(string), "reverse_proxy.geoip") {
		t.Fatalf("GeoIP off: %v", got)
	}
}
