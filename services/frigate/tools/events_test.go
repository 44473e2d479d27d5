package tools

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

func TestWindowValidation(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	now := float64(testNow.Unix())
	tests := []struct {
		name, want    string
		after, before float64
	}{
		{"milliseconds rejected", "milliseconds", now*1000 - 3600_000, now * 1000},
		{"milliseconds in before only", "milliseconds", now - 3600, now * 1000},
		{"reversed", "reversed", now, now - 3600},
		{"empty", "reversed", now, now},
		{"too long", "at most 86400", now - 2*86400, now},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"after": tc.after, "before": tc.before}
			for tool, a := range map[string]map[string]any{
				"frigate_list_events":   args,
				"frigate_search_events": with(args, "query", "person"),
			} {
				before := h.hits.Load()
				if msg := h.mustFail(t, tool, a, "invalid_argument"); !strings.Contains(msg, tc.want) {
					t.Errorf("%s: message %q does not say %q", tool, msg, tc.want)
				}
				if h.hits.Load() != before {
					t.Errorf("%s: invalid window reached Frigate", tool)
				}
			}
		})
	}
	t.Run("inverted score range", func(t *testing.T) {
		h.mustFail(t, "frigate_list_events", with(window(), "minScore", 0.9, "maxScore", 0.1), "invalid_argument")
	})
}

func ids(out map[string]any) []string {
	var ids []string
	for _, e := range out["events"].([]any) {
		ids = append(ids, e.(map[string]any)["id"].(string))
	}
	return ids
}

func TestListEventsFiltersAndCompleteness(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	all := h.mustOK(t, "frigate_list_events", window())
	comp := all["completeness"].(map[string]any)
	if comp["complete"] != true || comp["status"] != "complete" || len(ids(all)) != len(demoEvents()) {
		t.Fatalf("full window: %v", all)
	}
	if e := all["events"].([]any)[0].(map[string]any); e["startTime"].(float64) < all["events"].([]any)[1].(map[string]any)["startTime"].(float64) {
		t.Error("default order is not newest first")
	}
	tests := []struct {
		name string
		args map[string]any
		keep func(fakefrigate.Event) bool
	}{
		{"camera", with(window(), "cameras", []any{"driveway"}), func(e fakefrigate.Event) bool { return e.Camera == "driveway" }},
		{"label", with(window(), "labels", []any{"person"}), func(e fakefrigate.Event) bool { return e.Label == "person" }},
		{"zone", with(window(), "zones", []any{"porch"}), func(e fakefrigate.Event) bool { return strings.Contains(strings.Join(e.Zones, ","), "porch") }},
		{"sub label", with(window(), "subLabels", []any{"Alice"}), func(e fakefrigate.Event) bool { return e.SubLabel == "Alice" }},
		{"no snapshot", with(window(), "hasSnapshot", false), func(e fakefrigate.Event) bool { return !e.HasSnapshot }},
		{"in progress", with(window(), "inProgress", true), func(e fakefrigate.Event) bool { return e.End == 0 }},
		{"min score", with(window(), "minScore", 0.85), func(e fakefrigate.Event) bool { return e.Score >= 0.85 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := h.mustOK(t, "frigate_list_events", tc.args)
			want := 0
			for _, e := range demoEvents() {
				if tc.keep(e) {
					want++
				}
			}
			if got := len(ids(out)); got != want || want == 0 {
				t.Fatalf("got %d events, want %d (%v)", got, want, out)
			}
		})
	}
	t.Run("score order", func(t *testing.T) {
		out := h.mustOK(t, "frigate_list_events", with(window(), "sort", "score_desc", "limit", 3))
		evs := out["events"].([]any)
		for i := 1; i < len(evs); i++ {
			if evs[i-1].(map[string]any)["score"].(float64) < evs[i].(map[string]any)["score"].(float64) {
				t.Fatal("not ordered by score")
			}
		}
		page := out["page"].(map[string]any)
		if out["completeness"].(map[string]any)["complete"] != false || page["nextBefore"] != nil {
			t.Errorf("truncated score page: %v", out)
		}
	})
}

