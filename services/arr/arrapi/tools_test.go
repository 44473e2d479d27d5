package arrapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestHumanSize(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"},
		{10 << 30, "10.0 GiB"}, {2 << 40, "2.0 TiB"}, {3 << 50, "3.0 PiB"}, {5 << 60, "5120.0 PiB"},
	}
	for _, tc := range cases {
		if got := HumanSize(tc.n); got != tc.want {
			t.Errorf("HumanSize(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestClip(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"}, // é is two bytes: never cut inside a rune
	}
	for _, tc := range cases {
		if got := Clip(tc.s, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

func TestSafeDetails(t *testing.T) {
	data := map[string]string{
		"indexer": "NZBgeek", "message": "a long message", "empty": "",
		"downloadUrl": "http://prowlarr:9696/1/download?apikey=SECRET",
		"reason":      "https://tracker.example/dl?passkey=SECRET",
	}
	keys := []string{"indexer", "message", "empty", "reason", "absent"}
	cases := []struct {
		name string
		keys []string
		clip int
		want map[string]string
	}{
		{"unclipped", keys, 0, map[string]string{"indexer": "NZBgeek", "message": "a long message"}},
		{"clipped", keys, 6, map[string]string{"indexer": "NZBgee…", "message": "a long…"}},
		{"nothing left", []string{"empty", "downloadUrl"}, 0, nil},
	}
	for _, tc := range cases {
		if got := SafeDetails(data, tc.keys, tc.clip); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSortedUnique(t *testing.T) {
	cases := []struct {
		in     []int
		want   []int
		unique bool
	}{
		{[]int{3, 1, 2}, []int{1, 2, 3}, true},
		{[]int{2, 1, 2}, []int{1, 2, 2}, false},
		{nil, []int{}, true},
	}
	for _, tc := range cases {
		in := append([]int(nil), tc.in...)
		got, unique := SortedUnique(tc.in)
		if unique != tc.unique || len(got) != len(tc.want) || (len(got) > 0 && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("SortedUnique(%v) = %v, %v; want %v, %v", tc.in, got, unique, tc.want, tc.unique)
		}
		if !reflect.DeepEqual(in, tc.in) {
			t.Errorf("SortedUnique changed its argument: %v", tc.in)
		}
	}
}

func TestLanguageNames(t *testing.T) {
	if got := LanguageNames(nil); got != nil {
		t.Errorf("no languages: %v", got)
	}
	if got := LanguageNames([]Language{{1, "English"}, {2, "German"}}); !reflect.DeepEqual(got, []string{"English", "German"}) {
		t.Errorf("names: %v", got)
	}
}

// Grab posts exactly the guid and the indexer id to /release, and leaves
// the status of a refusal visible to the caller's own message.
func TestGrab(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(b))
		var body struct {
			GUID string `json:"guid"`
		}
		_ = json.Unmarshal(b, &body)
		if body.GUID == "gone" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{App: "radarr", URL: srv.URL, APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Grab(context.Background(), "abc", 3); err != nil {
		t.Fatal(err)
	}
	if err := c.Grab(context.Background(), "gone", 3); Status(err) != http.StatusNotFound {
		t.Fatalf("refusal: %v (status %d)", err, Status(err))
	}
	want := []string{`POST /api/v3/release {"guid":"abc","indexerId":3}`, `POST /api/v3/release {"guid":"gone","indexerId":3}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
}
