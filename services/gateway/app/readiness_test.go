package app_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// The gateway is not ready until every service has been asked for its
// tools once: compose and Kubernetes send no client before then, so no
// client sees an empty catalog after a restart. A service that is down
// does not hold readiness back once it has been asked.
func TestNotReadyUntilTheToolsAreLoaded(t *testing.T) {
	tokens, _ := gatewaytest.ClientTokens(t, map[string][]string{"openwebui": {"users"}})
	gw, err := app.Build(t.Context(), app.Config{
		Tokens: tokens, ApprovalKey: []byte(gatewaytest.ApprovalKey), PolicyMode: "embedded",
		Services: []app.ServiceConfig{{Name: "demo", URL: "http://127.0.0.1:1/mcp", Token: []byte(gatewaytest.ServiceToken)}},
	}, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	pub := httptest.NewServer(gw.Public)
	t.Cleanup(pub.Close)
	ready := func() (int, string) {
		res, err := http.Get(pub.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := ready(); code != http.StatusServiceUnavailable || !strings.Contains(body, "loading the services' tools") {
		t.Fatalf("before the first load: HTTP %d %s", code, body)
	}
	gw.Router.RefreshAll(t.Context()) // demo is down: asked, not answered
	if code, body := ready(); code != http.StatusOK {
		t.Fatalf("after the first load: HTTP %d %s", code, body)
	}
}
