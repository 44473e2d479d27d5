package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// Known secret values planted everywhere; no response, audit line or log
// line may contain any of them. The first three are gatewaytest's.
const (
	serviceToken = gatewaytest.ServiceToken
	approvalKey  = gatewaytest.ApprovalKey
	adminToken   = gatewaytest.AdminToken
	upstreamKey  = "upstream-apikey-SECRET-44444444"
	otherKey     = "wrong-approval-key-5555555555555555555555555"
)

// demo is the small tool service that lives in test code: a counter with a
// read, a model-approved write and a human-approved destructive write.
type demo struct {
	counter atomic.Int64
	applied atomic.Int64 // how many Apply calls ran
	slow    chan struct{}
	inSlow  atomic.Int64 // demo_slow calls that have started
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
				d.inSlow.Add(1)
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

// harness is gatewaytest's gateway in front of the demo tools, with the
// gateway settings these tests share: a fake clock, an allowed origin, 5 s
// deadlines.
type harness struct {
	*gatewaytest.Gateway
	t      testing.TB
	demo   *demo
	clock  *fakeclock.Clock // the gateway's
	gw     *app.Gateway
	tokens map[string]string // client name -> bearer token
	logs   *capture.Buffer
	audit  *capture.Buffer
	wire   *capture.Buffer // every response body the clients saw
}

// harnessOption changes the gateway's configuration (func(*app.Config)),
// its build options (func(*app.Options)) or the demo service's
// instructions (withInstructions).
type harnessOption interface{}

// withInstructions are the demo service's own instructions.
type withInstructions string

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	h := &harness{t: t, demo: &demo{slow: make(chan struct{}), secret: upstreamKey}, clock: fakeclock.New(time.Now())}
	var configs []func(*app.Config)
	var builds []func(*app.Options)
	var instructions string
	for _, o := range opts {
		switch o := o.(type) {
		case func(*app.Config):
			configs = append(configs, o)
		case func(*app.Options):
			builds = append(builds, o)
		case withInstructions:
			instructions = string(o)
		default:
			t.Fatalf("unknown harness option %T", o)
		}
	}
	h.Gateway = gatewaytest.Start(t, gatewaytest.Options{
		Service: "demo", Tools: h.demo.tools(), AllowWrites: true, Secrets: [][]byte{[]byte(upstreamKey)},
		CallTimeout: 5 * time.Second, Instructions: instructions,
		Config: func(c *app.Config) {
			c.AllowedOrigins = []string{"http://openwebui.local:3000"}
			for _, f := range configs {
				f(c)
			}
		},
		Build: func(o *app.Options) {
			o.Now = h.clock.Now
			for _, f := range builds {
				f(o)
			}
		},
	})
	h.gw, h.tokens, h.logs, h.audit, h.wire = h.App, h.Tokens, h.Logs, h.Audit, h.Wire
	return h
}

// client opens an mcp-go client for clientName (and end user) on path.
func (h *harness) client(clientName, user, path string, opts ...client.ClientOption) *client.Client {
	h.t.Helper()
	return h.ClientAt(clientName, user, path, opts...)
}

// call runs a tool and returns its structured content as a map.
func call(t *testing.T, c *client.Client, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	return gatewaytest.Call(t, c, tool, args)
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	return gatewaytest.Structured(t, res)
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

// pendingPin returns the withheld change of tool as the admin API shows it.
func (h *harness) pendingPin(service, tool string) admin.PinChange {
	h.t.Helper()
	code, body := h.Admin(http.MethodGet, "/admin/pins/"+service+"/"+tool, "")
	var reply admin.PinReply
	if err := json.Unmarshal(body, &reply); code != http.StatusOK || err != nil {
		h.t.Fatalf("pending change of %s/%s: HTTP %d %s", service, tool, code, body)
	}
	return reply.Pending
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
