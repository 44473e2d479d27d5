package tools

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/frigate/client"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

// Planted secrets: none may appear in any result, error or log line.
const (
	testUser     = "viewer"
	testPassword = "pw-Planted-4711-frigate"
	testToken    = "bearer-Planted-0815-token"
	errorBody    = "UPSTREAM-ERROR-BODY-must-not-leak"
)

var testNow = time.Unix(1_750_000_000, 0)

type harness struct {
	fake    *fakefrigate.Fake
	svc     *toolkittest.Service
	logs    *capture.Buffer
	set     Settings
	mu      sync.Mutex
	outputs []string
	// hits counts requests that reached the fake (after any front).
	hits atomic.Int64
	// frontHits counts /api/events requests seen by a fault-injecting front.
	frontHits atomic.Int64
}

type harnessOpts struct {
	settings func(*Settings)
	limits   func(*toolkit.Limits)
	fake     func(*fakefrigate.Options)
	// front wraps the fake to inject faults.
	front func(h *harness, next http.Handler) http.Handler
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	fo := fakefrigate.Options{
		Users:          map[string]string{testUser: testPassword},
		Tokens:         []string{testToken},
		Cameras:        fakefrigate.DemoCameras(),
		Events:         fakefrigate.DemoEvents(testNow),
		SemanticSearch: true,
	}
	if o.fake != nil {
		o.fake(&fo)
	}
	h := &harness{fake: fakefrigate.New(fo), logs: &capture.Buffer{}}
	inner := h.fake.Handler()
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.hits.Add(1)
		inner.ServeHTTP(w, r)
	})
	if o.front != nil {
		handler = o.front(h, handler)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	root, _ := url.Parse(srv.URL + "/api")
	set := Settings{
		APIRoot: root, Auth: client.Managed, Username: testUser, Password: []byte(testPassword),
		CookieName: client.DefaultCookieName, AllowHTTP: true, Timeout: 30 * time.Second, // generous: snapshots are decoded and scaled on a loaded 2-core CI machine
		MaxResponseBytes: DefaultMaxResponseBytes, PageSize: DefaultPageSize,
		MaxWindow: DefaultMaxWindow, ImageMaxBytes: DefaultImageMaxBytes,
		ImageMaxHeight: DefaultImageMaxHeight,
	}
	if o.settings != nil {
		o.settings(&set)
	}
	h.set = set
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fc, err := NewClient(set, log)
	if err != nil {
		t.Fatal(err)
	}
	limits := DefaultLimits
	if o.limits != nil {
		o.limits(&limits)
	}
	s := New(set, limits, fc, func() time.Time { return testNow })
	h.svc = toolkittest.Start(t, "frigate", s.Tools(), func(o *toolkit.Options) { o.Limits = limits })
	return h
}

// call runs a tool and returns its structured content, whether it failed,
// and records every output for the secret check.
func (h *harness) call(t *testing.T, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res := h.raw(t, tool, args)
	var out map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structured content is not an object: %s", tool, raw)
	}
	return out, res.IsError
}

func (h *harness) raw(t *testing.T, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	if args == nil {
		args = map[string]any{}
	}
	req.Params.Arguments = args
	res, err := h.svc.Client.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	all, _ := json.Marshal(res)
	h.mu.Lock()
	h.outputs = append(h.outputs, string(all))
	h.mu.Unlock()
	return res
}

// errCode returns the error code of a failed result.
func errCode(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func errMessage(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

func (h *harness) mustOK(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	out, isErr := h.call(t, tool, args)
	if isErr {
		t.Fatalf("%s failed: %v", tool, out)
	}
	return out
}

func (h *harness) mustFail(t *testing.T, tool string, args map[string]any, code string) string {
	t.Helper()
	out, isErr := h.call(t, tool, args)
	if !isErr || errCode(out) != code {
		t.Fatalf("%s: want error %s, got isError=%v %v", tool, code, isErr, out)
	}
	return errMessage(out)
}

// requests returns the fake's request log lines containing substr.
func (h *harness) requests(substr string) []string {
	var out []string
	for _, r := range h.fake.Requests() {
		if strings.Contains(r, substr) {
			out = append(out, r)
		}
	}
	return out
}

// window is a valid 24-hour window ending at testNow.
func window() map[string]any {
	return map[string]any{"after": float64(testNow.Add(-24 * time.Hour).Unix()), "before": float64(testNow.Unix())}
}

func with(base map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// leaks are strings that must never leave the service: credentials, the
// session token, upstream error bodies and raw configuration/statistics.
var leaks = []string{
	testPassword, testToken, errorBody,
	"eyJhbGciOiJIUzI1NiJ9.", // session tokens the fake issues
	"rtsp://", "demo-camera-pass", "mqtt-password-in-config", "camera-password",
	"/media/frigate", "cmdline", "thumbnail-bytes-of-",
}

func assertNoSecrets(t *testing.T, h *harness) {
	t.Helper()
	h.mu.Lock()
	all := strings.Join(h.outputs, "\n") + "\n" + h.logs.String()
	h.mu.Unlock()
	for _, l := range leaks {
		if strings.Contains(all, l) {
			t.Errorf("output or log contains %q", l)
		}
	}
}

func demoEvents() []fakefrigate.Event { return fakefrigate.DemoEvents(testNow) }
