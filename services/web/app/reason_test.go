package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/web/fakesearx"
)

// SearXNG's own reason for a refused search (searx/webapp.py index_error:
// {"error": "Invalid value … for parameter …"}, the SearxParameterException
// text) reaches the tool result framed as its words; its HTML error page
// adds nothing.
func TestSearxngsReasonReachesTheResult(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body, code, has string
		status                       int
	}{
		{"a parameter SearXNG refuses", "application/json", `{"error": "Invalid value zz-ZZ for parameter language"}`,
			"invalid_argument", `SearXNG said: "Invalid value zz-ZZ for parameter language"`, http.StatusBadRequest},
		{"its generic failure", "application/json", `{"error": "search error"}`,
			"upstream_unavailable", `SearXNG said: "search error"`, http.StatusInternalServerError},
		{"an HTML page", "text/html", "<!doctype html><h1>Internal Server Error</h1><pre>Traceback</pre>",
			"upstream_unavailable", "", http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakesearx.New(fakesearx.Options{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/search" || r.URL.Query().Get("q") == "" {
					fake.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Type", tc.ctype)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			e := startAt(t, srv.URL, 0)
			out, isErr := e.svc.Call(t, "web_search", map[string]any{"query": "nimbus"}, "")
			errObj, _ := out["error"].(map[string]any)
			msg, _ := errObj["message"].(string)
			if !isErr || errObj["code"] != tc.code || !strings.Contains(msg, tc.has) {
				t.Fatalf("got %v, want %s with %q", out, tc.code, tc.has)
			}
			if strings.Contains(msg, "Traceback") || strings.Contains(msg, "<") {
				t.Errorf("message %q shows the page", msg)
			}
		})
	}
}
