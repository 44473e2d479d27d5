package app_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/web/app"
	"github.com/toolgate/toolgate/services/web/search/searxtest"
)

// One real searx for the package's tests (see searxtest).
var searx searxtest.Once

func TestMain(m *testing.M) {
	code := m.Run()
	searx.Close()
	os.Exit(code)
}

// TestSearchToolAgainstSearx: web_search, called by an MCP client through
// the toolkit, returns a real searx's results de-duplicated, with the
// notice and the engine that failed, and nothing that is not an http(s)
// link.
func TestSearchToolAgainstSearx(t *testing.T) {
	sx := searx.Get(t)
	e := startAt(t, sx.URL, 0)
	out, isErr := e.svc.Call(t, "web_search", map[string]any{"query": "nimbus 3.2", "max_results": 10}, "")
	if isErr {
		t.Fatalf("%v\n%s", out, sx.Log())
	}
	if out["notice"] != app.UntrustedNotice {
		t.Errorf("notice: %v", out["notice"])
	}
	var urls []string
	for _, r := range out["results"].([]any) {
		urls = append(urls, r.(map[string]any)["url"].(string))
	}
	if len(urls) != 4 {
		t.Errorf("want 4 de-duplicated results, got %q", urls)
	}
	if b, _ := json.Marshal(out); strings.Contains(string(b), "javascript:") {
		t.Errorf("a javascript: link reached the model: %s", b)
	}
	un, _ := out["unresponsive_engines"].([]any)
	if len(un) != 1 || un[0].(map[string]any)["engine"] != searxtest.EngineBroken || un[0].(map[string]any)["reason"] != searxtest.BrokenReason {
		t.Errorf("unresponsive_engines: %v", out["unresponsive_engines"])
	}

	out, isErr = e.svc.Call(t, "web_search", map[string]any{"query": "zzz-nothing-matches"}, "")
	msg, _ := json.Marshal(out)
	if !isErr || !strings.Contains(string(msg), "not_found") || !strings.Contains(string(msg), "broken (HTTP error)") {
		t.Fatalf("no results: %s", msg)
	}
}
