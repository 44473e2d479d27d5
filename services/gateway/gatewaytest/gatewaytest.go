// Package gatewaytest runs a real gateway (embedded Rego policy, real
// tickets and approvals) in front of a service's tools over real HTTP, so a
// service's tests can drive its write flows exactly as a client would:
// preview, ticket, confirm, replay.
package gatewaytest

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/auth"
)

// Secrets the harness plants; Logs and Audit never contain them.
const (
	ServiceToken = "gatewaytest-service-token-SECRET-0001"
	ApprovalKey  = "gatewaytest-approval-key-SECRET-00000000002"
	AdminToken   = "gatewaytest-admin-token-SECRET-0003"
)

// Options describe the service behind the gateway.
type Options struct {
	// Service is the service's name as the policy data knows it ("arr").
	Service string
	// Tools are the service's tools (as its fx module would provide them).
	Tools []toolkit.Tool
	// AllowWrites is the service's own <NAME>_ALLOW_WRITES switch.
	AllowWrites bool
	// Secrets are upstream secrets the service's redactor masks.
	Secrets [][]byte
	// CallTimeout bounds each call at the gateway and the service (default 30s).
	CallTimeout time.Duration
	// Instructions are the service's own instructions (toolkit.Instructions).
	Instructions string
	// Limits are the service's toolkit.Limits (its module's defaults).
	Limits toolkit.Limits
	// PublicURL is the gateway's TOOLGATE_PUBLIC_URL (default: none).
	PublicURL string
	// Config and Build, when set, adjust the gateway's configuration and
	// build options (allowed origins, caps, a policy engine, a clock)
	// after the harness filled them in.
	Config func(*app.Config)
	Build  func(*app.Options)
}

// Gateway is a running gateway with one service behind it.
type Gateway struct {
	// URL is the gateway's base URL; clients use URL + "/mcp".
	URL string
	// AdminURL is the admin API's base URL.
	AdminURL string
	// Tokens maps client name to bearer token: "openwebui" and "hermes" are
	// in group users, "kiosk" in group readonly, "stranger" in group nobody
	// (which the policy allows nothing), "admin" in group admins (sees
	// every service).
	Tokens map[string]string
	// Logs collects the service's and the gateway's log lines.
	Logs *capture.Buffer
	// Audit collects the gateway's audit lines.
	Audit *capture.Buffer
	// Wire collects every response body a Client received.
	Wire *capture.Buffer
	// Instructions are what the last Client got at initialize.
	Instructions string
	// App is the gateway itself (router, tickets, pins).
	App *app.Gateway
	// ServiceURL is the service's base URL (its MCP endpoint is
	// ServiceURL + "/mcp"); the service answers only ServiceToken.
	ServiceURL string

	t       testing.TB
	opts    Options
	logger  *slog.Logger
	service *httptest.Server
	handler atomic.Pointer[http.Handler] // what the service's server runs
}

