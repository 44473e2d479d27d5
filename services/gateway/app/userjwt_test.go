package app_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

const owuiJWTSecret = "openwebui-forward-jwt-secret-0123456789abcdef"

// recordingPolicy is the real embedded policy that remembers its inputs.
type recordingPolicy struct {
	policy.Engine
	mu     sync.Mutex
	inputs []policy.Input
}

func (p *recordingPolicy) Decide(ctx context.Context, in policy.Input) (policy.Decision, error) {
	p.mu.Lock()
	p.inputs = append(p.inputs, in)
	p.mu.Unlock()
	return p.Engine.Decide(ctx, in)
}

func (p *recordingPolicy) calls() []policy.Input {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []policy.Input
	for _, in := range p.inputs {
		if in.Action == policy.ActionCall {
			out = append(out, in)
		}
	}
	return out
}

// mintOpenWebUI mints a user token as OpenWebUI does (PyJWT, HS256, its
// claims and key order, 300 s lifetime).
func mintOpenWebUI(t *testing.T, h *harness, email, role string) string {
	t.Helper()
	now := h.clock.Now().Unix()
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(
		`{"sub":"u-%s","email":%q,"name":"Ann","role":%q,"iss":"open-webui","iat":%d,"exp":%d}`, role, email, role, now, now+300)))
	m := hmac.New(sha256.New, []byte(owuiJWTSecret))
	m.Write([]byte(head + "." + body))
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (h *harness) jwtClient(bearer, userJWT string) *client.Client {
	h.t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + bearer}
	if userJWT != "" {
		hdr["X-OpenWebUI-User-Jwt"] = userJWT
	}
	tr, err := transport.NewStreamableHTTP(h.URL+"/mcp", transport.WithHTTPBasicClient(gatewaytest.RecordingClient(h.wire, hdr)))
	if err != nil {
		h.t.Fatal(err)
	}
	c := client.NewClient(tr)
	if err := c.Start(h.t.Context()); err != nil {
		h.t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "openwebui", Version: "1"}
	if _, err := c.Initialize(h.t.Context(), req); err != nil {
		h.t.Fatalf("initialize: %v", err)
	}
	h.t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestVerifiedOpenWebUIUserReachesPolicyAuditAndTicket(t *testing.T) {
	embedded, err := policy.NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingPolicy{Engine: embedded}
	owuiBearer, line, err := auth.NewToken("owui", []string{"users"}, auth.UserJWT)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *app.Config) {
		tokens, err := auth.ParseTokens(strings.NewReader(line))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = tokens
		c.UserTokens = auth.UserTokens{Secret: []byte(owuiJWTSecret)}
	}, func(o *app.Options) { o.Policy = rec })

	admin := h.jwtClient(owuiBearer, mintOpenWebUI(t, h, "ann@example.org", "admin"))
	args := map[string]any{"amount": 3}
	m, isErr := call(t, admin, "demo_counter_add", args)
	ticket, _ := m["ticket"].(string)
	if isErr || ticket == "" {
		t.Fatalf("preview: %v", m)
	}
	in := rec.calls()
	if last := in[len(in)-1]; last.User != "ann@example.org" || last.UserRole != "admin" || last.Client.Name != "owui" {
		t.Fatalf("policy input user %q role %q client %q", last.User, last.UserRole, last.Client.Name)
	}
	if !strings.Contains(h.audit.String(), `"user":"ann@example.org","user_role":"admin"`) {
		t.Errorf("audit lines lack the verified user and role:\n%s", h.audit.String())
	}
	if got, _ := h.gw.Tickets.Get(ticket); got.User != "ann@example.org" || got.UserRole != "admin" {
		t.Errorf("ticket bound to %q/%q", got.User, got.UserRole)
	}

	// The same person with another role (demoted in OpenWebUI since the
	// preview) cannot confirm the ticket; nothing is consumed.
	demoted := h.jwtClient(owuiBearer, mintOpenWebUI(t, h, "ann@example.org", "user"))
	confirm := map[string]any{"amount": 3, "confirm": true, "ticket": ticket}
	if m, isErr := call(t, demoted, "demo_counter_add", confirm); !isErr || !strings.Contains(fmt.Sprint(m), "does not match") {
		t.Fatalf("confirm with another role: %v", m)
	}
	// Another OpenWebUI user cannot either.
	bob := h.jwtClient(owuiBearer, mintOpenWebUI(t, h, "bob@example.org", "admin"))
	if _, isErr := call(t, bob, "demo_counter_add", confirm); !isErr {
		t.Fatal("another user confirmed Ann's ticket")
	}
	if m, isErr := call(t, admin, "demo_counter_add", confirm); isErr || m["status"] != "applied" {
		t.Fatalf("confirm by the user the ticket is bound to: %v", m)
	}

	// The shipped data gives OpenWebUI's pending users nothing.
	pending := h.jwtClient(owuiBearer, mintOpenWebUI(t, h, "new@example.org", "pending"))
	list, err := pending.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 0 {
		t.Fatalf("a pending OpenWebUI user sees %d tools (%v)", len(list.Tools), err)
	}
	if n := len(rec.calls()); n == 0 || rec.calls()[n-1].UserRole == "pending" {
		t.Fatal("a hidden tool was decided as a call")
	}
	// Without a user token OpenWebUI can still list the tools (it reads
	// tool lists and OpenAPI documents without one), but no call runs.
	anonymous := h.jwtClient(owuiBearer, "")
	if list, err := anonymous.ListTools(t.Context(), mcp.ListToolsRequest{}); err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list without a user token: %v", err)
	}
	before := h.demo.applied.Load()
	if m, isErr := call(t, anonymous, "demo_echo", map[string]any{"text": "hi"}); !isErr || !strings.Contains(fmt.Sprint(m), "missing end-user token X-OpenWebUI-User-Jwt") {
		t.Fatalf("a call without a user token: %v", m)
	}
	if m, isErr := call(t, anonymous, "demo_counter_add", confirm); !isErr || h.demo.applied.Load() != before {
		t.Fatalf("a confirm without a user token: %v", m)
	}
	// The same over OpenAPI: the document, yes; a call, no.
	openapiReq := func(method, path, body string, hdr map[string]string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), method, h.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+owuiBearer)
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if status, body := openapiReq(http.MethodGet, "/openapi/demo/openapi.json", "", nil); status != http.StatusOK || !strings.Contains(body, "demo_echo") {
		t.Fatalf("OpenAPI document without a user token: %d %.200s", status, body)
	}
	if status, body := openapiReq(http.MethodPost, "/openapi/demo/demo_echo", `{"text":"hi"}`, nil); status != http.StatusForbidden || !strings.Contains(body, "missing end-user token") {
		t.Fatalf("OpenAPI call without a user token: %d %s", status, body)
	}
	if status, body := openapiReq(http.MethodPost, "/openapi/demo/demo_echo", `{"text":"hi"}`,
		map[string]string{"X-OpenWebUI-User-Jwt": mintOpenWebUI(t, h, "ann@example.org", "user")}); status != http.StatusOK || !strings.Contains(body, `"hi"`) {
		t.Fatalf("OpenAPI call with a user token: %d %s", status, body)
	}
	raw, _ := json.Marshal(h.audit.String())
	if strings.Contains(string(raw), owuiJWTSecret) || strings.Contains(h.logs.String(), owuiJWTSecret) {
		t.Error("the JWT secret reached a log")
	}
}
