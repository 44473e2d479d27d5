package tools_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

// Both APIs the service meets: the seed's, and the public 3.3.x builds.
var releases = []faketuliprox.Release{faketuliprox.ReleaseSeed, faketuliprox.ReleasePublic}

// recordCount checks how many records a history answer holds.
func recordCount(n int) func(t *testing.T, got map[string]any) {
	return func(t *testing.T, got map[string]any) {
		t.Helper()
		if g := len(list(t, got, "records")); g != n {
			t.Errorf("%d records, want %d", g, n)
		}
	}
}

// The tools every release has answer the same on both APIs: stream
// history is paged and searched (by Tuliprox or by toolgate), with the
// same totals.
func TestReadsAnswerAlikeOnBothReleases(t *testing.T) {
	for _, rel := range releases {
		t.Run(string(rel), func(t *testing.T) {
			svc := admin(t, faketuliprox.Options{Release: rel}).service(t)
			svc.RunReads(t, []toolkittest.ReadCase{
				{Tool: tools.ToolStatus, Has: []string{`"active_user_streams":2`}},
				{Tool: tools.ToolStreams, Has: []string{`"count":2`}},
				{Tool: tools.ToolIPInfo, Has: []string{"203.0.113.7"}},
				{Name: "history page", Tool: tools.ToolHistory, Args: map[string]any{"page_size": 25},
					Has:   []string{`"page_size":25`, `"total":60`, `"has_more":true`, `"from":"2026-11-27"`, `"to":"2026-12-03"`, "last 7 days"},
					Check: recordCount(25)},
				{Name: "history last page", Tool: tools.ToolHistory, Args: map[string]any{"page": 3, "page_size": 25},
					Has: []string{`"has_more":false`}, Check: recordCount(10)},
				{Name: "history newest first", Tool: tools.ToolHistory, Args: map[string]any{"page_size": 25},
					Check: func(t *testing.T, got map[string]any) {
						recs := list(t, got, "records")
						for i := 1; i < len(recs); i++ {
							if num(t, recs[i].(map[string]any), "event_ts_utc") > num(t, recs[i-1].(map[string]any), "event_ts_utc") {
								t.Fatal("not newest first")
							}
						}
					}},
				{Name: "history text search in one field", Tool: tools.ToolHistory, Args: map[string]any{"search": "CARLA", "search_field": []any{"api_username"}},
					Has: []string{`"total":20`}, Check: every("records", "api_username", "carla")},
				{Name: "history text search in every field", Tool: tools.ToolHistory, Args: map[string]any{"search": "zdf"}, Has: []string{`"total":15`}},
				{Name: "history regex search", Tool: tools.ToolHistory, Args: map[string]any{"search": "^ZDF", "search_mode": "regex", "search_field": []any{"title"}},
					Has: []string{`"total":15`}},
				{Name: "history by day", Tool: tools.ToolHistory, Args: map[string]any{"from": "2026-12-03", "to": "2026-12-03"},
					Check: every("records", "partition_day_utc", "2026-12-03")},
				{Name: "history from a zoned date-time", Tool: tools.ToolHistory, Args: map[string]any{"from": "2026-12-03T11:30:00+01:00", "to": "2026-12-03 12:30"},
					Has: []string{`"from":"2026-12-03 10:30:00"`, `"to":"2026-12-03 12:30:00"`, `"total":3`}},
				{Name: "summary", Tool: tools.ToolHistorySummary, Args: map[string]any{"api_username": "anna"},
					Has: []string{`"provider_name":"provider-a","session_count":15`, `"count":2`, `"from":"2026-11-27"`}},
				{Name: "QoS snapshots with a limit, best first", Tool: tools.ToolQoSList, Args: map[string]any{"limit": 3}, Has: []string{`"count":3`, `"stream_identity_key":"sik-1001"`}},
				{Tool: tools.ToolQoS, Args: map[string]any{"stream_identity_key": "sik-1003"}, Has: []string{`"virtual_id":1003`}},
				{Name: "unknown QoS key", Tool: tools.ToolQoS, Args: map[string]any{"stream_identity_key": "sik-9"}, Code: toolerr.NotFound,
					Has: []string{"no QoS snapshot with that stream identity key"}},
			}, secrets...)
		})
	}
}

