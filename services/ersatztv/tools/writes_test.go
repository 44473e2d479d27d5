package tools_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
)

// preview runs a write's preview and returns the plan.
func preview(t *testing.T, svc *toolkittest.Service, tool string, args map[string]any) map[string]any {
	t.Helper()
	got, isErr := svc.Call(t, tool, args, "")
	if isErr || got["status"] != "preview" {
		t.Fatalf("%s preview: %v", tool, got)
	}
	return got["preview"].(map[string]any)
}

var approvals int

// confirm applies a write with a signed approval, as the gateway would.
func confirm(t *testing.T, svc *toolkittest.Service, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	approvals++
	tok := svc.Approve(t, "ersatztv", tool, args, "tkt_test_"+strings.Repeat("x", approvals%7)+string(rune('a'+approvals%26))+tool)
	return svc.Call(t, tool, args, tok)
}

func errCode(got map[string]any) string {
	e, _ := got["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func clone[T any](t *testing.T, v T) T {
	t.Helper()
	b, _ := json.Marshal(v)
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A full replace takes only what the user wants changed: the preview
// builds the complete request from ErsatzTV's current state and shows the
// diff; the confirm sends exactly that, so every field the user did not
// mention keeps its value (graphicsElementIds, padToNearestMinute,
// dailyRebuildTime, the other custom indexes).
func TestFullReplaceKeepsWhatTheUserDidNotMention(t *testing.T) {
	cases := []struct {
		name    string
		tool    string
		args    map[string]any
		changed []string // fields the diff names
		// etag is the ETag ErsatzTV answers the write with, which the
		// result hands to the model for the next ifMatch.
		etag  string
		check func(t *testing.T, before, after *fakeersatztv.Store)
	}{
		{name: "update_channel renames and keeps the overlay", tool: "ersatztv_update_channel", args: map[string]any{"id": 1, "name": "Movies!"},
			changed: []string{"name"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				want := clone(t, *before.Channel(1))
				want.Name = "Movies!"
				if got := *after.Channel(1); !sameJSON(t, got, want) {
					t.Errorf("channel 1 = %+v\nwant %+v", got, want)
				}
			}},
		{name: "update_channel clears what clear names and only that", tool: "ersatztv_update_channel",
			args:    map[string]any{"id": 1, "clear": []any{"graphicsElementIds", "watermarkId"}, "streamingMode": "TransportStream"},
			changed: []string{"streamingMode", "watermarkId", "graphicsElementIds"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				want := clone(t, *before.Channel(1))
				want.GraphicsElementIDs, want.WatermarkID, want.StreamingMode = []int{}, nil, "TransportStream"
				if got := *after.Channel(1); !sameJSON(t, got, want) {
					t.Errorf("channel 1 = %+v\nwant %+v", got, want)
				}
			}},
		{name: "update_schedule keeps padToNearestMinute", tool: "ersatztv_update_schedule", args: map[string]any{"id": 30, "shuffleScheduleItems": true},
			changed: []string{"shuffleScheduleItems"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				s := after.Schedule(30)
				if s.PadToNearestMinute == nil || *s.PadToNearestMinute != 15 || !s.RandomStartPoint || s.FixedStartTimeBehavior != "Flexible" || !s.ShuffleScheduleItems || s.Name != "Movie Nights" {
					t.Errorf("schedule 30 = %+v", s)
				}
			}},
		{name: "update_playout keeps dailyRebuildTime", tool: "ersatztv_update_playout", args: map[string]any{"id": 1, "scheduleFile": "/config/music.yml"},
			changed: []string{"scheduleFile"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				p := after.Playout(1)
				if p.DailyRebuildTime == nil || *p.DailyRebuildTime != "04:00:00" || p.ScheduleFile == nil || *p.ScheduleFile != "/config/music.yml" {
					t.Errorf("playout 1 = %+v", p)
				}
			}},
		{name: "update_playout clears dailyRebuildTime only when asked", tool: "ersatztv_update_playout", args: map[string]any{"id": 1, "clear": []any{"dailyRebuildTime"}},
			changed: []string{"dailyRebuildTime"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				if p := after.Playout(1); p.DailyRebuildTime != nil {
					t.Errorf("playout 1 = %+v", p)
				}
			}},
		{name: "update_collection_custom_order keeps the other indexes", tool: "ersatztv_update_collection_custom_order",
			args: map[string]any{"id": 11, "order": []any{map[string]any{"mediaItemId": 121, "customIndex": 5}}}, changed: []string{"121 (Sweet Dreams)"}, etag: `"5"`,
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				got := map[int]int{}
				for _, m := range after.Collection(11).Members {
					if m.CustomIndex != nil {
						got[m.MediaItemID] = *m.CustomIndex
					}
				}
				if len(got) != 3 || got[119] != 0 || got[120] != 1 || got[121] != 5 {
					t.Errorf("indexes %v", got)
				}
			}},
		{name: "update_collection sets the flag and keeps the name", tool: "ersatztv_update_collection", args: map[string]any{"id": 10, "useCustomPlaybackOrder": true},
			changed: []string{"useCustomPlaybackOrder"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				if c := after.Collection(10); c.Name != "Friday Night Movies" || !c.UseCustomPlaybackOrder {
					t.Errorf("collection 10 = %+v", c)
				}
			}},
		{name: "update_smart_collection keeps the name", tool: "ersatztv_update_smart_collection", args: map[string]any{"id": 20, "query": "type:movie"},
			changed: []string{"query"},
			check: func(t *testing.T, before, after *fakeersatztv.Store) {
				if c := after.SmartCollections[0]; c.Name != "80s movies" || c.Query != "type:movie" {
					t.Errorf("smart collection = %+v", c)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := startV1(t, nil)
			before := fakeersatztv.NewDemoStore(testNow)
			svc := e.service(t)
			p := preview(t, svc, c.tool, c.args)
			var fields []string
			for _, ch := range p["changes"].([]any) {
				fields = append(fields, ch.(map[string]any)["field"].(string))
			}
			if !slices.Equal(fields, c.changed) {
				t.Errorf("diff names %v, want %v", fields, c.changed)
			}
			if len(e.V1.Writes()) != 0 {
				t.Fatal("the preview wrote")
			}
			// The preview changed nothing: the store is still the demo's.
			e.Store.Lock()
			unchanged := sameJSON(t, e.Store, before)
			e.Store.Unlock()
			if !unchanged {
				t.Fatal("the store changed during the preview")
			}
			got, isErr := confirm(t, svc, c.tool, c.args)
			if isErr || got["status"] != "applied" {
				t.Fatalf("confirm: %v", got)
			}
			if res, _ := got["result"].(map[string]any); c.etag != "" && res["etag"] != c.etag {
				t.Errorf("the result carries etag %v, want ErsatzTV's %s", res["etag"], c.etag)
			}
			writes := e.V1.Writes()
			if len(writes) != 1 {
				t.Fatalf("%d writes, want 1", len(writes))
			}
			// The confirm sent exactly the request the preview showed.
			req := p["request"].(map[string]any)
			if writes[0].Method != req["method"] || writes[0].Path != req["path"] {
				t.Errorf("sent %s %s, previewed %v %v", writes[0].Method, writes[0].Path, req["method"], req["path"])
			}
			var sent any
			_ = json.Unmarshal([]byte(writes[0].Body), &sent)
			if !sameJSON(t, sent, req["body"]) {
				t.Errorf("sent %s\npreviewed %v", writes[0].Body, req["body"])
			}
			e.Store.Lock()
			defer e.Store.Unlock()
			c.check(t, before, e.Store)
		})
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	var xa, yb any
	_ = json.Unmarshal(x, &xa)
	_ = json.Unmarshal(y, &yb)
	x, _ = json.Marshal(xa)
	y, _ = json.Marshal(yb)
	return string(x) == string(y)
}

// The custom-order replace carries the ETag the items were read under. A
// stale ifMatch from the user is refused at the preview; a change between
// the confirm's read and its PUT answers 412 and nothing is written.
func TestStaleIfMatchChangesNothing(t *testing.T) {
	args := map[string]any{"id": 11, "order": []any{map[string]any{"mediaItemId": 121, "customIndex": 7}}}
	t.Run("stale ifMatch at the preview", func(t *testing.T) {
		e := startV1(t, nil)
		svc := e.service(t)
		stale := map[string]any{"id": 11, "order": args["order"], "ifMatch": `"3"`}
		got, isErr := svc.Call(t, "ersatztv_update_collection_custom_order", stale, "")
		if !isErr || errCode(got) != string(toolerr.Forbidden) || !strings.Contains(got["error"].(map[string]any)["message"].(string), `now "4"`) {
			t.Fatalf("stale ifMatch: %v", got)
		}
		bare := map[string]any{"id": 11, "order": args["order"], "ifMatch": "4"}
		if got, isErr := svc.Call(t, "ersatztv_update_collection_custom_order", bare, ""); isErr {
			t.Fatalf("current bare etag refused: %v", got)
		}
		if len(e.V1.Writes()) != 0 {
			t.Fatal("something was written")
		}
	})
	t.Run("a change between the confirm's read and its PUT", func(t *testing.T) {
		e := startV1(t, nil)
		svc := e.service(t)
		p := preview(t, svc, "ersatztv_update_collection_custom_order", args)
		if p["request"].(map[string]any)["ifMatch"] != `"4"` {
			t.Fatalf("the plan carries no If-Match: %v", p["request"])
		}
		// Another editor changes the collection just before the PUT lands.
		e.V1.BeforeWrite = func(*http.Request) {
			e.Store.Lock()
			defer e.Store.Unlock()
			c := e.Store.Collection(11)
			c.Members = append(c.Members, fakeersatztv.Member{MediaItemID: 122})
			c.Version++
		}
		got, isErr := confirm(t, svc, "ersatztv_update_collection_custom_order", args)
		if !isErr || errCode(got) != string(toolerr.Forbidden) || !strings.Contains(got["error"].(map[string]any)["message"].(string), "HTTP 412") {
			t.Fatalf("confirm: %v", got)
		}
		e.Store.Lock()
		defer e.Store.Unlock()
		for _, m := range e.Store.Collection(11).Members {
			if m.MediaItemID == 121 && *m.CustomIndex != 2 {
				t.Errorf("item 121 got index %d", *m.CustomIndex)
			}
		}
		if w := e.V1.Writes(); len(w) != 1 || w[0].IfMatch != `"4"` {
			t.Errorf("writes %+v", w)
		}
	})
}

// ifMatch travels as a header: a value with CR or LF is refused before
// any request, so it can never add a header to the key-bearing request.
func TestHeaderInjectionRefusedBeforeAnyRequest(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	for _, tag := range []string{"\"4\"\r\nX-Api-Key: other", "\"4\"\nX-Evil: 1", "4\r", "\"4\"\x00"} {
		got, isErr := svc.Call(t, "ersatztv_update_collection_custom_order",
			map[string]any{"id": 11, "order": []any{map[string]any{"mediaItemId": 121, "customIndex": 7}}, "ifMatch": tag}, "")
		if !isErr || errCode(got) != string(toolerr.InvalidArgument) {
			t.Errorf("ifMatch %q: %v", tag, got)
		}
	}
	e.noRequests(t)
}

// add_collection_items previews which ids exist and which are new; an
// unknown id (which would make ErsatzTV reject the batch) is refused
// before anything is sent, and only new ids are sent.
func TestAddCollectionItemsPreviewsExistence(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	// The seed's flow: search, add, re-run to confirm idempotence.
	found, isErr := svc.Call(t, "ersatztv_search_all_items", map[string]any{"query": "type:music_video AND title:dreams"}, "")
	ids, _ := found["musicVideoIds"].([]any)
	if isErr || len(ids) != 1 {
		t.Fatalf("search: %v", found)
	}
	add := map[string]any{"id": 12, "musicVideoIds": ids, "artistIds": []any{116}, "movieIds": []any{101}}
	p := preview(t, svc, "ersatztv_add_collection_items", add)
	details := p["details"].(map[string]any)
	if !sameJSON(t, details["new"], map[string]any{"movieIds": []int{101}, "artistIds": []int{116}, "musicVideoIds": []any{ids[0]}}) || details["allExist"] != true {
		t.Fatalf("preview: %v", p)
	}
	if got, isErr := confirm(t, svc, "ersatztv_add_collection_items", add); isErr {
		t.Fatalf("confirm: %v", got)
	}
	e.Store.Lock()
	n := len(e.Store.Collection(12).Members)
	e.Store.Unlock()
	if n != 3 {
		t.Fatalf("collection 12 has %d items", n)
	}
	e.resetRequests()
	cases := []struct {
		name string
		args map[string]any
		code toolerr.Code
		says string
		new  map[string]any
	}{
		{name: "re-run: everything is already there", args: add, code: toolerr.InvalidArgument, says: "already in collection 12"},
		{name: "an unknown id", args: map[string]any{"id": 12, "movieIds": []any{102, 9999}}, code: toolerr.InvalidArgument, says: "movieIds [9999]"},
		{name: "an id of another kind", args: map[string]any{"id": 12, "artistIds": []any{101}}, code: toolerr.InvalidArgument, says: "artistIds [101]"},
		{name: "no ids", args: map[string]any{"id": 12}, code: toolerr.InvalidArgument, says: "at least one id"},
		{name: "an unknown collection", args: map[string]any{"id": 99, "movieIds": []any{101}}, code: toolerr.NotFound},
		{name: "some new, some present", args: map[string]any{"id": 10, "movieIds": []any{101, 104}}, new: map[string]any{"movieIds": []int{104}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, isErr := svc.Call(t, "ersatztv_add_collection_items", c.args, "")
			if c.code != "" {
				msg, _ := got["error"].(map[string]any)["message"].(string)
				if !isErr || errCode(got) != string(c.code) || !strings.Contains(msg, c.says) {
					t.Fatalf("got %v, want %s saying %q", got, c.code, c.says)
				}
				return
			}
			d := got["preview"].(map[string]any)["details"].(map[string]any)
			if isErr || !sameJSON(t, d["new"], c.new) || !sameJSON(t, d["alreadyInCollection"], map[string]any{"movieIds": []int{101}}) {
				t.Fatalf("preview: %v", got)
			}
		})
	}
	if len(e.V1.Writes()) != 0 {
		t.Fatal("a refused or previewed add wrote")
	}
}

// Every v1 write against the fake: the request its confirm sends and what
// it does there.
func TestV1WritesAgainstTheFake(t *testing.T) {
	cases := []struct {
		tool   string
		args   map[string]any
		method string
		path   string
		check  func(t *testing.T, s *fakeersatztv.Store)
	}{
		{"ersatztv_create_collection", map[string]any{"name": "Synthwave"}, "POST", "/api/v1/collections", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.Collections) != 4 || s.Collections[3].Name != "Synthwave" {
				t.Error("not created")
			}
		}},
		{"ersatztv_update_collection", map[string]any{"id": 12, "name": "Cartoons"}, "PUT", "/api/v1/collections/12", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Collection(12).Name != "Cartoons" {
				t.Error("not renamed")
			}
		}},
		{"ersatztv_delete_collection", map[string]any{"id": 12}, "DELETE", "/api/v1/collections/12", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Collection(12) != nil {
				t.Error("not deleted")
			}
		}},
		{"ersatztv_add_collection_items", map[string]any{"id": 12, "episodeIds": []any{111, 112}}, "POST", "/api/v1/collections/12/items", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.Collection(12).Members) != 2 {
				t.Error("not added")
			}
		}},
		{"ersatztv_remove_collection_item", map[string]any{"id": 10, "mediaItemId": 102}, "DELETE", "/api/v1/collections/10/items/102", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.Collection(10).Members) != 2 {
				t.Error("not removed")
			}
		}},
		{"ersatztv_update_collection_custom_order", map[string]any{"id": 10, "order": []any{map[string]any{"mediaItemId": 105, "customIndex": 0}}}, "PUT", "/api/v1/collections/10/custom-order",
			func(t *testing.T, s *fakeersatztv.Store) {
				if c := s.Collection(10); c.Members[2].CustomIndex == nil || *c.Members[2].CustomIndex != 0 {
					t.Errorf("members %+v", c.Members)
				}
			}},
		{"ersatztv_create_smart_collection", map[string]any{"name": "Shows", "query": "type:show"}, "POST", "/api/v1/smart-collections", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.SmartCollections) != 3 {
				t.Error("not created")
			}
		}},
		{"ersatztv_update_smart_collection", map[string]any{"id": 21, "name": "TH"}, "PUT", "/api/v1/smart-collections/21", func(t *testing.T, s *fakeersatztv.Store) {
			if s.SmartCollections[1].Name != "TH" || !strings.Contains(s.SmartCollections[1].Query, "Talking Heads") {
				t.Error("not updated")
			}
		}},
		{"ersatztv_delete_smart_collection", map[string]any{"id": 21}, "DELETE", "/api/v1/smart-collections/21", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.SmartCollections) != 1 {
				t.Error("not deleted")
			}
		}},
		{"ersatztv_create_schedule", map[string]any{"name": "Cartoon Mornings", "padToNearestMinute": 30}, "POST", "/api/v1/schedules", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.Schedules) != 3 || *s.Schedules[2].PadToNearestMinute != 30 {
				t.Error("not created")
			}
		}},
		{"ersatztv_update_schedule", map[string]any{"id": 31, "name": "Loop"}, "PUT", "/api/v1/schedules/31", func(t *testing.T, s *fakeersatztv.Store) {
			if sc := s.Schedule(31); sc.Name != "Loop" || !sc.ShuffleScheduleItems {
				t.Errorf("schedule %+v", sc)
			}
		}},
		{"ersatztv_delete_schedule", map[string]any{"id": 31}, "DELETE", "/api/v1/schedules/31", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Schedule(31) != nil {
				t.Error("not deleted")
			}
		}},
		{"ersatztv_create_playout", map[string]any{"channelId": 2, "scheduleKind": "Classic", "programScheduleId": 30}, "POST", "/api/v1/playouts", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.Playouts) != 3 || s.Playouts[2].ChannelID != 2 {
				t.Error("not created")
			}
		}},
		{"ersatztv_update_playout", map[string]any{"id": 2, "dailyRebuildTime": "05:30:00"}, "PUT", "/api/v1/playouts/2", func(t *testing.T, s *fakeersatztv.Store) {
			if p := s.Playout(2); p.DailyRebuildTime == nil || *p.DailyRebuildTime != "05:30:00" {
				t.Error("not updated")
			}
		}},
		{"ersatztv_delete_playout", map[string]any{"id": 2}, "DELETE", "/api/v1/playouts/2", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Playout(2) != nil {
				t.Error("not deleted")
			}
		}},
		{"ersatztv_create_channel", map[string]any{"name": "News", "number": "4", "ffmpegProfileId": 2, "playoutMode": "OnDemand"}, "POST", "/api/v1/channels",
			func(t *testing.T, s *fakeersatztv.Store) {
				c := s.Channels[len(s.Channels)-1]
				if c.Name != "News" || c.PlayoutMode != "OnDemand" || c.StreamingMode != "TransportStreamHybrid" || !c.IsEnabled {
					t.Errorf("channel %+v", c)
				}
			}},
		{"ersatztv_update_channel", map[string]any{"id": 3, "number": "3.2"}, "PUT", "/api/v1/channels/3", func(t *testing.T, s *fakeersatztv.Store) {
			if c := s.Channel(3); c.Number != "3.2" || c.MusicVideoCreditsMode != "GenerateSubtitles" {
				t.Errorf("channel %+v", c)
			}
		}},
		// Playout 1 plays channel 3: the reset names the channel.
		{"ersatztv_reset_channel_playout", map[string]any{"id": 3}, "POST", "/api/v1/channels/3/playout/reset", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Playout(1).Resets != 1 || s.Playout(2).Resets != 0 {
				t.Error("the wrong playout was reset")
			}
		}},
		{"ersatztv_delete_channel", map[string]any{"id": 2}, "DELETE", "/api/v1/channels/2", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Channel(2) != nil {
				t.Error("not deleted")
			}
		}},
		{"ersatztv_enable_jellyfin_library_sync", map[string]any{"id": 5, "libraries": []any{map[string]any{"id": 43, "shouldSyncItems": true}}}, "PUT", "/api/v1/media-sources/jellyfin/5/libraries",
			func(t *testing.T, s *fakeersatztv.Store) {
				if l := s.Source(5).Libraries; !l[2].ShouldSyncItems || l[1].ShouldSyncItems || !l[0].ShouldSyncItems {
					t.Errorf("libraries %+v", l)
				}
			}},
		{"ersatztv_refresh_jellyfin_libraries", map[string]any{"id": 5}, "POST", "/api/v1/media-sources/jellyfin/5/refresh-libraries", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Source(5).Refreshes != 1 {
				t.Error("not queued")
			}
		}},
		{"ersatztv_scan_jellyfin_collections", map[string]any{"id": 5}, "POST", "/api/v1/media-sources/jellyfin/5/scan-collections", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Source(5).CollectionScans != 1 {
				t.Error("not queued")
			}
		}},
		{"ersatztv_scan_library", map[string]any{"id": 2}, "POST", "/api/v1/libraries/2/scan", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Library(2).Scans != 1 {
				t.Error("not queued")
			}
		}},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.tool] = true
		t.Run(c.tool, func(t *testing.T) {
			e := startV1(t, nil)
			svc := e.service(t)
			preview(t, svc, c.tool, c.args)
			got, isErr := confirm(t, svc, c.tool, c.args)
			if isErr || got["status"] != "applied" {
				t.Fatalf("confirm: %v", got)
			}
			w := e.V1.Writes()
			if len(w) != 1 || w[0].Method != c.method || w[0].Path != c.path || w[0].Key != testKey {
				t.Fatalf("writes %+v, want one %s %s with the key", w, c.method, c.path)
			}
			e.Store.Lock()
			defer e.Store.Unlock()
			c.check(t, e.Store)
		})
	}
	svc := startV1(t, nil).service(t)
	for _, name := range listNames(t, svc, true) {
		if !seen[name] {
			t.Errorf("no case for %s", name)
		}
	}
	if n := len(listNames(t, svc, true)); n != 23 {
		t.Errorf("%d write tools, want the seed's 23", n)
	}
}

