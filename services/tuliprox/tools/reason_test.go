package tools_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/client"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

// Seed 001: a failed REST call is an isError result starting with its
// HTTP status, and Tuliprox's own reason ({"error": …}, as
// stream_history_api.rs's error_response writes it) reaches the model so
// it can correct itself.
func TestTuliproxsReasonReachesTheResult(t *testing.T) {
	off := admin(t, faketuliprox.Options{NoStreamHistory: true}).service(t)
	off.RunReads(t, []toolkittest.ReadCase{
		{Name: "feature disabled", Tool: tools.ToolHistory, Code: toolerr.UpstreamUnavailable,
			Has: []string{`"message":"HTTP 503`, `Tuliprox said: \"Stream history is not enabled\"`}},
	}, secrets...)

	refusing := startWithFront(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v1/stream-history" {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"Invalid filter value for cluster: 'radio'"}`))
		})
	})
	refusing.RunReads(t, []toolkittest.ReadCase{
		{Name: "a value Tuliprox refuses", Tool: tools.ToolHistory, Code: toolerr.InvalidArgument,
			Has: []string{`"message":"HTTP 400`, `Tuliprox said: \"Invalid filter value for cluster: 'radio'\"`}},
	}, secrets...)
}

// startWithFront is start (as the admin) with front wrapped around the
// fake.
func startWithFront(t *testing.T, front func(http.Handler) http.Handler) *toolkittest.Service {
	t.Helper()
	clock := fakeclock.New(t0)
	fake := faketuliprox.New(faketuliprox.Options{Now: clock.Now})
	srv := httptest.NewServer(front(fake))
	t.Cleanup(srv.Close)
	lookup := map[string]string{"TULIPROX_URL": srv.URL, "TULIPROX_ALLOW_HTTP": "true", "TULIPROX_TIMEOUT": "5s",
		"TULIPROX_USERNAME_FILE": writeFile(t, "user", faketuliprox.DemoAdmin), "TULIPROX_PASSWORD_FILE": writeFile(t, "pass", faketuliprox.DemoAdminPassword)}
	set, err := client.LoadSettings(config.New(func(k string) (string, bool) { v, ok := lookup[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewFromSettings(set, client.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return toolkittest.Start(t, "tuliprox", tools.New(set, c, nil).Tools())
}