// What differs between the releases differs clearly: a route the public
// release lacks is "not supported" with what it needs, and a QoS filter it
// would silently ignore is refused rather than answered unfiltered.
func TestWhatAReleaseLacksIsSaidNotGuessed(t *testing.T) {
	seedOnly := map[string]map[string]any{
		tools.ToolEventStats: nil, tools.ToolSources: nil, tools.ToolUpdateStatus: nil,
		tools.ToolItems:       {"target": "main", "cluster": "live"},
		tools.ToolEPGChannels: {"target": "main"}, tools.ToolEPGChannel: {"target": "main", "channel_id": "zdf.de"},
	}
	history := map[string]map[string]any{
		tools.ToolHistory: nil, tools.ToolHistorySummary: nil, tools.ToolQoSList: nil,
		tools.ToolQoS: {"stream_identity_key": "sik-1001"},
	}
	cases := []struct {
		release faketuliprox.Release
		lacks   map[string]map[string]any
		needs   string
	}{
		{faketuliprox.ReleasePublic, seedOnly, "needs the playlist, EPG, event and update-status API of Tuliprox's MCP operator reference"},
		{faketuliprox.Release330, history, "needs Tuliprox 3.3.1 or later"},
	}
	for _, c := range cases {
		t.Run(string(c.release), func(t *testing.T) {
			svc := admin(t, faketuliprox.Options{Release: c.release}).service(t)
			var reads []toolkittest.ReadCase
			for tool, args := range c.lacks {
				reads = append(reads, toolkittest.ReadCase{Name: tool, Tool: tool, Args: args, Code: toolerr.NotFound,
					Has: []string{"not supported by this Tuliprox release (" + c.needs}})
			}
			svc.RunReads(t, reads, secrets...)
		})
	}
	for _, c := range []struct {
		release faketuliprox.Release
		read    toolkittest.ReadCase
	}{
		{faketuliprox.ReleaseSeed, toolkittest.ReadCase{Tool: tools.ToolQoSList, Args: map[string]any{"target_name": "kids"},
			Has: []string{`"count":3`}, Check: every("snapshots", "target_name", "kids")}},
		{faketuliprox.ReleasePublic, toolkittest.ReadCase{Tool: tools.ToolQoSList, Args: map[string]any{"target_name": "kids"},
			Code: toolerr.NotFound, Has: []string{"not supported by this Tuliprox release", "target id only"}, HasNot: []string{"sik-"}}},
	} {
		t.Run("QoS target_name on "+string(c.release), func(t *testing.T) {
			admin(t, faketuliprox.Options{Release: c.release}).service(t).RunReads(t, []toolkittest.ReadCase{c.read}, secrets...)
		})
	}
}

// historyQueries are the /stream-history queries the fake received.
func historyQueries(e *env) []url.Values {
	var out []url.Values
	for _, r := range e.fake.Requests() {
		if r.Path == "/api/v1/stream-history" {
			q, _ := url.ParseQuery(r.Query)
			out = append(out, q)
		}
	}
	return out
}

