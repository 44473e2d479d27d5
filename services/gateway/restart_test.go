package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/gateway/auth"
)

// restartRig is a real demo service and a real gateway process whose
// tickets live in a file, restarted as an upgrade or a crash would.
type restartRig struct {
	gateway, adminURL, url, token string
	adminToken                    string
	env                           []string
	proc                          *toolkittest.Process
	// owner is the top-level test: processes live until it ends, not
	// until the subtest that restarted them does.
	owner *testing.T
}

func newRestartRig(t *testing.T) *restartRig {
	gateway := toolkittest.Build(t, ".")
	demo := toolkittest.Build(t, "../demo")
	dir := t.TempDir()
	svcToken := toolkittest.SecretFile(t, "svc-token-0123456789abcdef")
	const master = "approval-key-0123456789abcdef0123456789"
	approvalKey := toolkittest.SecretFile(t, master)
	// The demo holds its own key, derived from the gateway's.
	demoKey, err := approval.ServiceKey([]byte(master), "demo")
	if err != nil {
		t.Fatal(err)
	}
	adminToken := toolkittest.SecretFile(t, "admin-token-0123456789abcdef")
	token, line, err := auth.NewToken("openwebui", []string{"users"}, auth.UserHeaders)
	if err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	demoAddr, gwAddr, adminAddr := toolkittest.FreeAddr(t), toolkittest.FreeAddr(t), toolkittest.FreeAddr(t)
	toolkittest.StartHealthy(t, demo, []string{"TOOLGATE_LISTEN=" + demoAddr, "TOOLGATE_SERVICE_TOKEN_FILE=" + svcToken,
		"TOOLGATE_APPROVAL_KEY_FILE=" + toolkittest.SecretFile(t, string(demoKey)), "DEMO_ALLOW_WRITES=true"})
	r := &restartRig{
		owner:   t,
		gateway: gateway, url: "http://" + gwAddr + "/mcp", adminURL: "http://" + adminAddr, token: token, adminToken: adminToken,
		env: []string{"TOOLGATE_LISTEN=" + gwAddr, "TOOLGATE_ADMIN_LISTEN=" + adminAddr,
			"TOOLGATE_CLIENT_TOKENS_FILE=" + tokens, "TOOLGATE_ADMIN_TOKEN_FILE=" + adminToken,
			"TOOLGATE_APPROVAL_KEY_FILE=" + approvalKey, "TOOLGATE_SERVICES=demo=http://" + demoAddr + "/mcp",
			"TOOLGATE_SERVICE_TOKEN_DEMO_FILE=" + svcToken, "TOOLGATE_TICKETS_FILE=" + filepath.Join(dir, "tickets.db")},
	}
	r.proc = toolkittest.StartHealthy(t, gateway, r.env)
	return r
}

// restart stops the gateway (gracefully, or killed like a crash) and
// starts it again on the same ticket file.
func (r *restartRig) restart(t *testing.T, crash bool) {
	t.Helper()
	if crash {
		r.proc.Kill(t)
	} else {
		r.proc.Terminate(t)
	}
	r.proc = toolkittest.StartHealthy(r.owner, r.gateway, r.env)
}

// call opens a fresh MCP session (the old one died with the process) and
// runs one tool call.
func (r *restartRig) call(t *testing.T, tool string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(r.url, transport.WithHTTPHeaders(map[string]string{
		"Authorization": "Bearer " + r.token, "X-OpenWebUI-User-Email": "ann@example.org"}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "restart-test", Version: "1"}
	if _, err := c.Initialize(t.Context(), init); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("call %s: %s", tool, raw)
	}
	return m, res.IsError
}

func (r *restartRig) counter(t *testing.T) float64 {
	t.Helper()
	m, isErr := r.call(t, "demo_counter_get", map[string]any{})
	v, ok := m["value"].(float64)
	if isErr || !ok {
		t.Fatalf("demo_counter_get: %v", m)
	}
	return v
}

func (r *restartRig) preview(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	m, isErr := r.call(t, tool, args)
	ticket, _ := m["ticket"].(string)
	if isErr || m["status"] != "confirmation_required" || ticket == "" {
		t.Fatalf("preview of %s: %v", tool, m)
	}
	return ticket
}

