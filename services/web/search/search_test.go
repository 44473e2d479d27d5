package search_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/web/fakesearx"
	"github.com/toolgate/toolgate/services/web/search"
)

func client(t *testing.T, h http.Handler) *search.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := search.New(search.Config{BaseURL: srv.URL, AllowHTTP: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recorder keeps the queries the fake received.
type recorder struct {
	mu   sync.Mutex
	seen []url.Values
	next http.Handler
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.seen = append(r.seen, req.URL.Query())
	r.mu.Unlock()
	r.next.ServeHTTP(w, req)
}

func TestSearchCompactDedupedBounded(t *testing.T) {
	rec := &recorder{next: fakesearx.New(fakesearx.Options{
		PageBase: "https://nimbus.example", Unresponsive: [][2]string{{"brave", "too many requests"}, {"qwant", "CAPTCHA"}},
	})}
	c := client(t, rec)
	safe := 1
	res, err := c.Search(t.Context(), search.Query{Q: "nimbus 3.2 release", Categories: []string{"general", "news"},
		Language: "de", TimeRange: "month", Page: 1, SafeSearch: &safe, Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	q := rec.seen[0]
	for k, v := range map[string]string{"q": "nimbus 3.2 release", "format": "json", "categories": "general,news", "language": "de", "time_range": "month", "safesearch": "1"} {
		if q.Get(k) != v {
			t.Errorf("param %s = %q, want %q", k, q.Get(k), v)
		}
	}
	if q.Has("pageno") {
		t.Error("pageno sent for page 1")
	}
	seen := map[string]bool{}
	for _, r := range res.Results {
		key, _ := search.Canonical(r.URL)
		if seen[key] {
			t.Errorf("duplicate %s", r.URL)
		}
		seen[key] = true
		if r.Title == "" || r.URL == "" || len(r.Engines) == 0 {
			t.Errorf("incomplete result %+v", r)
		}
	}
	first := res.Results[0]
	if first.URL != "https://nimbus.example/pages/nimbus-3-2-released" || first.Published != "2025-05-14" ||
		strings.Join(first.Engines, ",") != "bing,duckduckgo,google" {
		t.Errorf("first result (with the duplicate's engine merged): %+v", first)
	}
	if len(res.Unresponsive) != 2 || res.Unresponsive[1] != (search.Unresponsive{Engine: "qwant", Reason: "CAPTCHA"}) {
		t.Errorf("unresponsive: %+v", res.Unresponsive)
	}
	// The limit holds and says more exist.
	res, err = c.Search(t.Context(), search.Query{Q: "nimbus 3.2", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || !res.MoreAvailable {
		t.Errorf("limit: %d results, more=%v", len(res.Results), res.MoreAvailable)
	}
	_, _ = c.Search(t.Context(), search.Query{Q: "nimbus 3.2", Page: 2})
	if rec.seen[2].Get("pageno") != "2" {
		t.Errorf("pageno: %v", rec.seen[1])
	}
}

func TestSnippetsAreShort(t *testing.T) {
	long := strings.Repeat("word ", 200)
	c := client(t, fakesearx.New(fakesearx.Options{Docs: []fakesearx.Doc{{URL: "https://a.example/x", Title: "Match " + long, Snippet: "match\n\n  " + long}}}))
	res, err := c.Search(t.Context(), search.Query{Q: "match"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Results[0]
	if n := len([]rune(r.Snippet)); n > search.DefaultSnippetChars+1 || strings.Contains(r.Snippet, "\n") || !strings.HasSuffix(r.Snippet, "…") {
		t.Errorf("snippet (%d): %q", n, r.Snippet)
	}
	if n := len([]rune(r.Title)); n > 201 {
		t.Errorf("title %d chars", n)
	}
}

func TestCanonical(t *testing.T) {
	same := []string{
		"https://www.Example.com/a/b/?utm_source=x&id=1#frag",
		"http://example.com:80/a/b?id=1&fbclid=abc",
		"https://example.com:443/a/b?id=1",
	}
	want, _ := search.Canonical(same[0])
	for _, s := range same[1:] {
		if got, _ := search.Canonical(s); got != want {
			t.Errorf("%s → %s, want %s", s, got, want)
		}
	}
	if a, _ := search.Canonical("https://example.com/a?id=2"); a == want {
		t.Error("different query merged")
	}
	for _, bad := range []string{"javascript:alert(1)", "ftp://x/", "/relative", ""} {
		if _, ok := search.Canonical(bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestFailureModes: each known SearXNG failure gives an actionable message
// and never the upstream's body (an HTML page gives no reason).
func TestFailureModes(t *testing.T) {
	body := func(status int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(status)
			fmt.Fprint(w, "<!doctype html><title>Error</title>SEARX-BODY-LEAK Traceback at 10.20.30.40")
		})
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
		code toolerr.Code
		msg  string
	}{
		{"json not enabled", fakesearx.New(fakesearx.Options{Formats: []string{"html"}}), toolerr.Forbidden, "search.formats"},
		{"limiter", fakesearx.New(fakesearx.Options{Limited: true}), toolerr.Busy, "limiter"},
		{"no results", fakesearx.New(fakesearx.Options{Unresponsive: [][2]string{{"google", "timeout"}}}), toolerr.NotFound, "google (timeout)"},
		{"server error", body(500), toolerr.UpstreamUnavailable, "HTTP 500"},
		{"bad request", body(400), toolerr.InvalidArgument, "HTTP 400"},
		{"proxy auth", body(401), toolerr.AuthFailed, "401"},
		{"not json", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html>SEARX-BODY-LEAK</html>") }), toolerr.UpstreamUnavailable, "JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := client(t, tc.h).Search(t.Context(), search.Query{Q: "zzz-nothing-matches"})
			if toolerr.CodeOf(err) != tc.code || !strings.Contains(toolerr.MessageOf(err), tc.msg) {
				t.Fatalf("%v", err)
			}
			for _, leak := range []string{"SEARX-BODY-LEAK", "10.20.30.40", "Traceback"} {
				if strings.Contains(toolerr.MessageOf(err), leak) {
					t.Fatalf("message leaks %q", leak)
				}
			}
		})
	}
	if _, err := client(t, fakesearx.NewDemo()).Search(t.Context(), search.Query{Q: "  "}); toolerr.CodeOf(err) != toolerr.InvalidArgument {
		t.Fatalf("empty query: %v", err)
	}
	if !strings.Contains(toolerr.MessageOf(func() error {
		_, err := client(t, fakesearx.New(fakesearx.Options{})).Search(t.Context(), search.Query{Q: "zzz"})
		return err
	}()), "Do not repeat") {
		t.Fatal("no-results message does not steer away from synonym searches")
	}
}

func TestReady(t *testing.T) {
	if err := client(t, fakesearx.NewDemo()).Ready(t.Context()); err != nil {
		t.Fatalf("ready: %v", err)
	}
	err := client(t, fakesearx.New(fakesearx.Options{Formats: []string{"html"}})).Ready(t.Context())
	if toolerr.CodeOf(err) != toolerr.Forbidden || !strings.Contains(toolerr.MessageOf(err), "settings.yml") {
		t.Fatalf("json disabled: %v", err)
	}
}

// TestAnswers accepts both shapes SearXNG has used for answers.
func TestAnswers(t *testing.T) {
	c := client(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":"q","number_of_results":0,"results":[],"answers":["42",{"answer":"forty-two","url":null}],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[["x"]]}`)
	}))
	res, err := c.Search(t.Context(), search.Query{Q: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Answers, "|") != "42|forty-two" || len(res.Unresponsive) != 1 || res.Unresponsive[0].Reason != "no answer" {
		t.Fatalf("%+v", res)
	}
}

// SearXNG answers a query with an external bang (!!g, !!w, …) with a
// redirect to that site, JSON format or not (searx/webapp.py search,
// searx/query.py ExternalBangParser). That used to come back as "SearXNG
// answered with a redirect; set the exact base URL", blaming the
// configuration; such a word is now refused before anything is sent.
func TestExternalBangsAreRefusedBeforeSearching(t *testing.T) {
	rec := &recorder{next: fakesearx.NewDemo()}
	c := client(t, rec)
	for _, q := range []string{"!!g nimbus release", "nimbus !!w"} {
		_, err := c.Search(t.Context(), search.Query{Q: q})
		if toolerr.CodeOf(err) != toolerr.InvalidArgument || !strings.Contains(toolerr.MessageOf(err), "external bang") {
			t.Errorf("%q: %v", q, err)
		}
	}
	if len(rec.seen) != 0 {
		t.Errorf("%d searches sent", len(rec.seen))
	}
	if _, err := c.Search(t.Context(), search.Query{Q: "nimbus 3.2 release !! wow"}); err != nil {
		t.Errorf("a bare !! is no bang: %v", err)
	}
}

// SearXNG does not ask an engine that cannot filter by time (or page) at
// all when the search has a time range (or a page above 1), and its answer
// does not say so (processors/abstract.py get_params): the empty result
// names that cause instead of telling the model nothing exists.
func TestEmptyTimeRangedSearchSaysEnginesWereLeftOut(t *testing.T) {
	docs := []fakesearx.Doc{{URL: "https://a.example/nimbus", Title: "Nimbus release notes", Snippet: "nimbus", Engines: []string{"wikipedia"}}}
	c := client(t, fakesearx.New(fakesearx.Options{Docs: docs, NoTimeRange: []string{"wikipedia"}, NoPaging: []string{"wikipedia"}}))
	if res, err := c.Search(t.Context(), search.Query{Q: "nimbus"}); err != nil || len(res.Results) != 1 {
		t.Fatalf("without a time range: %v %v", res, err)
	}
	for _, q := range []search.Query{{Q: "nimbus", TimeRange: "week"}, {Q: "nimbus", Page: 2}} {
		_, err := c.Search(t.Context(), q)
		if toolerr.CodeOf(err) != toolerr.NotFound || !strings.Contains(toolerr.MessageOf(err), "asks only the engines that support it") {
			t.Errorf("%+v: %v", q, err)
		}
	}
}