// The service learns once per process which form /stream-history takes,
// then asks in that form only, and learns again as soon as an answer shows
// that Tuliprox changed.
func TestHistoryLearnsTheReleaseAndRelearnsWhenItChanges(t *testing.T) {
	e := admin(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic})
	svc := e.service(t)
	paged := map[string]any{"page_size": 25, "search": "anna"}
	steps := []struct {
		name    string
		release faketuliprox.Release
		args    map[string]any
		asked   []bool // per request: did it carry the seed's paging?
	}{
		{"first call: the seed's form refused, then the range alone", faketuliprox.ReleasePublic, paged, []bool{true, false}},
		{"learned: the range alone", faketuliprox.ReleasePublic, paged, []bool{false}},
		{"updated to the seed's API: its page answer, then asked to page", faketuliprox.ReleaseSeed, paged, []bool{false, true}},
		{"learned: the seed's form", faketuliprox.ReleaseSeed, paged, []bool{true}},
		{"without paging arguments nothing extra is sent", faketuliprox.ReleaseSeed, map[string]any{}, []bool{false}},
		{"back to 3.3.x: refused once, learned again", faketuliprox.ReleasePublic, paged, []bool{true, false}},
	}
	for _, s := range steps {
		e.fake.SetRelease(s.release)
		e.fake.Reset()
		got, isErr := svc.Call(t, tools.ToolHistory, s.args, "")
		if isErr {
			t.Fatalf("%s: %v", s.name, got)
		}
		if _, ok := s.args["search"]; ok && num(t, got, "total") != 20 {
			t.Fatalf("%s: total %v, want 20", s.name, got["total"])
		}
		qs := historyQueries(e)
		if len(qs) != len(s.asked) {
			t.Fatalf("%s: %d requests %v, want %d", s.name, len(qs), qs, len(s.asked))
		}
		for i, q := range qs {
			if has := q.Has("page_size") || q.Has("search"); has != s.asked[i] {
				t.Fatalf("%s: request %d is %v", s.name, i, q)
			}
		}
	}
}

// The range is sent in the form both releases accept, and a bad one never
// leaves the service.
func TestHistoryRangeIsSentInTheFormBothReleasesAccept(t *testing.T) {
	cases := []struct {
		name     string
		args     map[string]any
		from, to string
		code     toolerr.Code
	}{
		{"neither: the last 7 days", map[string]any{}, "2026-11-27", "2026-12-03", ""},
		{"from alone: up to today", map[string]any{"from": "2026-12-01"}, "2026-12-01", "2026-12-03", ""},
		{"to alone: the 7 days up to it", map[string]any{"to": "2026-12-02"}, "2026-11-26", "2026-12-02", ""},
		{"zoned date-times in UTC without T", map[string]any{"from": "2026-12-02T23:15:00-02:00", "to": "2026-12-03T10:00:00.5Z"},
			"2026-12-03 01:15:00", "2026-12-03 10:00:00", ""},
		{"from after to", map[string]any{"from": "2026-12-03", "to": "2026-12-01"}, "", "", toolerr.InvalidArgument},
		{"an impossible date", map[string]any{"from": "2026-02-30"}, "", "", toolerr.InvalidArgument},
	}
	for _, rel := range releases {
		for _, c := range cases {
			t.Run(string(rel)+"/"+c.name, func(t *testing.T) {
				e := admin(t, faketuliprox.Options{Release: rel})
				for _, tool := range []string{tools.ToolHistory, tools.ToolHistorySummary} {
					e.fake.Reset()
					got, _ := e.service(t).Call(t, tool, c.args, "")
					if code(got) != c.code {
						t.Fatalf("%s: %v", tool, got)
					}
					var sent []url.Values
					for _, r := range e.fake.Requests() {
						q, _ := url.ParseQuery(r.Query)
						sent = append(sent, q)
					}
					if c.code != "" {
						if len(sent) != 0 {
							t.Fatalf("%s: a bad range reached Tuliprox: %v", tool, sent)
						}
						continue
					}
					if len(sent) != 1 || sent[0].Get("from") != c.from || sent[0].Get("to") != c.to {
						t.Fatalf("%s sent %v, want from %s to %s", tool, sent, c.from, c.to)
					}
				}
			})
		}
	}
}

