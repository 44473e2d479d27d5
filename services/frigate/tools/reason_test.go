package tools

import (
	"net/http"
	"strings"
	"testing"
)

// Frigate's own reason for a refused request reaches the tool result,
// framed as its words, bounded and redacted: FastAPI's {"detail": [...]}
// (frigate/api, request validation), its {"success": false, "message": …}
// answers, a plain-text 500 (first line only); an HTML page adds nothing.
func TestFrigatesReasonReachesTheResult(t *testing.T) {
	tests := []struct {
		name   string
		status int
		ctype  string
		body   string
		code   string
		want   string
		hasNot []string
	}{
		{"request validation", http.StatusUnprocessableEntity, "application/json",
			`{"detail":[{"type":"int_parsing","loc":["query","limit"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"}]}`,
			"invalid_argument", `Frigate said: "query.limit: Input should be a valid integer, unable to parse string as an integer"`, nil},
		{"a refusal with a message", http.StatusBadRequest, "application/json",
			`{"success": false, "message": "Camera front_door is not enabled"}`,
			"invalid_argument", `Frigate said: "Camera front_door is not enabled"`, nil},
		{"the password in a message", http.StatusBadRequest, "application/json",
			`{"success": false, "message": "bad login ` + testPassword + `"}`,
			"invalid_argument", `Frigate said: "bad login [REDACTED]"`, []string{testPassword}},
		{"a traceback", http.StatusInternalServerError, "text/plain",
			"peewee.OperationalError: database is locked\nTraceback (most recent call last):\n  File \"/opt/frigate/frigate/api/event.py\"",
			"upstream_unavailable", `Frigate said: "peewee.OperationalError: database is locked"`, []string{"Traceback", "event.py"}},
		// require_camera_access's 403 names every camera the account's
		// role may see, a list wider than the service's camera scope.
		{"a camera refused to the role", http.StatusForbidden, "application/json",
			`{"detail":"Access denied to camera 'front_door'. Allowed: [garden pool_area]"}`,
			"forbidden", "HTTP 403", []string{"said", "pool_area", "Allowed"}},
		{"an HTML page", http.StatusBadGateway, "text/html", "<html><body>nginx " + errorBody + "</body></html>",
			"upstream_unavailable", "", []string{"said", "nginx", errorBody}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{front: func(_ *harness, next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/api/events" {
						next.ServeHTTP(w, r)
						return
					}
					w.Header().Set("Content-Type", tc.ctype)
					w.WriteHeader(tc.status)
					_, _ = w.Write([]byte(tc.body))
				})
			}})
			out, isErr := h.call(t, "frigate_list_events", window())
			msg := errMessage(out)
			if !isErr || errCode(out) != tc.code || !strings.Contains(msg, tc.want) {
				t.Fatalf("got %v, want %s with %q", out, tc.code, tc.want)
			}
			for _, s := range tc.hasNot {
				if strings.Contains(msg, s) {
					t.Errorf("message %q contains %q", msg, s)
				}
			}
			assertNoSecrets(t, h)
		})
	}
}
