package app_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/app"
)

func TestLowRiskWriteNeedsNoTicket(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "", "/mcp")
	got, isErr := call(t, c, "demo_note_touch", map[string]any{"note": "hello"})
	if isErr || got["status"] != "applied" || h.demo.note.Load() != "hello" || h.demo.applied.Load() != 1 {
		t.Fatalf("low-risk write: %v", got)
	}
	// A read-only group still may not: the tool does not exist for it.
	res, err := h.client("kiosk", "", "/mcp").CallTool(t.Context(), callReq("demo_note_touch", map[string]any{"note": "x"}))
	if (err == nil && !res.IsError) || h.demo.note.Load() != "hello" {
		t.Fatalf("read-only client wrote: %v %v", res, err)
	}
}

func TestResultByteCap(t *testing.T) {
	h := newHarness(t, func(c *app.Config) { c.MaxResultBytes = 8 << 10 })
	res, err := h.client("openwebui", "", "/mcp").CallTool(t.Context(), callReq("demo_big", map[string]any{"kib": 64}))
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if len(text) > 8<<10 || !strings.Contains(text, "[toolgate: truncated") || !utf8.ValidString(text) {
		t.Fatalf("result not capped on a UTF-8 boundary with a marker: %d bytes, valid=%v", len(text), utf8.ValidString(text))
	}
	got := structured(t, res)
	if got["truncated"] != true {
		t.Fatalf("structured content does not say truncated: %v", got)
	}
}

func TestCallDeadline(t *testing.T) {
	h := newHarness(t, func(c *app.Config) { c.CallTimeout = 300 * time.Millisecond })
	got, isErr := call(t, h.client("openwebui", "", "/mcp"), "demo_slow", map[string]any{})
	if !isErr || errCode(got) != toolerr.Timeout {
		t.Fatalf("want timeout, got %v", got)
	}
	close(h.demo.slow)
}

func TestServiceConcurrencyBound(t *testing.T) {
	// The slow call must outlive the search for "busy", even on a loaded
	// machine: a long call deadline, and the slow tool waits until released.
	h := newHarness(t, func(c *app.Config) { c.ServiceConcurrency, c.CallTimeout = 1, time.Minute })
	c := h.client("openwebui", "", "/mcp")
	go func() {
		_, _ = c.CallTool(context.WithoutCancel(t.Context()), callReq("demo_slow", map[string]any{}))
	}()
	// Only once the slow call holds the one slot may the other client try:
	// an echo that took the slot first would make the slow call "busy".
	deadline := time.Now().Add(30 * time.Second)
	for h.demo.inSlow.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slow call never reached the service")
		}
		time.Sleep(10 * time.Millisecond)
	}
	other := h.client("hermes", "", "/mcp")
	got, isErr := call(t, other, "demo_echo", map[string]any{"text": "x"})
	if !isErr || errCode(got) != toolerr.Busy {
		t.Fatalf("a second call while the only slot is held: %v", got)
	}
	close(h.demo.slow)
}

func TestMetricsCountCallsAndTickets(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "", "/mcp")
	call(t, c, "demo_echo", map[string]any{"text": "x"})
	prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 1})
	call(t, c, "demo_counter_add", map[string]any{"amount": 1, "confirm": true, "ticket": prev["ticket"]})
	res, err := http.Get(h.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`toolgate_calls_total{decision="allow",outcome="ok",service="demo",tool="demo_echo"} 1`,
		`toolgate_calls_total{decision="confirm",outcome="preview",service="demo",tool="demo_counter_add"} 1`,
		`toolgate_calls_total{decision="confirm",outcome="ok",service="demo",tool="demo_counter_add"} 1`,
		`toolgate_tickets_total{event="issued"} 1`,
		`toolgate_tickets_total{event="confirmed"} 1`,
		`toolgate_service_up{service="demo"} 1`,
		`toolgate_call_duration_seconds_count{service="demo"} 3`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestToolListChanged: a service that announces a new tool list is
// re-read at once, without waiting for the periodic refresh.
func TestToolListChanged(t *testing.T) {
	upstream := server.NewMCPServer("extra", "1", server.WithToolCapabilities(true))
	ro := true
	tool := func(name string) mcp.Tool {
		tl := mcp.NewToolWithRawSchema(name, "A tool.", []byte(`{"type":"object","additionalProperties":false}`))
		tl.Annotations = mcp.ToolAnnotation{ReadOnlyHint: &ro, DestructiveHint: new(bool), IdempotentHint: &ro, OpenWorldHint: new(bool)}
		return tl
	}
	handler := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	upstream.AddTool(tool("demo_first"), handler)
	srv := newAuthedMCPServer(t, upstream)
	h := newHarness(t, func(c *app.Config) {
		c.Services = []app.ServiceConfig{{Name: "demo", URL: srv + "/mcp", Token: []byte(serviceToken)}}
	})
	c := h.client("openwebui", "", "/mcp")
	upstream.AddTool(tool("demo_second"), handler) // mcp-go sends notifications/tools/list_changed
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new tool never appeared: %v", res.Tools)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func callReq(tool string, args map[string]any) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return req
}