// Paging with before (Frigate has no offset): following nextBefore /
// nextAfter visits every event once, even when events share the start
// time at a page boundary.
func TestPagingVisitsEveryEventOnce(t *testing.T) {
	// tieAt picks the demo event whose start time three more events
	// share, so that the group straddles the first page boundary.
	for order, tieAt := range map[string]int{"date_desc": 3, "date_asc": 9} {
		t.Run(order, func(t *testing.T) {
			events := demoEvents()
			tie := events[tieAt].Start
			for i := 0; i < 3; i++ {
				events = append(events, fakefrigate.Event{ID: fmt.Sprintf("%.6f-tie%d", tie, i), Camera: "front_door", Label: "person", Start: tie, End: tie + 5, Score: 0.5})
			}
			h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) { o.Events = events }})
			args := with(window(), "limit", 4, "sort", order)
			seen := map[string]int{}
			for page := 0; ; page++ {
				if page > 20 {
					t.Fatal("paging does not end")
				}
				out := h.mustOK(t, "frigate_list_events", args)
				for _, id := range ids(out) {
					seen[id]++
				}
				comp := out["completeness"].(map[string]any)
				if comp["complete"] == true {
					break
				}
				if comp["status"] != "truncated" || comp["warning"] == "" {
					t.Fatalf("incomplete page not reported as truncated: %v", comp)
				}
				p := out["page"].(map[string]any)
				if order == "date_desc" {
					args = with(args, "before", p["nextBefore"])
				} else {
					args = with(args, "after", p["nextAfter"])
				}
			}
			if len(seen) != len(events) {
				t.Errorf("visited %d of %d events", len(seen), len(events))
			}
			for id, n := range seen {
				if n != 1 {
					t.Errorf("event %s seen %d times", id, n)
				}
			}
		})
	}
}

func TestDuplicatesRemoved(t *testing.T) {
	dup := func(_ *harness, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/events" {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var evs []json.RawMessage
			_ = json.Unmarshal(rec.Body.Bytes(), &evs)
			evs = append(evs, evs[0], evs[1])
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(evs)
		})
	}
	h := newHarness(t, harnessOpts{front: dup})
	out := h.mustOK(t, "frigate_list_events", window())
	if got := len(ids(out)); got != len(demoEvents()) {
		t.Errorf("got %d events, want %d", got, len(demoEvents()))
	}
	if n := out["page"].(map[string]any)["duplicatesRemoved"]; n != float64(2) {
		t.Errorf("duplicatesRemoved = %v", n)
	}
}

func TestGetEvent(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	e := demoEvents()[3]
	out := h.mustOK(t, "frigate_get_event", map[string]any{"eventId": e.ID})
	ev := out["event"].(map[string]any)
	if ev["id"] != e.ID || ev["camera"] != e.Camera || ev["subLabel"] != "Alice" || ev["hasSnapshot"] != true {
		t.Errorf("event = %v", ev)
	}
	if _, ok := ev["description"]; ok {
		t.Error("generated description returned")
	}
	h.mustFail(t, "frigate_get_event", map[string]any{"eventId": "1750000000.000000-nosuch"}, "not_found")
	for _, bad := range []string{"..", "a/../b", "x?y", "a b"} {
		before := h.hits.Load()
		h.mustFail(t, "frigate_get_event", map[string]any{"eventId": bad}, "invalid_argument")
		if h.hits.Load() != before {
			t.Errorf("invalid id %q reached Frigate", bad)
		}
	}
}

