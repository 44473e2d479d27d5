package openapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/demo/counter"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/gateway/openapi"
)

// ticketRef marks a step's arguments that take the ticket of an earlier
// preview on the same side.
const ticketRef = "$ticket"

// The same calls, in the same order, against two identical gateways: one
// through MCP (mcp-go client), one through the OpenAPI tool server as
// OpenWebUI calls it. Every answer is the same object (tickets aside, which
// are random), failures carry the same code, and the OpenAPI status is the
// code's status.
func TestMCPAndOpenAPIAnswerAlike(t *testing.T) {
	steps := []struct {
		name string
		tool string
		args map[string]any
		ok   bool
	}{
		{"read", "demo_echo", map[string]any{"text": "hello"}, true},
		{"read without arguments", "demo_counter_get", map[string]any{}, true},
		{"schema violation at the service", "demo_echo", map[string]any{"text": ""}, false},
		{"unexpected argument", "demo_echo", map[string]any{"text": "x", "extra": 1}, false},
		{"write preview", "demo_counter_add", map[string]any{"amount": 2}, true},
		{"write confirm", "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": ticketRef}, true},
		{"replay", "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": ticketRef}, false},
		{"confirm without ticket", "demo_counter_add", map[string]any{"amount": 2, "confirm": true}, false},
		{"confirm with a made-up ticket", "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": "tkt_made_up"}, false},
		{"confirm must be a boolean", "demo_counter_add", map[string]any{"amount": 2, "confirm": "yes", "ticket": "tkt_x"}, false},
		{"out of range", "demo_counter_add", map[string]any{"amount": 500}, false},
		{"number literal beyond the gateway's limit", "demo_counter_add", map[string]any{"amount": json.Number("1e-30000")}, false},
		{"low-risk write applies at once", "demo_note_touch", map[string]any{"note": "n1"}, true},
		{"state after the writes", "demo_counter_get", map[string]any{}, true},
		{"human approval preview", "demo_counter_reset", map[string]any{}, true},
		{"pending", "demo_counter_reset", map[string]any{"confirm": true, "ticket": ticketRef}, true},
	}
	mcpSide, _ := demo(t)
	apiSide, _ := demo(t)
	mc := mcpSide.Client("openwebui", "alice@example.org")
	ts := openwebui(t, apiSide, "openwebui")
	var mcpTicket, apiTicket string
	for _, s := range steps {
		mArgs, aArgs := withTicket(s.args, mcpTicket), withTicket(s.args, apiTicket)
		mRes, mErr := gatewaytest.Call(t, mc, s.tool, mArgs)
		status, aRes := ts.Call(s.tool, aArgs)
		if tk, ok := mRes["ticket"].(string); ok && mRes["status"] == "confirmation_required" {
			mcpTicket = tk
		}
		if tk, ok := aRes["ticket"].(string); ok && aRes["status"] == "confirmation_required" {
			apiTicket = tk
		}
		if mErr == s.ok || (status < 400) != s.ok {
			t.Errorf("%s: MCP isError=%v, OpenAPI %d; want ok=%v\nMCP %v\nAPI %v", s.name, mErr, status, s.ok, mRes, aRes)
			continue
		}
		if !s.ok {
			if want := openapi.StatusOf(toolerr.Code(gatewaytest.ErrorCode(mRes))); status != want {
				t.Errorf("%s: status %d for code %s, want %d", s.name, status, gatewaytest.ErrorCode(mRes), want)
			}
		}
		if m, a := normalize(mRes, mcpTicket), normalize(aRes, apiTicket); !reflect.DeepEqual(m, a) {
			t.Errorf("%s: answers differ\nMCP     %s\nOpenAPI %s", s.name, m, a)
		}
	}
}

func withTicket(args map[string]any, ticket string) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		if v == ticketRef {
			v = ticket
		}
		out[k] = v
	}
	return out
}

var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// normalize replaces the side's random ticket and timestamps so two sides
// can be compared, and returns canonical JSON.
func normalize(m map[string]any, ticket string) string {
	b, _ := json.Marshal(m)
	s := string(b)
	if ticket != "" {
		s = strings.ReplaceAll(s, ticket, "TICKET")
	}
	return timestamp.ReplaceAllString(s, "TIME")
}

// Nothing secret crosses the OpenAPI front: not the service token, the
// approval key, the admin token, any client token or an upstream secret a
// tool result quotes; not in answers, documents, logs or audit lines.
func TestNoSecretInAnswersLogsOrAudit(t *testing.T) {
	const upstream = "upstream-apikey-SECRET-openapi-77"
	leaky := toolkit.Tool{
		Name: "demo_config", Description: "Show the upstream settings.",
		Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
		Read: func(context.Context, toolkit.Args) (any, error) {
			return map[string]any{"api_key": upstream, "url": "https://u:" + upstream + "@sonarr.lan/?apikey=" + upstream}, nil
		},
	}
	failing := toolkit.Tool{
		Name: "demo_fail", Description: "Fail quoting a secret.",
		Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Annotations: toolkit.Annotations{ReadOnly: true},
		Read: func(context.Context, toolkit.Args) (any, error) {
			return nil, fmt.Errorf("upstream said: bad key %s", upstream)
		},
	}
	g, _ := demo(t, func(o *gatewaytest.Options) {
		o.Tools = append(counter.New().Tools(), leaky, failing)
		o.Secrets = [][]byte{[]byte(upstream)}
	})
	ts := openwebui(t, g, "openwebui")
	if status, body := ts.Call("demo_config", nil); status != http.StatusOK || body["api_key"] == nil {
		t.Fatalf("config: %d %v", status, body)
	}
	if status, body := ts.Call("demo_fail", nil); status != http.StatusInternalServerError || gatewaytest.ErrorCode(body) != "internal" {
		t.Fatalf("fail: %d %v", status, body)
	}
	_, p := ts.Call("demo_counter_add", map[string]any{"amount": 1})
	ts.Call("demo_counter_add", map[string]any{"amount": 1, "confirm": true, "ticket": p["ticket"]})
	ts.Call("demo_counter_add", map[string]any{"amount": 1, "confirm": true, "ticket": p["ticket"]})
	rawPost(t, g, "openwebui", "/openapi/demo/demo_counter_add", `{"amount":`)
	rawRequest(t, g, "POST", "/openapi/demo/demo_echo", map[string]string{"Authorization": "Bearer tg_not_a_real_token"}, strings.NewReader(`{}`))

	secrets := map[string]string{
		"service token": gatewaytest.ServiceToken, "approval key": gatewaytest.ApprovalKey,
		"admin token": gatewaytest.AdminToken, "upstream secret": upstream, "made-up token": "tg_not_a_real_token",
	}
	for name, tok := range g.Tokens {
		secrets["client token of "+name] = tok
	}
	for what, text := range map[string]string{"answers": g.Wire.String(), "logs": g.Logs.String(), "audit": g.Audit.String()} {
		if text == "" && what != "logs" {
			t.Errorf("no %s recorded", what)
		}
		for name, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s contain the %s", what, name)
			}
		}
	}
}