// The writes upstream ErsatzTV supports, on its own routes: smart
// collections by verb-style paths, the playout reset by channel number.
func TestLegacyWritesAgainstTheFake(t *testing.T) {
	cases := []struct {
		tool   string
		args   map[string]any
		method string
		path   string
		body   string
		check  func(t *testing.T, s *fakeersatztv.Store)
	}{
		{"ersatztv_create_smart_collection", map[string]any{"name": "Shows", "query": "type:show"}, "POST", "/api/collections/smart/new", `{"name":"Shows","query":"type:show"}`,
			func(t *testing.T, s *fakeersatztv.Store) {
				if len(s.SmartCollections) != 3 {
					t.Error("not created")
				}
			}},
		{"ersatztv_update_smart_collection", map[string]any{"id": 20, "query": "type:movie"}, "PUT", "/api/collections/smart/update", `{"id":20,"name":"80s movies","query":"type:movie"}`,
			func(t *testing.T, s *fakeersatztv.Store) {
				if s.SmartCollections[0].Query != "type:movie" || s.SmartCollections[0].Name != "80s movies" {
					t.Error("not updated")
				}
			}},
		{"ersatztv_delete_smart_collection", map[string]any{"id": 21}, "DELETE", "/api/collections/smart/delete/21", "", func(t *testing.T, s *fakeersatztv.Store) {
			if len(s.SmartCollections) != 1 {
				t.Error("not deleted")
			}
		}},
		{"ersatztv_reset_channel_playout", map[string]any{"number": "3.1"}, "POST", "/api/channels/3.1/playout/reset", "", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Playout(1).Resets != 1 {
				t.Error("not reset")
			}
		}},
		{"ersatztv_scan_library", map[string]any{"id": 1}, "POST", "/api/libraries/1/scan", "", func(t *testing.T, s *fakeersatztv.Store) {
			if s.Library(1).Scans != 1 {
				t.Error("not queued")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			e := startLegacy(t, map[string]string{"ERSATZTV_API_KEY_FILE": keyFile(t, testKey)})
			svc := e.service(t)
			preview(t, svc, c.tool, c.args)
			got, isErr := confirm(t, svc, c.tool, c.args)
			if isErr || got["status"] != "applied" {
				t.Fatalf("confirm: %v", got)
			}
			w := e.Legacy.Writes()
			if len(w) != 1 || w[0].Method != c.method || w[0].Path != c.path || w[0].Key != "" {
				t.Fatalf("writes %+v, want one %s %s without a key", w, c.method, c.path)
			}
			if c.body != "" && !sameJSON(t, json.RawMessage(w[0].Body), json.RawMessage(c.body)) {
				t.Errorf("body %s, want %s", w[0].Body, c.body)
			}
			e.Store.Lock()
			defer e.Store.Unlock()
			c.check(t, e.Store)
		})
	}
	if got := listNames(t, startLegacy(t, nil).service(t), true); len(got) != 5 {
		t.Errorf("legacy writes %v", got)
	}
}

