package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
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

// TestEveryIDFormAnswersAlikeOnEveryPath: a request id some JSON decoder
// would alter (a fraction, an exponent, an integer beyond 2^53, a number
// beyond float64 such as 1e400) is refused before anything runs, on the
// direct path and through mcp-go alike; any other id comes back as the
// same JSON value on both, and the call runs once.
func TestEveryIDFormAnswersAlikeOnEveryPath(t *testing.T) {
	h := newHarness(t)
	cases := []struct {
		id    string
		exact bool
	}{
		{`7`, true},
		{`0`, true},
		{`-12`, true},
		{`9007199254740991`, true},
		{`-9007199254740991`, true},
		{`"a-1"`, true},
		{`"\u00e9 é"`, true},
		{`9007199254740992`, false},
		{`12345678901234567890123`, false},
		{`1e400`, false},
		{`1.5`, false},
		{`1e2`, false},
		{`-0.0`, false},
		{`-0`, true},
		{`1.0`, false},
		{`-12345678901234567890123`, false},
		{`-9007199254740992`, false},
		{`"\u0000"`, true},
		{`"a\nb\u001f\t"`, true},
		{`"\ud800"`, true},
		{`""`, true},
	}
	for _, tc := range cases {
		for _, viaMCPGo := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/mcp-go=%t", tc.id, viaMCPGo), func(t *testing.T) {
				s := h.rawSession("openwebui", "/mcp")
				meta := ""
				if viaMCPGo {
					meta = `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},`
				}
				before := h.demo.applied.Load()
				res, body := h.post(s.path, `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"tools/call","params":{`+meta+`"name":"demo_note_touch","arguments":{"note":"id"}}}`, s.hdr)
				applied := h.demo.applied.Load() - before
				if !tc.exact {
					if res.StatusCode != http.StatusBadRequest || rpcError(t, body) != -32600 || applied != 0 {
						t.Fatalf("HTTP %d, %d applied: %s", res.StatusCode, applied, body)
					}
					return
				}
				var got struct {
					ID     any             `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if res.StatusCode != http.StatusOK || json.Unmarshal(body, &got) != nil || applied != 1 {
					t.Fatalf("HTTP %d, %d applied: %s", res.StatusCode, applied, body)
				}
				var sent any
				if err := json.Unmarshal([]byte(tc.id), &sent); err != nil || !reflect.DeepEqual(got.ID, sent) {
					t.Fatalf("id %s came back as %v", tc.id, got.ID)
				}
			})
		}
	}
}
