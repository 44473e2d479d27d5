package arrspec

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recorder) Helper() {}

// The checker reports each way a fake or a request can leave Sonarr's
// document, and nothing for an exchange that follows it.
func TestCheckerReportsWhatLeavesTheDocument(t *testing.T) {
	answer := func(body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		})
	}
	cases := []struct {
		name, target, body, want string
	}{
		{"follows the document", "/api/v3/health", `[{"source":"IndexerCheck","type":"warning","message":"m","wikiUrl":"https://wiki.servarr.com/sonarr"}]`, ""},
		{"no such operation", "/api/v3/serie", `[]`, "not an operation"},
		{"undeclared parameter", "/api/v3/series?title=x", `[]`, `query parameter "title" is not declared`},
		{"wrongly typed parameter", "/api/v3/episode?seriesId=one", `[]`, "seriesId"},
		{"a null in the answer", "/api/v3/health", `[{"source":"IndexerCheck","type":"warning","message":null}]`, "null at $[0].message"},
		{"a property the resource lacks", "/api/v3/health", `[{"source":"IndexerCheck","type":"warning","text":"m"}]`, `"text"`},
		{"a wrongly typed property", "/api/v3/diskspace", `[{"path":"/tv","freeSpace":"12"}]`, "freeSpace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			h, _ := Wrap(rec, Sonarr, answer(tc.body))
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "http://sonarr.lan"+tc.target, nil))
			got := strings.Join(rec.errs, "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("reported %q, want %q", got, tc.want)
			}
		})
	}
}
