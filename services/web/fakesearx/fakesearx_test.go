package fakesearx_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/web/fakesearx"
)

func get(t *testing.T, h http.Handler, target string) (int, string, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, rec.Header().Get("Content-Type"), string(b)
}

// TestAnswersLikeSearXNG: statuses and the JSON shape of searx/webapp.py.
func TestAnswersLikeSearXNG(t *testing.T) {
	demo := fakesearx.NewDemo()
	for _, tc := range []struct {
		h      http.Handler
		target string
		status int
		body   string
	}{
		{demo, "/search?format=json", 400, `{"error":"No query"}`},
		{demo, "/search?q=x&format=json&time_range=decade", 400, `for parameter time_range`},
		{demo, "/search?q=x&format=json&pageno=0", 400, `for parameter pageno`},
		{demo, "/search?q=x&format=json&safesearch=7", 400, `{"error":"Invalid value 7 for parameter safesearch"}`},
		{demo, "/search?q=x&format=json&language=english", 400, `for parameter language`},
		{demo, "/search?q=x&format=json&language=auto", 200, `"results"`},
		{demo, "/search?q=!!g+nimbus&format=json", 302, ""},
		{demo, "/search?q=nimbus+:de&format=json", 200, `"query":"nimbus"`},
		{demo, "/search?q=x&format=csv", 403, `Forbidden`},
		{fakesearx.New(fakesearx.Options{Formats: []string{"html"}}), "/search?q=x&format=json", 403, "Forbidden"},
		{fakesearx.New(fakesearx.Options{Limited: true}), "/search?q=x&format=json", 429, "Too Many Requests"},
		{demo, "/healthz", 200, "OK"},
		{demo, "/pages/nope", 404, ""},
		{demo, "/pages/nimbus-mirror", 302, ""},
	} {
		status, _, body := get(t, tc.h, tc.target)
		if status != tc.status || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %q", tc.target, status, body)
		}
	}
	status, ctype, body := get(t, demo, "/search?q=nimbus+3.2+release&format=json")
	if status != 200 || ctype != "application/json" {
		t.Fatalf("%d %s", status, ctype)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"query", "results", "answers", "corrections", "infoboxes", "suggestions", "unresponsive_engines"} {
		if _, ok := out[k]; !ok {
			t.Errorf("missing %s", k)
		}
	}
	r := out["results"].([]any)[0].(map[string]any)
	for _, k := range []string{"url", "title", "content", "engine", "engines", "parsed_url", "template", "positions", "score", "category", "publishedDate"} {
		if _, ok := r[k]; !ok {
			t.Errorf("result lacks %s", k)
		}
	}
	if !strings.HasPrefix(r["url"].(string), "http://example.com/pages/") {
		t.Errorf("result URL does not follow the request host: %v", r["url"])
	}
	if u := out["unresponsive_engines"].([]any)[0].([]any); u[0] != "brave" || u[1] != "too many requests" {
		t.Errorf("unresponsive: %v", u)
	}
	// Unknown categories are ignored, as SearXNG's parse_category_form
	// does: the search is the default one instead of finding nothing.
	_, _, unknown := get(t, demo, "/search?q=nimbus+3.2+release&format=json&categories=nosuch")
	_, _, none := get(t, demo, "/search?q=nimbus+3.2+release&format=json")
	if unknown != none || !strings.Contains(none, "nimbus") {
		t.Errorf("an unknown category changed the answer:\n%s\n%s", unknown, none)
	}
}
