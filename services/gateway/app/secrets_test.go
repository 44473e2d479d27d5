package app_test

import (
	"strings"
	"testing"
)

// TestNoSecretLeaves plants known secret values in the service's upstream
// data, its errors and the gateway's own configuration, drives every kind
// of call, and scans everything a client saw plus every audit and log line.
func TestNoSecretLeaves(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "alice@example.org", "/mcp")

	got, isErr := call(t, c, "demo_config", map[string]any{})
	if isErr {
		t.Fatalf("demo_config: %v", got)
	}
	if got["api_key"] != "[REDACTED]" {
		t.Fatalf("api_key not redacted: %v", got)
	}
	if failed, isErr := call(t, c, "demo_fail", map[string]any{}); !isErr || errMessage(failed) != "internal error" {
		t.Fatalf("an internal error's text reached the client: %v", failed)
	}
	prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 2})
	call(t, c, "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": prev["ticket"]})
	call(t, c, "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": prev["ticket"]})
	h.post("/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo","arguments":{}}}`, nil)
	h.post("/mcp", `{bad json`, map[string]string{"Authorization": "Bearer " + h.tokens["hermes"] + "x"})

	secrets := map[string]string{
		"upstream api key":       upstreamKey,
		"service token":          serviceToken,
		"approval key":           approvalKey,
		"admin token":            adminToken,
		"client token":           h.tokens["openwebui"],
		"another client token":   h.tokens["hermes"],
		"read-only client token": h.tokens["kiosk"],
	}
	sinks := map[string]string{"responses": h.wire.String(), "audit": h.audit.String(), "logs": h.logs.String()}
	if !strings.Contains(sinks["audit"], `"event":"decision"`) || !strings.Contains(sinks["audit"], `"event":"outcome"`) {
		t.Fatalf("audit log is missing decisions or outcomes:\n%s", sinks["audit"])
	}
	if !strings.Contains(sinks["responses"], "demo_config") && !strings.Contains(sinks["responses"], "REDACTED") {
		t.Fatal("the wire log recorded nothing; the scan would prove nothing")
	}
	for sink, text := range sinks {
		for name, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains the %s", sink, name)
			}
		}
	}
}
