package arrapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// A size is its bytes and the same in binary units; what a series or movie
// holds on disk is left out when it holds nothing.
func TestSizesAreBytesAndBinaryUnits(t *testing.T) {
	if got := SizeOf(1536 << 20); got != (Sized{SizeBytes: 1536 << 20, Size: "1.5 GiB"}) {
		t.Errorf("SizeOf: %+v", got)
	}
	if got := SizeOf(0); got != (Sized{Size: "0 B"}) {
		t.Errorf("SizeOf(0): %+v", got)
	}
	b, _ := json.Marshal(struct{ OnDisk }{OnDiskOf(0)})
	if string(b) != "{}" {
		t.Errorf("nothing on disk shows %s", b)
	}
	if got := OnDiskOf(10_930_000_000); got != (OnDisk{SizeOnDiskBytes: 10_930_000_000, SizeOnDisk: "10.2 GiB"}) {
		t.Errorf("OnDiskOf: %+v", got)
	}
	q := QueueRecord{Size: 1_900_000_000, Sizeleft: 640_000_000}.View()
	if q.SizeBytes != 1_900_000_000 || q.Size != "1.8 GiB" || q.ProgressPercent != 66.3 {
		t.Errorf("queue view %+v", q)
	}
}

// A library list filters, sorts by title without regard to case, pages
// from offset and counts the library, the matches and what it returns.
func TestLibraryList(t *testing.T) {
	all := []string{"dune", "Arrival", "blade runner", "Dune: Part Two", "Alien"}
	title := func(s string) string { return s }
	upper := strings.ToUpper
	cases := []struct {
		name          string
		match         func(string) bool
		offset, limit int
		want          []string
		matched       int
	}{
		{"all", nil, 0, 10, []string{"ALIEN", "ARRIVAL", "BLADE RUNNER", "DUNE", "DUNE: PART TWO"}, 5},
		{"matching", func(s string) bool { return strings.Contains(strings.ToLower(s), "dune") }, 0, 10, []string{"DUNE", "DUNE: PART TWO"}, 2},
		{"limit", nil, 0, 2, []string{"ALIEN", "ARRIVAL"}, 5},
		{"offset", nil, 3, 10, []string{"DUNE", "DUNE: PART TWO"}, 5},
		{"past the end", nil, 9, 10, []string{}, 5},
	}
	for _, c := range cases {
		got := LibraryList(all, title, c.match, c.offset, c.limit, "items", upper)
		if !reflect.DeepEqual(got["items"], c.want) || got["library_size"] != 5 || got["matched"] != c.matched || got["returned"] != len(c.want) {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// The calendar range: defaults from today in UTC, both days whole, and
// every refusal named.
func TestCalendarWindow(t *testing.T) {
	now := time.Date(2025, 6, 15, 23, 30, 0, 0, time.FixedZone("CEST", 2*3600)) // 21:30 UTC
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	cases := []struct {
		name, start, end string
		want             Days
		err              string
	}{
		{"defaults", "", "", Days{day("2025-06-15"), day("2025-06-22")}, ""},
		{"start only", "2025-07-01", "", Days{day("2025-07-01"), day("2025-07-08")}, ""},
		{"one day", "2025-07-01", "2025-07-01", Days{day("2025-07-01"), day("2025-07-01")}, ""},
		{"longest", "2025-01-01", "2025-03-04", Days{day("2025-01-01"), day("2025-03-04")}, ""},
		{"too long", "2025-01-01", "2025-03-05", Days{}, "more than 62 days apart"},
		{"reversed", "2025-06-10", "2025-06-01", Days{}, "end (2025-06-01) is before start (2025-06-10)"},
		{"bad start", "15.06.2025", "", Days{}, `date "15.06.2025" is not a valid YYYY-MM-DD date`},
		{"bad end", "", "2025-02-30", Days{}, `date "2025-02-30"`},
	}
	for _, c := range cases {
		got, err := Window(now, c.start, c.end, 7, 62)
		switch {
		case c.err != "" && (toolerr.CodeOf(err) != toolerr.InvalidArgument || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
	d := Days{day("2025-07-01"), day("2025-07-01")}
	if got := d.Until(); !got.Equal(time.Date(2025, 7, 1, 23, 59, 59, 0, time.UTC)) {
		t.Errorf("until %v", got)
	}
	if got := CalendarResult(d, "movies", []int{1, 2}); got["start"] != "2025-07-01" || got["end"] != "2025-07-01" || got["count"] != 2 {
		t.Errorf("result %v", got)
	}
}

// A paged read shows each record and says when the application answered
// another page than the one asked for.
func TestPaged(t *testing.T) {
	fetch := func(page, size int) (Page[int], error) {
		if page > 2 {
			page = 2 // what Sonarr and Radarr do past the end of the queue
		}
		return Page[int]{Page: page, PageSize: size, TotalRecords: 30, Records: []int{page * 10, page*10 + 1}}, nil
	}
	got, err := Paged(Paging{Page: 2, PageSize: 15}, "items", fetch, func(n int) int { return -n })
	m := got.(map[string]any)
	if err != nil || !reflect.DeepEqual(m["items"], []int{-20, -21}) || m["page"] != 2 || m["page_size"] != 15 || m["total_records"] != 30 || m["note"] != nil {
		t.Errorf("page 2: %v %v", got, err)
	}
	got, _ = Paged(Paging{Page: 5, PageSize: 15}, "items", fetch, func(n int) int { return n })
	if note, _ := got.(map[string]any)["note"].(string); !strings.Contains(note, "page 5 is past the end") {
		t.Errorf("page 5: %v", got)
	}
	if _, err := Paged(Paging{}, "items", func(int, int) (Page[int], error) { return Page[int]{}, toolerr.New(toolerr.Timeout, "slow") }, func(n int) int { return n }); toolerr.CodeOf(err) != toolerr.Timeout {
		t.Errorf("error lost: %v", err)
	}
}

// A history record's details carry the agreed names: snake_case, a size
// as Sized, a score as a number; links and unknown members stay out.
func TestHistoryDetails(t *testing.T) {
	r := HistoryRecord{ID: 3, EventType: "grabbed", Data: map[string]string{
		"indexer": "NZBgeek", "releaseGroup": "NTb", "downloadClientName": "SABnzbd", "size": "1900000000",
		"customFormatScore": "25", "downloadUrl": "http://prowlarr:9696/1/download?apikey=k", "guid": "x", "message": "",
	}}
	want := map[string]any{"indexer": "NZBgeek", "release_group": "NTb", "download_client_name": "SABnzbd",
		"size": "1.8 GiB", "size_bytes": int64(1_900_000_000), "custom_format_score": int64(25)}
	if got := r.View().Details; !reflect.DeepEqual(got, want) {
		t.Errorf("details %v, want %v", got, want)
	}
	if got := (HistoryRecord{Data: map[string]string{"size": "n/a"}}).View().Details; got["size"] != "n/a" || got["size_bytes"] != nil {
		t.Errorf("a size that is no number: %v", got)
	}
	if got := (HistoryRecord{Data: map[string]string{"downloadUrl": "x"}}).View().Details; got != nil {
		t.Errorf("nothing to show: %v", got)
	}
}

// An unknown id is not_found saying where ids come from; a bad id never
// reaches the application.
func TestGetByID(t *testing.T) {
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path == "/api/v3/series/1" {
			_, _ = w.Write([]byte(`{"id":1,"title":"The Expanse"}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := New(Config{App: "sonarr", URL: srv.URL, APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Title string `json:"title"`
	}
	if err := c.GetByID(context.Background(), "series", 1, &s, "find ids with sonarr_series_list"); err != nil || s.Title != "The Expanse" {
		t.Fatalf("%+v %v", s, err)
	}
	err = c.GetByID(context.Background(), "series", 9, &s, "find ids with sonarr_series_list")
	if toolerr.CodeOf(err) != toolerr.NotFound || !strings.Contains(err.Error(), "Sonarr has no series with id 9; find ids with sonarr_series_list") {
		t.Errorf("unknown id: %v", err)
	}
	if err := c.GetByID(context.Background(), "series", 0, &s, ""); toolerr.CodeOf(err) != toolerr.InvalidArgument || len(asked) != 2 {
		t.Errorf("id 0: %v, asked %v", err, asked)
	}
}