func withTicket(args map[string]any, ticket string) map[string]any {
	out := map[string]any{"confirm": true, "ticket": ticket}
	for k, v := range args {
		out[k] = v
	}
	return out
}

func TestTicketsSurviveAGatewayRestart(t *testing.T) {
	r := newRestartRig(t)
	add := map[string]any{"amount": 2}

	t.Run("confirm, restart, replay is refused", func(t *testing.T) {
		before := r.counter(t)
		ticket := r.preview(t, "demo_counter_add", add)
		if m, isErr := r.call(t, "demo_counter_add", withTicket(add, ticket)); isErr || m["status"] != "applied" {
			t.Fatalf("confirm: %v", m)
		}
		r.restart(t, true)
		m, isErr := r.call(t, "demo_counter_add", withTicket(add, ticket))
		if !isErr || !strings.Contains(toJSON(m), "already used") {
			t.Fatalf("replay after a restart: %v", m)
		}
		if got := r.counter(t); got != before+2 {
			t.Errorf("counter %v, want %v: applied more than once", got, before+2)
		}
	})

	t.Run("preview, restart, confirm applies once", func(t *testing.T) {
		before := r.counter(t)
		ticket := r.preview(t, "demo_counter_add", add)
		r.restart(t, false)
		if m, isErr := r.call(t, "demo_counter_add", withTicket(add, ticket)); isErr || m["status"] != "applied" {
			t.Fatalf("confirm after a restart: %v", m)
		}
		if m, isErr := r.call(t, "demo_counter_add", withTicket(add, ticket)); !isErr {
			t.Fatalf("second confirm: %v", m)
		}
		if got := r.counter(t); got != before+2 {
			t.Errorf("counter %v, want %v", got, before+2)
		}
	})

	t.Run("pending, restart, approve applies", func(t *testing.T) {
		if r.counter(t) == 0 {
			t.Fatal("the counter should not be zero here")
		}
		ticket := r.preview(t, "demo_counter_reset", map[string]any{})
		r.restart(t, true)
		if m, _ := r.call(t, "demo_counter_reset", withTicket(map[string]any{}, ticket)); m["status"] != "pending" {
			t.Fatalf("confirm before approval: %v", m)
		}
		approve := exec.Command(r.gateway, "approvals", "approve", ticket)
		approve.Env = []string{"TOOLGATE_ADMIN_URL=" + r.adminURL, "TOOLGATE_ADMIN_TOKEN_FILE=" + r.adminToken}
		if out, err := approve.CombinedOutput(); err != nil {
			t.Fatalf("approve after a restart: %v\n%s", err, out)
		}
		if m, isErr := r.call(t, "demo_counter_reset", withTicket(map[string]any{}, ticket)); isErr || m["status"] != "applied" {
			t.Fatalf("confirm after approval: %v", m)
		}
		if got := r.counter(t); got != 0 {
			t.Errorf("counter %v after reset", got)
		}
	})
}

func TestGatewayRefusesToStartOnACorruptTicketFile(t *testing.T) {
	gateway := toolkittest.Build(t, ".")
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, nil, 0o600)
	bad := filepath.Join(dir, "tickets.db")
	os.WriteFile(bad, []byte(strings.Repeat("not a ticket file ", 1000)), 0o600)
	cmd := exec.Command(gateway)
	cmd.Env = []string{"TOOLGATE_LISTEN=" + toolkittest.FreeAddr(t), "TOOLGATE_ADMIN_LISTEN=" + toolkittest.FreeAddr(t),
		"TOOLGATE_CLIENT_TOKENS_FILE=" + tokens, "TOOLGATE_APPROVAL_KEY_FILE=" + toolkittest.SecretFile(t, "approval-key-0123456789abcdef0123456789"),
		"TOOLGATE_TICKETS_FILE=" + bad}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("started on a corrupt ticket file")
	}
	for _, want := range []string{bad, "corrupt", "move the file aside"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("start-up error does not say %q:\n%s", want, out)
		}
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