// Paging and searching a bare array happens within bounds: a range with
// more records than toolgate pages, or a body over the response cap, must
// be narrowed.
func TestHistoryPagedByToolgateIsBounded(t *testing.T) {
	cases := []struct {
		name string
		rec  func(i int) map[string]any
		want string
	}{
		{"more records than toolgate pages", func(i int) map[string]any {
			return map[string]any{"event_ts_utc": t0.Unix(), "session_id": i}
		}, "narrow from and to"},
		{"more bytes than the response cap", func(i int) map[string]any {
			return map[string]any{"event_ts_utc": t0.Unix(), "session_id": i, "title": strings.Repeat("x", 400)}
		}, "narrow the request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := admin(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic})
			e.fake.Lock()
			for i := range 10_001 {
				e.fake.Data().History = append(e.fake.Data().History, c.rec(i))
			}
			e.fake.Unlock()
			got, _ := e.service(t).Call(t, tools.ToolHistory, map[string]any{"from": "2026-12-03"}, "")
			if code(got) != toolerr.TooLarge || !strings.Contains(got["error"].(map[string]any)["message"].(string), c.want) {
				t.Fatalf("%v", got)
			}
		})
	}
}

// A summary filter stays an exact match on the released API, which reads
// a value starting with "~" as a regular expression.
func TestSummaryFilterValuesStayExact(t *testing.T) {
	for _, rel := range releases {
		e := admin(t, faketuliprox.Options{Release: rel})
		got, isErr := e.service(t).Call(t, tools.ToolHistorySummary, map[string]any{"api_username": "~.*"}, "")
		if isErr || num(t, got, "count") != 0 {
			t.Fatalf("%s: api_username \"~.*\" matched: %v", rel, got)
		}
	}
}

// A playlist update is described as Tuliprox answered it: queued under a
// run id by the seed's API; on 3.3.x accepted, with what that may mean,
// never "queued", since that release answers 202 to a request it drops.
func TestUpdatePlaylistsNeverClaimsAQueueTheReleaseMayHaveDropped(t *testing.T) {
	for _, rel := range releases {
		t.Run(string(rel), func(t *testing.T) {
			e := operator(t, faketuliprox.Options{Release: rel})
			svc := e.service(t)
			args := map[string]any{"targets": []any{"MAIN"}}
			got, isErr := svc.Call(t, tools.ToolUpdatePlaylist, args, "")
			prev := preview(t, got)
			if isErr {
				t.Fatalf("preview: %v", got)
			}
			if rel == faketuliprox.ReleasePublic && (prev["update_state"] != "unknown" || !strings.Contains(prev["note"].(string), "drops it")) {
				t.Fatalf("preview on 3.3.x: %v", prev)
			}
			var outcomes []string
			for i := range 3 {
				tok := svc.Approve(t, "tuliprox", tools.ToolUpdatePlaylist, args, "ticket-"+strconv.Itoa(i))
				got, _ = svc.Call(t, tools.ToolUpdatePlaylist, args, tok)
				b, _ := json.Marshal(got)
				res, _ := got["result"].(map[string]any)
				outcome, _ := res["outcome"].(string)
				if code(got) == toolerr.Busy {
					outcome = "busy"
				}
				if strings.Contains(string(b), `"queued"`) && rel == faketuliprox.ReleasePublic {
					t.Fatalf("apply %d claims a queue: %s", i, b)
				}
				outcomes = append(outcomes, outcome)
			}
			want := map[faketuliprox.Release]string{faketuliprox.ReleaseSeed: "queued,busy,busy", faketuliprox.ReleasePublic: "accepted,accepted,accepted"}[rel]
			if strings.Join(outcomes, ",") != want {
				t.Fatalf("outcomes %v, want %s", outcomes, want)
			}
			if rel == faketuliprox.ReleasePublic && (e.fake.DroppedUpdates() != 1 || len(e.fake.TakenUpdates()) != 2) {
				t.Fatalf("the fake took %v and dropped %d", e.fake.TakenUpdates(), e.fake.DroppedUpdates())
			}
		})
	}
}