// What upstream ErsatzTV's writes really do, read from its source
// (Controllers/Api, the MediaCollections and Libraries command handlers,
// the EF configurations): each is shown before the confirm, and a write
// ErsatzTV only queues is reported as queued.
func TestLegacyWritesSayWhatErsatzTVDoes(t *testing.T) {
	notes := func(p map[string]any) string {
		b, _ := json.Marshal(p["notes"])
		return string(b)
	}
	t.Run("a smart collection name is at most 50 characters", func(t *testing.T) {
		e := startLegacy(t, nil)
		svc := e.service(t)
		for _, args := range []map[string]any{
			{"name": strings.Repeat("x", 51), "query": "type:movie"},
		} {
			if got, isErr := svc.Call(t, "ersatztv_create_smart_collection", args, ""); !isErr {
				t.Errorf("a 51-character name was accepted: %v", got)
			}
		}
		if got, isErr := svc.Call(t, "ersatztv_update_smart_collection", map[string]any{"id": 20, "name": strings.Repeat("y", 51)}, ""); !isErr {
			t.Errorf("a 51-character new name was accepted: %v", got)
		}
		if w := e.Legacy.Writes(); len(w) != 0 {
			t.Errorf("writes sent: %+v", w)
		}
	})
	t.Run("a rename to another's name is refused before sending", func(t *testing.T) {
		e := startLegacy(t, nil)
		got, isErr := e.service(t).Call(t, "ersatztv_update_smart_collection", map[string]any{"id": 20, "name": "Talking Heads videos"}, "")
		if !isErr || errCode(got) != string(toolerr.InvalidArgument) || !strings.Contains(got["error"].(map[string]any)["message"].(string), "already named") {
			t.Fatalf("preview: %v", got)
		}
	})
	t.Run("an update rebuilds the playouts that use it", func(t *testing.T) {
		e := startLegacy(t, nil)
		svc := e.service(t)
		args := map[string]any{"id": 20, "query": "type:movie"}
		if n := notes(preview(t, svc, "ersatztv_update_smart_collection", args)); !strings.Contains(n, "rebuilds") {
			t.Errorf("notes %s", n)
		}
		if got, isErr := confirm(t, svc, "ersatztv_update_smart_collection", args); isErr {
			t.Fatal(got)
		}
		e.Store.Lock()
		defer e.Store.Unlock()
		if e.Store.Playout(2).Refreshes != 1 {
			t.Error("the playout of the schedule using it was not rebuilt")
		}
	})
	t.Run("a delete says what cascades", func(t *testing.T) {
		e := startLegacy(t, nil)
		svc := e.service(t)
		args := map[string]any{"id": 20}
		if n := notes(preview(t, svc, "ersatztv_delete_smart_collection", args)); !strings.Contains(n, "schedule item") || !strings.Contains(n, "cascade") {
			t.Errorf("notes %s", n)
		}
		if got, isErr := confirm(t, svc, "ersatztv_delete_smart_collection", args); isErr {
			t.Fatal(got)
		}
		e.Store.Lock()
		defer e.Store.Unlock()
		if items := e.Store.Schedule(30).Items; len(items) != 1 {
			t.Errorf("schedule 30 kept %d items; its smart collection item goes with the delete", len(items))
		}
	})
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		queued     func(s *fakeersatztv.Store) bool
	}{
		{"a reset is only queued", "ersatztv_reset_channel_playout", map[string]any{"number": "3.1"}, func(s *fakeersatztv.Store) bool { return s.Playout(1).Resets == 1 }},
		{"a scan is only queued", "ersatztv_scan_library", map[string]any{"id": 1}, func(s *fakeersatztv.Store) bool { return s.Library(1).Scans == 1 }},
		{"a scan of a library being scanned queues nothing", "ersatztv_scan_library", map[string]any{"id": 3}, func(s *fakeersatztv.Store) bool { return s.Library(3).Scans == 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := startLegacy(t, nil)
			svc := e.service(t)
			preview(t, svc, c.tool, c.args)
			got, isErr := confirm(t, svc, c.tool, c.args)
			res, _ := got["result"].(map[string]any)
			if isErr || res["queued"] == nil || res["done"] != nil || res["note"] == nil {
				t.Fatalf("result %v: a queued job must not be reported done", got)
			}
			e.Store.Lock()
			defer e.Store.Unlock()
			if !c.queued(e.Store) {
				t.Error("the fake did not do what ErsatzTV does")
			}
		})
	}
}

