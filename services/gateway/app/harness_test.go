package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// Known secret values planted everywhere; no response, audit line or log
// line may contain any of them.
const (
	serviceToken  = "svc-token-SECRET-1111111111111111"
	approvalKey   = "approval-key-SECRET-2222222222222222222222"
	adminToken    = "admin-token-SECRET-3333333333333333"
	upstreamKey   = "upstream-apikey-SECRET-44444444"
	otherKey      = "wrong-approval-key-5555555555555555555555555"
	demoPrefixURL = "/mcp"
)

// demo is the small tool service that lives in test code: a counter with a
// read, a model-approved write and a human-approved destructive write.
type demo struct {
	counter atomic.Int64
	applied atomic.Int64 // how many Apply calls ran
	slow    chan struct{}
	secret  string
	note    atomic.Value
	// previewPad, when set, adds that many bytes to the previews of
	// demo_note_touch and demo_counter_add.
	previewPad atomic.Int64
}

// padded adds d.previewPad bytes to a preview.
func (d *demo) padded(p map[string]any) map[string]any {
	if n := d.previewPad.Load(); n > 0 {
		p["padding"] = strings.Repeat("x", int(n))
	}
	return p
}

func (d *demo) tools() []toolkit.Tool {
	return []toolkit.Tool{
		{
			Name: "demo_echo", Description: "Echo a text back.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":100}},"required":["text"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Read: func(_ context.Context, a toolkit.Args) (any, error) {
				var in struct{ Text string }
				if err := a.Decode(&in); err != nil {
					return nil, err
				}
				return map[string]any{"text": in.Text, "counter": d.counter.Load()}, nil
			},
		},
		{
			Name: "demo_config", Description: "Show the upstream settings (contains secrets that must be redacted).",
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Read: func(context.Context, toolkit.Args) (any, error) {
				return map[string]any{
					"api_key": d.secret,
					"url":     "https://user:" + d.secret + "@sonarr.lan/api?apikey=" + d.secret,
					"note":    "key is " + d.secret,
				}, nil
			},
		},
		{
			Name: "demo_fail", Description: "Fail with an upstream error that quotes a secret.",
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true},
			Read: func(context.Context, toolkit.Args) (any, error) {
				return nil, fmt.Errorf("upstream said: bad key %s", d.secret)
			},
		},
		{
			Name: "demo_slow", Description: "Block until released or cancelled.",
			Timeout:     time.Minute,
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true},
			Read: func(ctx context.Context, _ toolkit.Args) (any, error) {
				select {
				case <-d.slow:
					return map[string]any{"done": true}, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			},
		},
		{
			Name: "demo_big", Description: "Return a large text of multi-byte characters.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"kib":{"type":"integer","minimum":1,"maximum":200}},"required":["kib"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Read: func(_ context.Context, a toolkit.Args) (any, error) {
				var in struct{ Kib int }
				if err := a.Decode(&in); err != nil {
					return nil, err
				}
				return map[string]any{"text": strings.Repeat("ü€", in.Kib*1024/5)}, nil
			},
		},
		{
			Name: "demo_note_touch", Description: "Set the note (low-risk: allowed without a ticket).",
			Schema:      json.RawMessage(`{"type":"object","properties":{"note":{"type":"string","maxLength":50}},"required":["note"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{Idempotent: true},
			Write: &toolkit.Write{
				Preview: func(_ context.Context, a toolkit.Args) (any, error) {
					return d.padded(map[string]any{"old": d.note.Load()}), nil
				},
				Apply: func(_ context.Context, a toolkit.Args, _ any) (any, error) {
					var in struct{ Note string }
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					d.applied.Add(1)
					d.note.Store(in.Note)
					return map[string]any{"note": in.Note}, nil
				},
			},
		},
		{
			Name: "demo_counter_add", Description: "Add to the counter.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":100},"force":{"type":"boolean"}},"required":["amount"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{},
			Write: &toolkit.Write{
				Preview: func(_ context.Context, a toolkit.Args) (any, error) {
					var in struct{ Amount int64 }
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					cur := d.counter.Load()
					return d.padded(map[string]any{"current": cur, "new": cur + in.Amount}), nil
				},
				Apply: func(_ context.Context, a toolkit.Args, p any) (any, error) {
					var in struct{ Amount int64 }
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					d.applied.Add(1)
					return map[string]any{"counter": d.counter.Add(in.Amount)}, nil
				},
			},
		},
		{
			Name: "demo_counter_reset", Description: "Reset the counter to zero.",
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Annotations: toolkit.Annotations{Destructive: true, Idempotent: true},
			Write: &toolkit.Write{
				Preview: func(context.Context, toolkit.Args) (any, error) {
					return map[string]any{"current": d.counter.Load(), "new": 0}, nil
				},
				Apply: func(context.Context, toolkit.Args, any) (any, error) {
					d.applied.Add(1)
					d.counter.Store(0)
					return map[string]any{"counter": 0}, nil
				},
			},
		},
	}
}

// harness runs the demo service and the gateway over real HTTP.
type harness struct {
	t       testing.TB
	demo    *demo
	clock   *fakeclock.Clock // shared by the gateway and the service
	gw      *app.Gateway
	gwSrv   *httptest.Server
	admin   *httptest.Server
	svc     *httptest.Server
	tokens  map[string]string // client name -> bearer token
	logs    *capture.Buffer
	audit   *capture.Buffer
	wire    *capture.Buffer // every response body the clients saw
	svcSwap atomic.Pointer[http.Handler]
}

// harnessOption changes the gateway's configuration or its options.
type harnessOption interface{}

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{
		t: t, demo: &demo{slow: make(chan struct{}), secret: upstreamKey},
		clock: fakeclock.New(time.Now()),
		logs:  &capture.Buffer{}, audit: &capture.Buffer{}, wire: &capture.Buffer{},
		tokens: map[string]string{},
	}
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var auditSink io.Writer = h.audit
	if _, bench := t.(*testing.B); bench {
		// Benchmarks measure the gateway, not an ever-growing buffer.
		logger, auditSink = slog.New(slog.DiscardHandler), io.Discard
	}
	svc := h.newService(t, logger, h.demo.tools())
	var handler http.Handler = svc.Handler()
	h.svcSwap.Store(&handler)
	h.svc = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*h.svcSwap.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(h.svc.Close)

	tokens, bearer := gatewaytest.ClientTokens(t, map[string][]string{
		"openwebui": {"users"}, "hermes": {"users"}, "kiosk": {"readonly"}, "stranger": {"nobody"},
	})
	h.tokens = bearer
	cfg := app.Config{
		Tokens:         tokens,
		AllowedOrigins: []string{"http://openwebui.local:3000"},
		AdminToken:     []byte(adminToken),
		ApprovalKey:    []byte(approvalKey),
		Services: []app.ServiceConfig{
			{Name: "demo", URL: h.svc.URL + "/mcp", Token: []byte(serviceToken)},
		},
		PolicyMode:         "embedded",
		CallTimeout:        5 * time.Second,
		ServiceConcurrency: 8,
	}
	buildOpts := app.Options{Logger: logger, Audit: auditSink, Now: h.clock.Now}
	for _, o := range opts {
		switch o := o.(type) {
		case func(*app.Config):
			o(&cfg)
		case func(*app.Options):
			o(&buildOpts)
		default:
			t.Fatalf("unknown harness option %T", o)
		}
	}
	ctx := t.Context()
	var err error
	h.gw, err = app.Build(ctx, cfg, buildOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.gw.Close() })
	h.gw.Router.RefreshAll(ctx)
	h.gwSrv = httptest.NewServer(h.gw.Public)
	t.Cleanup(h.gwSrv.Close)
	h.admin = httptest.NewServer(h.gw.Admin)
	t.Cleanup(h.admin.Close)
	return h
}

func (h *harness) newService(t testing.TB, logger *slog.Logger, tools []toolkit.Tool) *toolkit.Service {
	t.Helper()
	svc, err := toolkit.New(toolkit.Options{
		Name: "demo", ServiceToken: []byte(serviceToken), ApprovalKey: []byte(approvalKey),
		AllowWrites: true, Redactor: redact.New([]byte(upstreamKey), []byte(serviceToken), []byte(approvalKey)),
		Logger: logger, CallTimeout: 5 * time.Second,
	}, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func (h *harness) httpClient(hdr map[string]string) *http.Client {
	return gatewaytest.RecordingClient(h.wire, hdr)
}

// client opens an mcp-go client for clientName (and end user) on path.
func (h *harness) client(clientName, user, path string, opts ...client.ClientOption) *client.Client {
	h.t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + h.tokens[clientName]}
	if user != "" {
		hdr["X-OpenWebUI-User-Email"] = user
	}
	tr, err := transport.NewStreamableHTTP(h.gwSrv.URL+path, transport.WithHTTPBasicClient(h.httpClient(hdr)))
	if err != nil {
		h.t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	ctx := h.t.Context()
	if err := c.Start(ctx); err != nil {
		h.t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	return c
}

// call runs a tool and returns its structured content as a map.
func call(t *testing.T, c *client.Client, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return structured(t, res), res.IsError
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var raw []byte
	switch {
	case len(res.RawStructuredContent) > 0:
		raw = res.RawStructuredContent
	case res.StructuredContent != nil:
		raw, _ = json.Marshal(res.StructuredContent)
	default:
		if len(res.Content) == 0 {
			t.Fatal("empty result")
		}
		raw = []byte(res.Content[0].(mcp.TextContent).Text)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("structured content is not an object: %s", raw)
	}
	return m
}

func errCode(m map[string]any) toolerr.Code {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return toolerr.Code(c)
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// adminPost calls the admin API.
func (h *harness) adminPost(path string) int {
	h.t.Helper()
	req, _ := http.NewRequestWithContext(h.t.Context(), http.MethodPost, h.admin.URL+path, strings.NewReader(`{"by":"tester"}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// newAuthedMCPServer serves a plain mcp-go server that, like a toolkit
// service, accepts only the service token.
func newAuthedMCPServer(t *testing.T, s *server.MCPServer) string {
	t.Helper()
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true), server.WithDisableLocalhostProtection(true))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+serviceToken {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
