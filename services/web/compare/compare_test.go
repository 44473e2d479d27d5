package compare_test

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/web/compare"
	"github.com/toolgate/toolgate/services/web/fakesearx"
	"github.com/toolgate/toolgate/services/web/fetch"
	"github.com/toolgate/toolgate/services/web/search"
	"github.com/toolgate/toolgate/services/web/ssrf"
	"github.com/toolgate/toolgate/services/web/ssrf/ssrftest"
)

func TestTermsAndScore(t *testing.T) {
	terms := compare.Terms("When was the Nimbus 3.2 release? Wann wurde Nimbus veröffentlicht?")
	if strings.Join(terms, ",") != "nimbus,3,2,release,veröffentlicht" {
		t.Fatalf("terms: %v", terms)
	}
	a := compare.Score("Nimbus 3.2 release on 14 May", terms)
	b := compare.Score("Nimbus nimbus nimbus nimbus", terms)
	if a <= b || compare.Score("nothing relevant", terms) != 0 {
		t.Fatalf("scores %v %v", a, b)
	}
}

func TestBestPassages(t *testing.T) {
	text := "# Heading\n\nIntro paragraph that is long enough to count as a passage of text.\n\n" +
		"![image](x.png)\n\nshort\n\n" +
		"The release date of version 3.2 was the 14th of May, after a delay of two weeks.\n\n" +
		"Unrelated paragraph about gardening and the weather in spring, quite long too.\n\n" +
		strings.Repeat("A release sentence about the date. ", 40)
	got := compare.Best(text, compare.Terms("release date of 3.2"), 2, 200)
	if len(got) != 2 || !strings.Contains(got[0], "14th of May") {
		t.Fatalf("best: %q", got)
	}
	for _, p := range got {
		if len([]rune(p)) > 200 {
			t.Fatalf("passage over the cap: %d", len([]rune(p)))
		}
	}
	// Nothing matches: the opening passage stands in.
	if got := compare.Best(text, compare.Terms("zebra"), 2, 200); len(got) != 1 || !strings.HasPrefix(got[0], "Intro") {
		t.Fatalf("fallback: %q", got)
	}
}

// TestCompare runs the whole flow against the fake SearXNG: the top sources
// are read in parallel; the page with a PDF and the result that points at
// an internal address come back as per-source errors with the snippet.
func TestCompare(t *testing.T) {
	docs := append(fakesearx.DemoDocs()[:3], fakesearx.Doc{
		URL: "http://10.0.0.5/admin", Title: "Nimbus 3.2 release internal", Snippet: "internal admin page about nimbus 3.2 release",
		Keywords: "nimbus 3.2 release date",
	})
	srv := httptest.NewServer(fakesearx.New(fakesearx.Options{Docs: docs}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	sc, err := search.New(search.Config{BaseURL: srv.URL, AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	// Result links use the request's host: 127.0.0.1, a test-public address.
	g := ssrf.New(ssrf.Options{Resolver: ssrftest.New(), Ports: []uint16{80, 443, uint16(port)},
		TestPublic: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	f, err := fetch.New(fetch.Config{Guard: g, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := compare.New(compare.Config{Searcher: sc, Fetcher: f, Timeout: 5 * time.Second})
	res, err := c.Compare(t.Context(), compare.Request{Question: "When was Nimbus NAS OS 3.2 released?", Query: "nimbus 3.2 release date", Sources: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != 4 {
		t.Fatalf("sources: %d", len(res.Sources))
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	var read, refused int
	for _, s := range res.Sources {
		switch {
		case s.Error != nil:
			refused++
			if s.Error.Code != toolerr.Forbidden || s.Snippet == "" || strings.Contains(s.Error.Message, "10.0.0.5") {
				t.Errorf("refused source: %+v", s)
			}
		default:
			read++
			if !strings.HasPrefix(s.URL, base+"/pages/") || s.RetrievedAt == "" || s.Published == "" || len(s.Passages) == 0 || len(s.Passages) > 2 {
				t.Errorf("source: %+v", s)
			}
			joined := strings.Join(s.Passages, " ")
			if !strings.Contains(joined, "May") {
				t.Errorf("%s: passages miss the date: %q", s.URL, joined)
			}
		}
	}
	if read != 3 || refused != 1 {
		t.Fatalf("read %d, refused %d", read, refused)
	}
}

type slowFetcher struct{}

func (slowFetcher) Fetch(ctx context.Context, _ string, _ int) (*fetch.Page, error) {
	<-ctx.Done()
	return nil, toolerr.Wrap(toolerr.Timeout, ctx.Err(), "the page did not load in time")
}

type fixedSearcher struct{ n int }

func (s fixedSearcher) Search(context.Context, search.Query) (*search.Results, error) {
	r := &search.Results{}
	for i := range s.n {
		r.Results = append(r.Results, search.Result{Title: "t", URL: "https://e.example/" + strconv.Itoa(i), Snippet: "snip"})
	}
	return r, nil
}

// TestOneDeadline: slow pages end together at the comparison deadline and
// are reported per source; the comparison itself still answers.
func TestOneDeadline(t *testing.T) {
	c := compare.New(compare.Config{Searcher: fixedSearcher{n: 9}, Fetcher: slowFetcher{}, Timeout: 50 * time.Millisecond})
	res, err := c.Compare(t.Context(), compare.Request{Question: "anything at all", Sources: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Sources) != compare.MaxSources {
		t.Fatalf("sources not bounded: %d", len(res.Sources))
	}
	for _, s := range res.Sources {
		if s.Error == nil || s.Error.Code != toolerr.Timeout || s.Snippet != "snip" {
			t.Fatalf("source: %+v", s)
		}
	}
	if _, err := c.Compare(t.Context(), compare.Request{Question: " "}); toolerr.CodeOf(err) != toolerr.InvalidArgument {
		t.Fatalf("empty question: %v", err)
	}
}
