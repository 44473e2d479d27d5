package fakeersatztv

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func v1Call(t *testing.T, h http.Handler, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, "http://ersatztv.lan:8409"+path, strings.NewReader(body))
	req.Header.Set("X-Api-Key", DemoAPIKey)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// The seed's /api/v1 contract, one behaviour per case: the key on every
// request, 0-based pages clamped per endpoint with the offset from the
// effective size, ETag and If-Match on the aggregate replace, 422 for an
// unknown id in a batch, 204 for an idempotent add, and the full replaces
// that write an omitted field as empty.
func TestV1FakeKeepsTheSeedsContract(t *testing.T) {
	cases := []struct {
		name   string
		method string
		path   string
		body   string
		hdr    map[string]string
		status int
		check  func(t *testing.T, s *Store, rec *httptest.ResponseRecorder)
	}{
		{name: "reads need the key", method: "GET", path: "/api/v1/version", hdr: map[string]string{"X-Api-Key": ""}, status: 401},
		{name: "a wrong key is refused", method: "GET", path: "/api/v1/channels", hdr: map[string]string{"X-Api-Key": "guess"}, status: 401},
		{name: "writes need the key", method: "DELETE", path: "/api/v1/channels/1", hdr: map[string]string{"X-Api-Key": ""}, status: 401,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				if s.Channel(1) == nil {
					t.Error("deleted without a key")
				}
			}},
		{name: "pages are 0-based", method: "GET", path: "/api/v1/search/all-items?query=*&pageNum=0&pageSize=2", status: 200,
			check: func(t *testing.T, _ *Store, rec *httptest.ResponseRecorder) {
				var out map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &out)
				if ids := out["movieIds"].([]any); len(ids) != 2 || ids[0].(float64) != 101 {
					t.Errorf("page 0: %v", out)
				}
			}},
		{name: "pageSize is clamped to the endpoint's cap and the offset follows", method: "GET", path: "/api/v1/search?query=*&pageNum=1&pageSize=500", status: 200,
			check: func(t *testing.T, s *Store, rec *httptest.ResponseRecorder) {
				var out struct {
					TotalCount int              `json:"totalCount"`
					Page       []map[string]any `json:"page"`
				}
				_ = json.Unmarshal(rec.Body.Bytes(), &out)
				// 26 demo items, cap 100: page 1 starts at item 101 and is empty.
				if out.TotalCount != len(s.Items) || len(out.Page) != 0 {
					t.Errorf("page 1 of 100-wide pages: %+v", out)
				}
			}},
		{name: "search_all_items honours a size under its own cap", method: "GET", path: "/api/v1/search/all-items?query=*&pageSize=900", status: 200,
			check: func(t *testing.T, s *Store, rec *httptest.ResponseRecorder) {
				var out map[string]any
				_ = json.Unmarshal(rec.Body.Bytes(), &out)
				n := 0
				for _, k := range Kinds {
					n += len(out[k.Bucket].([]any))
				}
				if n != len(s.Items) {
					t.Errorf("got %d ids of %d", n, len(s.Items))
				}
			}},
		{name: "a negative page is refused", method: "GET", path: "/api/v1/collections?pageNum=-1", status: 400},
		{name: "collection items carry an ETag", method: "GET", path: "/api/v1/collections/11/items", status: 200,
			check: func(t *testing.T, _ *Store, rec *httptest.ResponseRecorder) {
				if rec.Header().Get("ETag") != `"4"` {
					t.Errorf("ETag %q", rec.Header().Get("ETag"))
				}
			}},
		{name: "a stale If-Match is 412 and writes nothing", method: "PUT", path: "/api/v1/collections/11/custom-order",
			body: `{"mediaItemCustomOrders":[{"mediaItemId":119,"customIndex":0}]}`, hdr: map[string]string{"If-Match": `"3"`}, status: 412,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				if c := s.Collection(11); c.Version != 4 || *c.Members[0].CustomIndex != 0 || c.Members[1].CustomIndex == nil {
					t.Errorf("collection changed: %+v", c)
				}
			}},
		{name: "a weak tag never matches If-Match", method: "PUT", path: "/api/v1/collections/11/custom-order",
			body: `{"mediaItemCustomOrders":[]}`, hdr: map[string]string{"If-Match": `W/"4"`}, status: 412},
		{name: "a malformed If-Match is 400", method: "PUT", path: "/api/v1/collections/11/custom-order",
			body: `{"mediaItemCustomOrders":[]}`, hdr: map[string]string{"If-Match": `4`}, status: 400},
		{name: "a current If-Match replaces the whole order", method: "PUT", path: "/api/v1/collections/11/custom-order",
			body: `{"mediaItemCustomOrders":[{"mediaItemId":120,"customIndex":0}]}`, hdr: map[string]string{"If-Match": `"4"`}, status: 204,
			check: func(t *testing.T, s *Store, rec *httptest.ResponseRecorder) {
				c := s.Collection(11)
				set := 0
				for _, m := range c.Members {
					if m.CustomIndex != nil {
						set++
					}
				}
				if rec.Header().Get("ETag") != `"5"` || set != 1 {
					t.Errorf("ETag %q, %d indexes left", rec.Header().Get("ETag"), set)
				}
			}},
		{name: "no If-Match force-writes", method: "PUT", path: "/api/v1/collections/11/custom-order",
			body: `{"mediaItemCustomOrders":[]}`, status: 204},
		{name: "an unknown id rejects the whole batch", method: "POST", path: "/api/v1/collections/12/items", body: `{"movieIds":[101,9999]}`, status: 422,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				if len(s.Collection(12).Members) != 0 {
					t.Error("part of a rejected batch was added")
				}
			}},
		{name: "an id of another kind is unknown", method: "POST", path: "/api/v1/collections/12/items", body: `{"artistIds":[101]}`, status: 422},
		{name: "re-adding is an idempotent 204", method: "POST", path: "/api/v1/collections/10/items", body: `{"movieIds":[101,102]}`, status: 204,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				if c := s.Collection(10); len(c.Members) != 3 || c.Version != 1 {
					t.Errorf("members %d, version %d", len(c.Members), c.Version)
				}
			}},
		{name: "the channel PUT wipes what it is not sent", method: "PUT", path: "/api/v1/channels/1",
			body: `{"name":"Classic Movies","number":"1","ffmpegProfileId":1}`, status: 200,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				c := s.Channel(1)
				if len(c.GraphicsElementIDs) != 0 || c.Logo != nil || c.WatermarkID != nil || c.StreamingMode != "TransportStream" || c.IsEnabled {
					t.Errorf("omitted fields kept: %+v", c)
				}
			}},
		{name: "the schedule PUT clears padToNearestMinute", method: "PUT", path: "/api/v1/schedules/30", body: `{"name":"Movie Nights"}`, status: 200,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				if sc := s.Schedule(30); sc.PadToNearestMinute != nil || sc.RandomStartPoint || sc.FixedStartTimeBehavior != "Strict" {
					t.Errorf("schedule %+v", sc)
				}
			}},
		{name: "the playout PUT keeps scheduleFile but clears dailyRebuildTime", method: "PUT", path: "/api/v1/playouts/1", body: `{}`, status: 200,
			check: func(t *testing.T, s *Store, _ *httptest.ResponseRecorder) {
				if p := s.Playout(1); p.DailyRebuildTime != nil {
					t.Errorf("dailyRebuildTime kept: %v", *p.DailyRebuildTime)
				}
			}},
		{name: "playout rows name the channel to act on", method: "GET", path: "/api/v1/playouts", status: 200,
			check: func(t *testing.T, _ *Store, rec *httptest.ResponseRecorder) {
				if !strings.Contains(rec.Body.String(), `"channelId":3`) || !strings.Contains(rec.Body.String(), `"id":1,`) {
					t.Errorf("rows: %s", rec.Body)
				}
			}},
		{name: "an unknown enum name is refused", method: "POST", path: "/api/v1/channels",
			body: `{"name":"x","number":"9","ffmpegProfileId":1,"streamingMode":"Fast"}`, status: 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := NewDemoStore(time.Unix(1_750_000_000, 0))
			fake := NewV1(store, DemoAPIKey)
			rec := v1Call(t, fake, c.method, c.path, c.body, c.hdr)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if c.check != nil {
				c.check(t, store, rec)
			}
		})
	}
}

func TestQueryLanguage(t *testing.T) {
	store := NewDemoStore(time.Unix(1_750_000_000, 0))
	cases := []struct {
		q    string
		want int
		err  bool
	}{
		{"*", len(store.Items), false},
		{"type:movie", 6, false},
		{"type:movie AND id:(101 OR 102 OR 777)", 2, false},
		{"type:artist OR type:song", 5, false},
		{"title:\"take on\"", 1, false},
		{"ghost", 1, false},
		{"(type:movie AND release_date:[19800101 TO 19851231]) OR type:show", 4, false},
		{"id:(1 OR", 0, true},
		{"AND", 0, true},
	}
	for _, c := range cases {
		m, err := parseQuery(c.q)
		if (err != nil) != c.err {
			t.Fatalf("%q: error %v", c.q, err)
		}
		if err != nil {
			continue
		}
		n := 0
		for _, it := range store.Items {
			if m(it) {
				n++
			}
		}
		if n != c.want {
			t.Errorf("%q matched %d, want %d", c.q, n, c.want)
		}
	}
}
