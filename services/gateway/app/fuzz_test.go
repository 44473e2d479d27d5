package app_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzGatewayMCP posts arbitrary bodies to the gateway's MCP endpoint as an
// authenticated client: nothing may panic, and every answer is a client
// error or a success, never a server error.
func FuzzGatewayMCP(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"demo_counter_add","arguments":{"amount":1,"confirm":true,"ticket":"tkt_x"}}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":6,"result":{}}`,
		`{`, `null`, `[]`, `"x"`, ``,
	} {
		f.Add(seed)
	}
	h := newHarness(f)
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+h.tokens["openwebui"])
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		rec := httptest.NewRecorder()
		h.gw.Public.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("HTTP %d for %q: %s", rec.Code, body, rec.Body.String())
		}
	})
}
