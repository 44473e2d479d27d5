package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// TestGatewayRefusesNumbersBeyondSaneRange: a number literal that would
// make exact arithmetic expensive (1e-30000, 40 digits) is refused while
// the gateway parses the arguments, before the policy is asked and before
// the service sees the call.
func TestGatewayRefusesNumbersBeyondSaneRange(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "", "/mcp")
	for _, lit := range []string{"1e-30000", "-4E-400", strings.Repeat("7", 40)} {
		t.Run(lit, func(t *testing.T) {
			before := strings.Count(h.audit.String(), `"event":"decision"`)
			got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": json.Number(lit)})
			if !isErr || errCode(got) != toolerr.InvalidArgument || !strings.Contains(errMessage(got), "number") {
				t.Fatalf("want invalid_argument about the number, got %v", got)
			}
			if after := strings.Count(h.audit.String(), `"event":"decision"`); after != before {
				t.Error("the policy was asked about arguments the gateway should have refused")
			}
			if strings.Contains(h.logs.String(), `"tool":"demo_counter_add"`) {
				t.Error("the call reached the service")
			}
		})
	}
	// Ordinary numbers still pass.
	if got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": json.Number("5")}); isErr || got["status"] != "confirmation_required" {
		t.Fatalf("plain number refused: %v", got)
	}
}