// Start runs the service's tools in a toolkit service and a gateway in front
// of it; both stop when the test ends.
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	if o.CallTimeout == 0 {
		o.CallTimeout = 30 * time.Second
	}
	g := &Gateway{t: t, opts: o, Tokens: map[string]string{}, Logs: &capture.Buffer{}, Audit: &capture.Buffer{}, Wire: &capture.Buffer{}}
	g.logger = slog.New(slog.NewJSONHandler(g.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var audit io.Writer = g.Audit
	if _, bench := t.(*testing.B); bench {
		// Benchmarks measure the gateway, not an ever-growing buffer.
		g.logger, audit = slog.New(slog.DiscardHandler), io.Discard
	}
	g.SetService(g.NewService(o.Tools).Handler())
	g.service = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*g.handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(g.service.Close)
	g.ServiceURL = g.service.URL

	tokens, bearer := ClientTokens(t, map[string][]string{"openwebui": {"users"}, "hermes": {"users"}, "kiosk": {"readonly"}, "stranger": {"nobody"}, "admin": {"admins"}})
	g.Tokens = bearer
	cfg := app.Config{
		Tokens: tokens, AdminToken: []byte(AdminToken), ApprovalKey: []byte(ApprovalKey),
		Services:   []app.ServiceConfig{{Name: o.Service, URL: g.service.URL + "/mcp", Token: []byte(ServiceToken)}},
		PolicyMode: "embedded", CallTimeout: o.CallTimeout, ServiceConcurrency: 8, PublicURL: o.PublicURL,
		Toolsets: app.DefaultToolsetsOf([]string{o.Service}),
	}
	build := app.Options{Logger: g.logger, Audit: audit}
	if o.Config != nil {
		o.Config(&cfg)
	}
	if o.Build != nil {
		o.Build(&build)
	}
	gw, err := app.Build(t.Context(), cfg, build)
	if err != nil {
		t.Fatalf("gatewaytest: gateway: %v", err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	g.App = gw
	gw.Router.RefreshAll(t.Context())
	pub := httptest.NewServer(gw.Public)
	t.Cleanup(pub.Close)
	adm := httptest.NewServer(gw.Admin)
	t.Cleanup(adm.Close)
	g.URL, g.AdminURL = pub.URL, adm.URL
	return g
}

// NewService builds a toolkit service named as the one behind the
// gateway, with its token, approval key, secrets and deadline, over tools;
// edits change its options further (other instructions, say).
func (g *Gateway) NewService(tools []toolkit.Tool, edits ...func(*toolkit.Options)) *toolkit.Service {
	g.t.Helper()
	o := g.opts
	key := []byte(ServiceApprovalKey(o.Service))
	secrets := append([][]byte{[]byte(ServiceToken), []byte(ApprovalKey), key}, o.Secrets...)
	opts := toolkit.Options{
		Name: o.Service, ServiceToken: []byte(ServiceToken), ApprovalKey: key,
		AllowWrites: o.AllowWrites, Redactor: redact.New(secrets...), Logger: g.logger, CallTimeout: o.CallTimeout,
		Instructions: o.Instructions, Limits: o.Limits,
	}
	for _, e := range edits {
		e(&opts)
	}
	svc, err := toolkit.New(opts, tools...)
	if err != nil {
		g.t.Fatalf("gatewaytest: service: %v", err)
	}
	return svc
}

// ServiceApprovalKey is service's own approval key: derived from
// ApprovalKey, the gateway's master key, as the gateway derives it.
func ServiceApprovalKey(service string) string {
	k, err := approval.ServiceKey([]byte(ApprovalKey), service)
	if err != nil {
		panic("gatewaytest: " + err.Error())
	}
	return string(k)
}

// SetService makes h answer at the service's address from now on: a
// restart with other tools, a service that fails. The gateway notices at
// its next refresh (App.Router.RefreshAll).
func (g *Gateway) SetService(h http.Handler) { g.handler.Store(&h) }

// RestartService makes h answer at the service's address as a restarted
// service would: the gateway's open session to it fails once, so the
// gateway reconnects and reads everything again (tools and instructions).
// It returns after the gateway's refresh.
func (g *Gateway) RestartService(h http.Handler) {
	g.t.Helper()
	var failed atomic.Bool
	g.SetService(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failed.CompareAndSwap(false, true) {
			http.Error(w, "restarting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	g.App.Router.RefreshAll(g.t.Context()) // fails: the session is dropped
	g.App.Router.RefreshAll(g.t.Context()) // a new session reads everything again
}

// Service returns what the service's address answers now.
func (g *Gateway) Service() http.Handler { return *g.handler.Load() }

// StopService closes the service's server, as a container that stopped.
func (g *Gateway) StopService() { g.service.Close() }

// ClientTokens creates a token for each client (name → groups) and returns
// the gateway's parsed tokens file and each client's bearer token. The
// clients name their end users in plain headers (user=headers), as
// Client does.
func ClientTokens(t testing.TB, clients map[string][]string) (*auth.Tokens, map[string]string) {
	t.Helper()
	bearer := map[string]string{}
	var lines []string
	for name, groups := range clients {
		tok, line, err := auth.NewToken(name, groups, auth.UserHeaders)
		if err != nil {
			t.Fatal(err)
		}
		bearer[name] = tok
		lines = append(lines, line)
	}
	tokens, err := auth.ParseTokens(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return tokens, bearer
}

// Client opens an initialized mcp-go client for clientName on the
// aggregate endpoint /mcp, as end user user ("" for none).
func (g *Gateway) Client(clientName, user string) *client.Client {
	g.t.Helper()
	return g.ClientAt(clientName, user, "/mcp")
}

// ClientAt is Client on another endpoint (/mcp/<service>), with mcp-go
// client options.
func (g *Gateway) ClientAt(clientName, user, path string, opts ...client.ClientOption) *client.Client {
	g.t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + g.Tokens[clientName]}
	if user != "" {
		hdr["X-OpenWebUI-User-Email"] = user
	}
	tr, err := transport.NewStreamableHTTP(g.URL+path, transport.WithHTTPBasicClient(RecordingClient(g.Wire, hdr)))
	if err != nil {
		g.t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	ctx := g.t.Context()
	if err := c.Start(ctx); err != nil {
		g.t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "gatewaytest", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		g.t.Fatalf("initialize: %v", err)
	}
	g.Instructions = res.Instructions
	g.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Call runs tool through c and returns its structured content and isError.
// A write called without confirm returns {"status":"confirmation_required",
// "ticket":..., "preview":..., "approval":"model"|"human", ...}; the same
// call with "confirm": true and "ticket" added applies it.
func Call(t testing.TB, c *client.Client, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return Structured(t, res), res.IsError
}

// With returns a copy of args with extra's entries added or replaced, so a
// test can confirm the exact call it previewed:
// With(args, map[string]any{"confirm": true, "ticket": ticket}).
func With(args, extra map[string]any) map[string]any {
	out := make(map[string]any, len(args)+len(extra))
	maps.Copy(out, args)
	maps.Copy(out, extra)
	return out
}

// Structured returns a result's structured content (or its JSON text) as
// a map.
func Structured(t testing.TB, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var raw []byte
	switch {
	case len(res.RawStructuredContent) > 0:
		raw = res.RawStructuredContent
	case res.StructuredContent != nil:
		raw, _ = json.Marshal(res.StructuredContent)
	default:
		for _, c := range res.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				raw = []byte(tc.Text)
				break
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("result is not a JSON object: %.300s", raw)
	}
	return m
}

// NoLeaks fails t when a credential shows up in the service's or the
// gateway's logs, the audit, or anything a Client received — or in extra
// places (name → text: an SDK client's wire, its logs). It checks the
// given secrets (an upstream's API key, credentials planted in a fake)
// and always the harness's own: the service token, the approval keys
// (master and the service's), the admin token and every client's bearer
// token.
func (g *Gateway) NoLeaks(t testing.TB, secrets []string, extra map[string]string) {
	t.Helper()
	all := append([]string{ServiceToken, ApprovalKey, ServiceApprovalKey(g.opts.Service), AdminToken}, secrets...)
	for _, tok := range g.Tokens {
		all = append(all, tok)
	}
	places := map[string]string{"logs": g.Logs.String(), "audit": g.Audit.String(), "wire": g.Wire.String()}
	for k, v := range extra {
		places[k] = v
	}
	toolkittest.NoLeaks(t, all, places)
}

// ErrorCode returns the stable error code of a failed call's content.
func ErrorCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// Approve approves a pending (human-approval) ticket through the admin API
// and returns the HTTP status.
func (g *Gateway) Approve(ticket string) int {
	g.t.Helper()
	return g.AdminPost("/admin/tickets/" + ticket + "/approve")
}

// AdminPost POSTs to the admin API with the admin token and returns the
// HTTP status.
func (g *Gateway) AdminPost(path string) int {
	g.t.Helper()
	status, _ := g.Admin(http.MethodPost, path, `{"by":"gatewaytest"}`)
	return status
}

// Admin sends one request to the admin API with the admin token and returns
// the HTTP status and body.
func (g *Gateway) Admin(method, path, body string) (int, []byte) {
	g.t.Helper()
	req, _ := http.NewRequestWithContext(g.t.Context(), method, g.AdminURL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// RecordingClient returns an HTTP client that sets hdr on every request and
// copies every response body into wire, so a test can search everything a
// client was sent (for secrets, say).
func RecordingClient(wire *capture.Buffer, hdr map[string]string) *http.Client {
	return &http.Client{Transport: &recorder{base: http.DefaultTransport, wire: wire, hdr: hdr}}
}

// recorder copies every response body into wire.
type recorder struct {
	base http.RoundTripper
	wire *capture.Buffer
	hdr  map[string]string
}

func (rt *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.hdr {
		r.Header.Set(k, v)
	}
	res, err := rt.base.RoundTrip(r)
	if err != nil || res.Body == nil {
		return res, err
	}
	res.Body = &tee{ReadCloser: res.Body, w: rt.wire}
	return res, nil
}

type tee struct {
	io.ReadCloser
	w *capture.Buffer
}

func (b *tee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		_, _ = b.w.Write(p[:n])
	}
	return n, err
}
