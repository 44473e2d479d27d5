package tools_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
	"github.com/toolgate/toolgate/services/ersatztv/tools"
)

// testKey is the planted machine key; it must never leave the service.
const testKey = "etv-Planted-machine-key-5b7e21"

var testNow = time.Unix(1_750_000_000, 0)

// upstreamEnv is an ErsatzTV fake, the service over it, and what each saw.
type upstreamEnv struct {
	Store  *fakeersatztv.Store
	V1     *fakeersatztv.V1     // nil in legacy mode
	Legacy *fakeersatztv.Legacy // nil in v1 mode
	URL    string
	Svc    *tools.Service
	Set    tools.Settings
}

// requests returns what the fake received.
func (e *upstreamEnv) requests() []fakeersatztv.Request {
	if e.V1 != nil {
		return e.V1.Requests()
	}
	return e.Legacy.Requests()
}

func (e *upstreamEnv) resetRequests() {
	if e.V1 != nil {
		e.V1.Reset()
	} else {
		e.Legacy.Reset()
	}
}

func keyFile(t testing.TB, key string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(p, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// settings loads the service's settings from env (plain http allowed).
func settings(t testing.TB, env map[string]string) (tools.Settings, error) {
	t.Helper()
	full := map[string]string{"ERSATZTV_ALLOW_HTTP": "true", "ERSATZTV_TIMEOUT": "5s"}
	for k, v := range env {
		full[k] = v
	}
	return tools.LoadSettings(config.New(func(k string) (string, bool) { v, ok := full[k]; return v, ok }))
}

// startV1 serves the /api/v1 fake over the demo store and starts the
// service against it with detection.
func startV1(t testing.TB, env map[string]string) *upstreamEnv {
	t.Helper()
	store := fakeersatztv.NewDemoStore(testNow)
	fake := fakeersatztv.NewV1(store, testKey)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := &upstreamEnv{Store: store, V1: fake, URL: srv.URL}
	full := map[string]string{"ERSATZTV_URL": srv.URL, "ERSATZTV_API_KEY_FILE": keyFile(t, testKey)}
	for k, v := range env {
		full[k] = v
	}
	e.start(t, full)
	return e
}

// startLegacy serves the upstream ErsatzTV fake on its UI port.
func startLegacy(t testing.TB, env map[string]string) *upstreamEnv {
	t.Helper()
	store := fakeersatztv.NewDemoStore(testNow)
	fake := fakeersatztv.NewLegacy(store)
	srv := httptest.NewServer(fake.Handler(true))
	t.Cleanup(srv.Close)
	e := &upstreamEnv{Store: store, Legacy: fake, URL: srv.URL}
	full := map[string]string{"ERSATZTV_URL": srv.URL}
	for k, v := range env {
		full[k] = v
	}
	e.start(t, full)
	return e
}

func (e *upstreamEnv) start(t testing.TB, env map[string]string) {
	t.Helper()
	set, err := settings(t, env)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := tools.Start(t.Context(), set, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	e.Svc, e.Set = svc, set
	if e.V1 != nil {
		e.V1.Reset()
	} else {
		e.Legacy.Reset()
	}
}

// service runs the tools in a toolkit service (writes allowed) with a
// connected MCP client.
func (e *upstreamEnv) service(t testing.TB) *toolkittest.Service {
	t.Helper()
	return toolkittest.Start(t, "ersatztv", e.Svc.Tools())
}

// noRequests fails when the fake received anything.
func (e *upstreamEnv) noRequests(t testing.TB) {
	t.Helper()
	if reqs := e.requests(); len(reqs) > 0 {
		t.Fatalf("ErsatzTV received %d request(s), first %s %s", len(reqs), reqs[0].Method, reqs[0].Path)
	}
}

var _ http.Handler = (*fakeersatztv.V1)(nil)
