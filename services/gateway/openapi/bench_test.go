package openapi_test

import (
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/demo/counter"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// BenchmarkReadCall compares one read through the OpenAPI front with the
// same read through MCP (mcp-go client, session), same gateway, same run:
// read the ratio, not the absolute numbers.
func BenchmarkReadCall(b *testing.B) {
	g := gatewaytest.Start(b, gatewaytest.Options{Service: "demo", Tools: counter.New().Tools()})
	args := map[string]any{"text": "hello"}
	b.Run("mcp", func(b *testing.B) {
		c := g.Client("openwebui", "")
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "demo_echo", args
		for b.Loop() {
			if res, err := c.CallTool(b.Context(), req); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
	b.Run("openapi", func(b *testing.B) {
		ts := gatewaytest.NewToolServer(b, g.URL+"/openapi/demo", &http.Client{Transport: &bearer{g.Tokens["openwebui"]}})
		ts.Load()
		for b.Loop() {
			if status, _ := ts.Call("demo_echo", args); status != http.StatusOK {
				b.Fatal(status)
			}
		}
	})
}

type bearer struct{ token string }

func (t *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}