// Previews refuse what cannot or need not be done, before anything is sent.
func TestPreviewsRefuse(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	cases := []struct {
		name string
		tool string
		args map[string]any
		code toolerr.Code
		says string
	}{
		{"nothing would change", "ersatztv_update_channel", map[string]any{"id": 1, "name": "Classic Movies"}, toolerr.InvalidArgument, "nothing would change"},
		{"set and cleared at once", "ersatztv_update_channel", map[string]any{"id": 1, "watermarkId": 2, "clear": []any{"watermarkId"}}, toolerr.InvalidArgument, "both set and cleared"},
		{"a taken channel number", "ersatztv_update_channel", map[string]any{"id": 1, "number": "2"}, toolerr.InvalidArgument, "taken by channel 2"},
		{"an unknown FFmpeg profile", "ersatztv_create_channel", map[string]any{"name": "x", "number": "9", "ffmpegProfileId": 77}, toolerr.InvalidArgument, "no FFmpeg profile"},
		{"an unknown channel", "ersatztv_update_channel", map[string]any{"id": 99, "name": "x"}, toolerr.NotFound, "no channel 99"},
		{"a channel without a playout", "ersatztv_reset_channel_playout", map[string]any{"id": 2}, toolerr.NotFound, "channel id"},
		{"a classic playout without a schedule", "ersatztv_create_playout", map[string]any{"channelId": 2, "scheduleKind": "Classic"}, toolerr.InvalidArgument, "programScheduleId"},
		{"an item not in the collection", "ersatztv_remove_collection_item", map[string]any{"id": 10, "mediaItemId": 104}, toolerr.NotFound, "not in collection 10"},
		{"custom order for a stranger", "ersatztv_update_collection_custom_order", map[string]any{"id": 10, "order": []any{map[string]any{"mediaItemId": 104, "customIndex": 1}}}, toolerr.InvalidArgument, "[104]"},
		{"a library of another source", "ersatztv_enable_jellyfin_library_sync", map[string]any{"id": 5, "libraries": []any{map[string]any{"id": 1, "shouldSyncItems": true}}}, toolerr.InvalidArgument, "does not belong"},
		{"a source that is not Jellyfin", "ersatztv_refresh_jellyfin_libraries", map[string]any{"id": 1}, toolerr.NotFound, "no Jellyfin media source 1"},
		{"a taken smart collection name", "ersatztv_create_smart_collection", map[string]any{"name": "80s movies", "query": "x"}, toolerr.InvalidArgument, "already named"},
		{"unknown arguments", "ersatztv_update_channel", map[string]any{"id": 1, "colour": "red"}, toolerr.InvalidArgument, "colour"},
		{"an unknown enum name", "ersatztv_update_channel", map[string]any{"id": 1, "streamingMode": "Fast"}, toolerr.InvalidArgument, "streamingMode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, isErr := svc.Call(t, c.tool, c.args, "")
			msg, _ := got["error"].(map[string]any)["message"].(string)
			if !isErr || errCode(got) != string(c.code) || !strings.Contains(msg, c.says) {
				t.Fatalf("got %v, want %s saying %q", got, c.code, c.says)
			}
		})
	}
	if len(e.V1.Writes()) != 0 {
		t.Fatal("a refused preview wrote")
	}
}

