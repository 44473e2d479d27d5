package tools

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// failing answers the first n /api/events requests with status (and an
// error body that must never surface), then passes through.
func failing(n int64, status int, header map[string]string) func(*harness, http.Handler) http.Handler {
	return func(h *harness, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/events" && h.frontHits.Add(1) <= n {
				for k, v := range header {
					w.Header().Set(k, v)
				}
				http.Error(w, `{"message":"Frigate's reason","trace":"`+errorBody+`"}`, status)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestRetriesOnlyTransientFailures(t *testing.T) {
	tests := []struct {
		name     string
		front    func(*harness, http.Handler) http.Handler
		wantCode string
		attempts int
	}{
		{"two 503s then success", failing(2, 503, nil), "", 3},
		{"three 503s exhaust the retries", failing(3, 503, nil), "upstream_unavailable", 3},
		{"429 with a short Retry-After", failing(1, 429, map[string]string{"Retry-After": "0"}), "", 2},
		{"429 asking for too long a wait", failing(1, 429, map[string]string{"Retry-After": "3600"}), "busy", 1},
		{"400 is not retried", failing(1, 400, nil), "invalid_argument", 1},
		{"404 is not retried", failing(1, 404, nil), "not_found", 1},
		{"403 is not retried", failing(1, 403, nil), "forbidden", 1},
		{"422 is not retried", failing(1, 422, nil), "invalid_argument", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{front: tc.front})
			out, isErr := h.call(t, "frigate_list_events", window())
			if tc.wantCode == "" && isErr || tc.wantCode != "" && errCode(out) != tc.wantCode {
				t.Fatalf("want %q, got %v", tc.wantCode, out)
			}
			if got := int(h.frontHits.Load()); got != tc.attempts {
				t.Errorf("attempts = %d, want %d", got, tc.attempts)
			}
			assertNoSecrets(t, h)
		})
	}
}

func TestBusyUnderTheConcurrencyBound(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	block := func(_ *harness, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/events" {
				entered <- struct{}{}
				<-release
			}
			next.ServeHTTP(w, r)
		})
	}
	h := newHarness(t, harnessOpts{front: block, limits: func(l *toolkit.Limits) { l.MaxConcurrent = 1 }})
	var wg sync.WaitGroup
	wg.Go(func() { h.mustOK(t, "frigate_list_events", window()) })
	<-entered
	before := h.hits.Load()
	msg := h.mustFail(t, "frigate_list_cameras", nil, "busy")
	if !strings.Contains(msg, "FRIGATE_MAX_CONCURRENT") {
		t.Errorf("busy message: %q", msg)
	}
	if h.hits.Load() != before {
		t.Error("a busy call reached Frigate")
	}
	close(release)
	wg.Wait()
	h.mustOK(t, "frigate_list_cameras", nil)
}

func TestBadUpstreamData(t *testing.T) {
	replace := func(path, contentType, body string) func(*harness, http.Handler) http.Handler {
		return func(_ *harness, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == path {
					w.Header().Set("Content-Type", contentType)
					_, _ = w.Write([]byte(body))
					return
				}
				next.ServeHTTP(w, r)
			})
		}
	}
	redirect := func(_ *harness, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/events" {
				http.Redirect(w, r, "/api/events-elsewhere?token="+testToken, http.StatusFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	big := `[` + strings.Repeat(`{"id":"1749999000.000000-aaaaaa","camera":"front_door","label":"person","start_time":1749999000,"end_time":null,"zones":[],"has_clip":true,"has_snapshot":true,"data":{}},`, 200) + `{}]`
	tests := []struct {
		name     string
		opts     harnessOpts
		tool     string
		wantCode string
	}{
		{"oversized response", harnessOpts{front: replace("/api/events", "application/json", big), settings: func(s *Settings) { s.MaxResponseBytes = 4096 }}, "frigate_list_events", "too_large"},
		{"not JSON", harnessOpts{front: replace("/api/events", "application/json", "<html>"+errorBody)}, "frigate_list_events", "upstream_unavailable"},
		{"event without id", harnessOpts{front: replace("/api/events", "application/json", `[{"camera":"front_door","label":"person","start_time":1749999000}]`)}, "frigate_list_events", "upstream_unavailable"},
		{"event id with a path", harnessOpts{front: replace("/api/events", "application/json", `[{"id":"../x","camera":"front_door","label":"person","start_time":1749999000}]`)}, "frigate_list_events", "upstream_unavailable"},
		{"camera name with control characters", harnessOpts{front: replace("/api/config", "application/json", `{"cameras":{"evil\u0007cam":{}}}`)}, "frigate_list_cameras", "upstream_unavailable"},
		{"too many cameras", harnessOpts{front: replace("/api/config", "application/json", manyCameras(300))}, "frigate_list_cameras", "upstream_unavailable"},
		{"version that is not a version", harnessOpts{front: replace("/api/version", "text/plain", errorBody+" <script>")}, "frigate_get_capabilities", "upstream_unavailable"},
		{"redirect refused", harnessOpts{front: redirect}, "frigate_list_events", "upstream_unavailable"},
		{"result over FRIGATE_MAX_RESULT_BYTES", harnessOpts{limits: func(l *toolkit.Limits) { l.MaxResultBytes = 1024 }}, "frigate_list_events", "too_large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			args := map[string]any{}
			if tc.tool == "frigate_list_events" {
				args = window()
			}
			h.mustFail(t, tc.tool, args, tc.wantCode)
			if n := len(h.requests("events-elsewhere")); n != 0 {
				t.Error("redirect followed")
			}
			assertNoSecrets(t, h)
		})
	}
}

func manyCameras(n int) string {
	var b strings.Builder
	b.WriteString(`{"cameras":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"cam` + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + itoa(i) + `":{}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
