package search_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/web/search"
	"github.com/toolgate/toolgate/services/web/search/searxtest"
)

// One real searx for the package's tests (see searxtest).
var searx searxtest.Once

func TestMain(m *testing.M) {
	code := m.Run()
	searx.Close()
	os.Exit(code)
}

func searxClient(t *testing.T) (*search.Client, *searxtest.Searx) {
	t.Helper()
	sx := searx.Get(t)
	c, err := search.New(search.Config{BaseURL: sx.URL, AllowHTTP: true, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c, sx
}

// TestAgainstSearxResultsAreCompactAndDeduplicated: a real searx's answer
// becomes compact results; the release page that searx keeps twice (its
// URLs differ in a fragment and an explicit :443) is one result carrying
// both engines, searx's own merge of the install page survives, and the
// javascript: result is dropped.
func TestAgainstSearxResultsAreCompactAndDeduplicated(t *testing.T) {
	c, sx := searxClient(t)
	raw, err := sx.Raw("nimbus 3.2")
	if err != nil {
		t.Fatal(err)
	}
	// Precondition: searx itself did not merge the two release URLs, so
	// the merge below is the client's.
	releaseKeys := 0
	for _, r := range raw["results"].([]any) {
		if k, _ := search.Canonical(r.(map[string]any)["url"].(string)); k == "nimbus.example/releases/3.2?" {
			releaseKeys++
		}
	}
	if releaseKeys != 2 {
		t.Fatalf("searx returned the release page %d times, want 2 (fixture or searx changed): %v", releaseKeys, raw["results"])
	}

	res, err := c.Search(t.Context(), search.Query{Q: "nimbus 3.2", Limit: search.MaxLimit})
	if err != nil {
		t.Fatalf("%v\n%s", err, sx.Log())
	}
	byKey := map[string]search.Result{}
	for _, r := range res.Results {
		k, ok := search.Canonical(r.URL)
		if !ok {
			t.Errorf("non-http result reached the caller: %q", r.URL)
		}
		if _, dup := byKey[k]; dup {
			t.Errorf("duplicate result %s", r.URL)
		}
		byKey[k] = r
		if r.Title == "" || r.Snippet == "" || len(r.Engines) == 0 {
			t.Errorf("incomplete result %+v", r)
		}
	}
	want := map[string][]string{
		"nimbus.example/releases/3.2?":           {searxtest.EngineAlpha, searxtest.EngineBeta},
		"docs.nimbus.example/install?":           {searxtest.EngineAlpha, searxtest.EngineBeta},
		"forum.nimbus.example/t/upgrade-to-3-2?": {searxtest.EngineAlpha},
		"blog.example.net/nimbus-3-2-review?":    {searxtest.EngineBeta},
	}
	if len(byKey) != len(want) {
		t.Errorf("got %d results, want %d: %+v", len(byKey), len(want), res.Results)
	}
	for k, engines := range want {
		if r, ok := byKey[k]; !ok || !slices.Equal(r.Engines, engines) {
			t.Errorf("%s: %+v, want engines %v", k, r, engines)
		}
	}
	// searx strips the fixture's HTML; the snippet arrives as text.
	for _, r := range res.Results {
		if strings.ContainsAny(r.Snippet+r.Title, "<>") {
			t.Errorf("markup in %+v", r)
		}
	}
	if res.MoreAvailable {
		t.Error("more_available with every result returned")
	}
	if got := sx.Queries(searxtest.EngineAlpha); !slices.Contains(got, "nimbus 3.2") {
		t.Errorf("alpha never received the query: %q", got)
	}

	res, err = c.Search(t.Context(), search.Query{Q: "nimbus 3.2", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 2 || !res.MoreAvailable {
		t.Errorf("limit 2: %d results, more_available=%v", len(res.Results), res.MoreAvailable)
	}
}

// TestAgainstSearxUnresponsiveEngineIsReported: searx's
// unresponsive_engines pairs reach the caller as engine and reason, with
// results and without them (then as a not_found that names the engine).
func TestAgainstSearxUnresponsiveEngineIsReported(t *testing.T) {
	c, _ := searxClient(t)
	broken := search.Unresponsive{Engine: searxtest.EngineBroken, Reason: searxtest.BrokenReason}
	res, err := c.Search(t.Context(), search.Query{Q: "install nimbus"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Unresponsive, []search.Unresponsive{broken}) {
		t.Errorf("unresponsive: %+v", res.Unresponsive)
	}
	if len(res.Results) != 1 || res.Results[0].URL != "https://docs.nimbus.example/install" {
		t.Errorf("results: %+v", res.Results)
	}

	_, err = c.Search(t.Context(), search.Query{Q: "zzz-nothing-matches"})
	if toolerr.CodeOf(err) != toolerr.NotFound || !strings.Contains(toolerr.MessageOf(err), "broken (HTTP error)") {
		t.Fatalf("no results: %v", err)
	}
}

// TestAgainstSearxReady: the readiness probe (a query-less JSON request)
// recognises a real searx.
func TestAgainstSearxReady(t *testing.T) {
	c, _ := searxClient(t)
	if err := c.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
}