// ErsatzTV's data model deletes a schedule's playouts with it
// (ProgramScheduleConfiguration: Playouts OnDelete Cascade): the preview
// names the channels left without a playout, and after the confirm the
// playout is gone while the other channel keeps its own.
func TestDeleteScheduleShowsThePlayoutsItTakes(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	args := map[string]any{"id": 31}
	p := preview(t, svc, "ersatztv_delete_schedule", args)
	lost, _ := p["details"].(map[string]any)["playoutsDeleted"].([]any)
	if len(lost) != 1 || lost[0].(map[string]any)["channelId"] != float64(3) || !strings.Contains(jsonText(t, p["notes"]), "left without a playout") {
		t.Fatalf("preview %v", p)
	}
	if got, isErr := confirm(t, svc, "ersatztv_delete_schedule", args); isErr {
		t.Fatalf("confirm %v", got)
	}
	e.Store.Lock()
	defer e.Store.Unlock()
	if e.Store.Playout(1) != nil || e.Store.Playout(2) == nil {
		t.Errorf("playouts after the delete: %v %v", e.Store.Playout(1), e.Store.Playout(2))
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Schedule and collection names are unique and at most 50 characters in
// ErsatzTV (Create/UpdateProgramScheduleHandler "Schedule name must be
// unique", Create/UpdateCollectionHandler "Collection name must be
// unique"; channel names at most 50 too): the previews refuse a taken
// name before anything is sent, and the schemas a longer one.
func TestScheduleAndCollectionNamesAreUniqueAndShort(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"ersatztv_create_schedule", map[string]any{"name": "Movie Nights"}},
		{"ersatztv_update_schedule", map[string]any{"id": 31, "name": "Movie Nights"}},
		{"ersatztv_create_schedule", map[string]any{"name": strings.Repeat("x", 51)}},
		{"ersatztv_create_collection", map[string]any{"name": "Cartoon Block"}},
		{"ersatztv_update_collection", map[string]any{"id": 10, "name": "Cartoon Block"}},
		{"ersatztv_create_collection", map[string]any{"name": strings.Repeat("x", 51)}},
		{"ersatztv_create_channel", map[string]any{"name": strings.Repeat("x", 51), "number": "9", "ffmpegProfileId": 1}},
	} {
		got, isErr := svc.Call(t, c.tool, c.args, "")
		if !isErr || errCode(got) != "invalid_argument" {
			t.Errorf("%s %v: %v", c.tool, c.args, got)
		}
	}
	if got, isErr := svc.Call(t, "ersatztv_update_schedule", map[string]any{"id": 30, "name": "Movie Nights", "shuffleScheduleItems": true}, ""); isErr {
		t.Errorf("keeping its own name: %v", got)
	}
	for _, r := range e.requests() {
		if r.Method != http.MethodGet {
			t.Errorf("a refused preview sent %s %s", r.Method, r.Path)
		}
	}
}
