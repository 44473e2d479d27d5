package gatewaytest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolkit"

	"github.com/toolgate/toolgate/services/demo/counter"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// The harness runs the whole write flow: a preview and ticket first, the
// confirm applies once, a replay is refused.
func TestHarnessRunsTheWriteFlow(t *testing.T) {
	state := counter.New()
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "demo", Tools: state.Tools(), AllowWrites: true})
	c := g.Client("openwebui", "ann@example.org")

	prev, isErr := gatewaytest.Call(t, c, "demo_counter_add", map[string]any{"amount": 3})
	if isErr || prev["status"] != "confirmation_required" || state.Value() != 0 {
		t.Fatalf("preview: %v (value %d)", prev, state.Value())
	}
	args := map[string]any{"amount": 3, "confirm": true, "ticket": prev["ticket"]}
	if done, isErr := gatewaytest.Call(t, c, "demo_counter_add", args); isErr || state.Value() != 3 {
		t.Fatalf("confirm: %v (value %d)", done, state.Value())
	}
	again, isErr := gatewaytest.Call(t, c, "demo_counter_add", args)
	if !isErr || gatewaytest.ErrorCode(again) != "forbidden" || state.Value() != 3 {
		t.Fatalf("replay: %v (value %d)", again, state.Value())
	}

	// Human approval goes through the admin API.
	prev, _ = gatewaytest.Call(t, c, "demo_counter_reset", map[string]any{})
	if prev["approval"] != "human" {
		t.Fatalf("reset preview: %v", prev)
	}
	if code := g.Approve(prev["ticket"].(string)); code != 200 {
		t.Fatalf("approve: HTTP %d", code)
	}
	if done, isErr := gatewaytest.Call(t, c, "demo_counter_reset", map[string]any{"confirm": true, "ticket": prev["ticket"]}); isErr || state.Value() != 0 {
		t.Fatalf("reset: %v (value %d)", done, state.Value())
	}
	g.NoLeaks(t, nil, nil)
}

// An image result crosses the gateway as MCP image content.
func TestImageCrossesTheGateway(t *testing.T) {
	pic := []byte("\xff\xd8\xff\xe0 not really a jpeg")
	tool := toolkit.Tool{
		Name: "demo_picture", Description: "Return a picture.",
		Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
		Annotations: toolkit.Annotations{ReadOnly: true},
		Read: func(context.Context, toolkit.Args) (any, error) {
			return &toolkit.Image{MIMEType: "image/jpeg", Data: pic, Details: map[string]any{"camera": "door"}}, nil
		},
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "demo", Tools: []toolkit.Tool{tool}})
	req := mcp.CallToolRequest{}
	req.Params.Name = "demo_picture"
	res, err := g.Client("openwebui", "").CallTool(t.Context(), req)
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	var got []byte
	for _, c := range res.Content {
		if img, ok := c.(mcp.ImageContent); ok && img.MIMEType == "image/jpeg" {
			got, _ = base64.StdEncoding.DecodeString(img.Data)
		}
	}
	if string(got) != string(pic) {
		t.Fatalf("image content lost: %+v", res.Content)
	}
}

// A service's own instructions reach the client through the gateway, once,
// without the toolkit's untrusted-data note repeated.
func TestServiceInstructionsCrossTheGateway(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "demo", Tools: counter.New().Tools(), Instructions: "Count gently."})
	g.Client("openwebui", "")
	if !strings.Contains(g.Instructions, "demo: Count gently.") || strings.Contains(g.Instructions, toolkit.UntrustedNote) {
		t.Fatalf("instructions: %q", g.Instructions)
	}
	if !strings.HasPrefix(g.Instructions, "toolgate offers home-lab tools") {
		t.Fatalf("the gateway's own instructions are missing: %q", g.Instructions)
	}
	// The same through a session-era initialize on the per-service endpoint.
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, g.URL+"/mcp/demo", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+g.Tokens["openwebui"])
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(raw), "demo: Count gently.") {
		t.Fatalf("initialize on /mcp/demo: %s", raw)
	}
}