func TestSearchEvents(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	caps := h.mustOK(t, "frigate_get_capabilities", nil)
	if got := caps["capabilities"].(map[string]any)["semanticSearch"]; got != "unknown" {
		t.Errorf("semantic search before any search = %v", got)
	}
	if n := len(h.requests("/events/search")); n != 0 {
		t.Errorf("capabilities ran %d searches", n)
	}

	out := h.mustOK(t, "frigate_search_events", with(window(), "query", "brown uniform parcel", "searchType", "description"))
	if out["semanticSearch"] != "supported" || len(ids(out)) == 0 {
		t.Fatalf("search: %v", out)
	}
	first := out["events"].([]any)[0].(map[string]any)
	if first["searchSource"] != "description" || first["searchDistance"] == nil {
		t.Errorf("first hit = %v", first)
	}
	if out["completeness"].(map[string]any)["complete"] != false {
		t.Error("search claims to be complete")
	}
	reqs := h.requests("/events/search?")
	if !strings.Contains(reqs[0], "search_type=description") || !strings.Contains(reqs[0], "include_thumbnails=0") {
		t.Errorf("search request = %s", reqs[0])
	}
	h.mustOK(t, "frigate_search_events", with(window(), "query", "person", "searchType", "both"))
	if !strings.Contains(h.requests("/events/search?")[1], "search_type=thumbnail%2Cdescription") {
		t.Error("both is not sent as thumbnail,description")
	}
	caps = h.mustOK(t, "frigate_get_capabilities", nil)
	if got := caps["capabilities"].(map[string]any)["semanticSearch"]; got != "supported" {
		t.Errorf("semantic search after a search = %v", got)
	}

	h.fake.SetSemanticSearch(false)
	out = h.mustOK(t, "frigate_search_events", with(window(), "query", "person"))
	if out["semanticSearch"] != "disabled" || out["events"] != nil {
		t.Errorf("disabled search: %v", out)
	}
	caps = h.mustOK(t, "frigate_get_capabilities", nil)
	if got := caps["capabilities"].(map[string]any)["semanticSearch"]; got != "disabled" {
		t.Errorf("semantic search after a disabled answer = %v", got)
	}
	h.mustFail(t, "frigate_search_events", with(window(), "query", "x", "searchType", "similarity"), "invalid_argument")
	h.mustFail(t, "frigate_search_events", with(window(), "query", "   "), "invalid_argument")
	assertNoSecrets(t, h)
}

func TestSearchUnsupported(t *testing.T) {
	gone := func(_ *harness, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/events/search" {
				http.Error(w, "<html>"+errorBody, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	h := newHarness(t, harnessOpts{front: gone})
	out := h.mustOK(t, "frigate_search_events", with(window(), "query", "person"))
	if out["semanticSearch"] != "unsupported" {
		t.Errorf("search on a release without it: %v", out)
	}
	assertNoSecrets(t, h)
}

// Frigate's min_score, max_score and score orderings use data.score (the
// snapshot frame's score), not data.top_score (frigate/api/event.py). The
// service used to show top_score as score, so an event could pass
// minScore with a lower shown score, and score_desc looked unsorted.
func TestScoreIsTheOneFrigateFiltersAndSortsBy(t *testing.T) {
	events := demoEvents()
	for i := range events {
		// top_score above 0.9 for all, data.score as the fixture has it.
		events[i].TopScore = 0.99 - float64(i)*0.001
	}
	h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) { o.Events = events }})
	out := h.mustOK(t, "frigate_list_events", with(window(), "minScore", 0.85, "sort", "score_asc"))
	evs := out["events"].([]any)
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	prev := 0.0
	for _, raw := range evs {
		e := raw.(map[string]any)
		score, _ := e["score"].(float64)
		if score < 0.85 || score < prev {
			t.Errorf("event shows score %v after %v with minScore 0.85 in score_asc order", score, prev)
		}
		prev = score
		if top, _ := e["topScore"].(float64); top < 0.9 {
			t.Errorf("topScore = %v", e["topScore"])
		}
	}
}

// Frigate's semantic search filters only the 100 nearest events of all
// time: the result says so, so an empty window is not read as "no such
// event".
func TestSearchSaysItFiltersTheNearestHundredOnly(t *testing.T) {
	out := newHarness(t, harnessOpts{}).mustOK(t, "frigate_search_events", with(window(), "query", "person"))
	comp := out["completeness"].(map[string]any)
	if comp["complete"] == true || !strings.Contains(comp["warning"].(string), "100 nearest") {
		t.Errorf("completeness = %v", comp)
	}
}

// Frigate's search joins each event with every review segment that lists
// it and cuts the joined rows at limit (events_search): a page whose rows
// are full is full, although duplicates leave fewer events, and says so.
func TestSearchPageOfRepeatedRowsIsTruncated(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) {
		for i := range o.Events {
			o.Events[i].Reviews = 2
		}
	}})
	out := h.mustOK(t, "frigate_search_events", with(window(), "query", "person", "limit", 4))
	page := out["page"].(map[string]any)
	if got := len(ids(out)); got != 2 || page["duplicatesRemoved"] != float64(2) {
		t.Fatalf("events %d, page %v", got, page)
	}
	if c := out["completeness"].(map[string]any); c["status"] != "truncated" {
		t.Errorf("a full page of rows reads as %v", c)
	}
}
