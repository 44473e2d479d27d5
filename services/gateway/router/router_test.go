package router

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestCheckEnvelope(t *testing.T) {
	cases := []struct {
		name string
		body string
		code int // 0: valid
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, 0},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, 0},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}`, 0},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`, 0},
		{"not JSON", `{"jsonrpc":`, -32700},
		{"empty", ``, -32700},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, -32700},
		{"string", `"x"`, -32600},
		{"null", `null`, -32600},
		{"empty batch", `[]`, -32600},
		{"batch with a bad member", `[{"jsonrpc":"2.0","id":1,"method":"ping"},5]`, -32600},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
		{"no version", `{"id":1,"method":"ping"}`, -32600},
		{"no method", `{"jsonrpc":"2.0","id":1}`, -32600},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkEnvelope([]byte(tc.body))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("valid message refused: %v", err)
				}
				return
			}
			var ee *envelopeError
			if !errors.As(err, &ee) || ee.code != tc.code {
				t.Fatalf("want %d, got %v", tc.code, err)
			}
		})
	}
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[]`, `{`, `[{"jsonrpc":"2.0","id":"x","result":1}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		msg, err := checkEnvelope([]byte(body))
		if err == nil {
			if !json.Valid([]byte(body)) {
				t.Fatalf("invalid JSON accepted: %q", body)
			}
			// A single message comes back as it parses on its own.
			var want *envelope
			if trimmed := strings.TrimSpace(body); trimmed[0] == '{' {
				want = new(envelope)
				if err := json.Unmarshal([]byte(trimmed), want); err != nil {
					t.Fatal(err)
				}
				want.body = []byte(trimmed) // kept for plainCall's duplicate check
			}
			if !reflect.DeepEqual(msg, want) {
				t.Fatalf("%q parsed as %+v, want %+v", body, msg, want)
			}
			return
		}
		var ee *envelopeError
		if !errors.As(err, &ee) || (ee.code != -32700 && ee.code != -32600) {
			t.Fatalf("unexpected error %v for %q", err, body)
		}
	})
}

func TestCapResult(t *testing.T) {
	text := strings.Repeat("aé€😀", 5000) // 1-, 2-, 3- and 4-byte runes
	small := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("ok")}, StructuredContent: map[string]any{"ok": true}}
	if got := capResult(small, 1024); got != small {
		t.Fatal("a small result was changed")
	}
	for _, max := range []int{100, 1001, 4096, 9999} {
		res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: map[string]any{"text": text}}
		got := capResult(res, max)
		out := got.Content[0].(mcp.TextContent).Text
		if !utf8.ValidString(out) || !strings.Contains(out, "[toolgate: truncated") {
			t.Fatalf("max %d: text not cut on a rune boundary with a marker", max)
		}
		if len(out) > max/2+200 {
			t.Fatalf("max %d: %d bytes of text left", max, len(out))
		}
		s, _ := got.StructuredContent.(map[string]any)
		if s["truncated"] != true {
			t.Fatalf("max %d: structured content does not say truncated: %v", max, got.StructuredContent)
		}
	}
}

func TestWithConfirmArgs(t *testing.T) {
	tool := mcp.NewToolWithRawSchema("demo_x", "Do x.", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`))
	got, err := withConfirmArgs(tool)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(got.RawInputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["confirm"]["type"] != "boolean" || schema.Properties["ticket"]["type"] != "string" ||
		schema.Properties["n"]["type"] != "integer" || schema.AdditionalProperties || len(schema.Required) != 1 {
		t.Fatalf("schema: %s", got.RawInputSchema)
	}
	// The flow, told briefly: a preview and a ticket first, confirm only
	// after the user agreed.
	if !strings.Contains(got.Description, "preview and a ticket") || !strings.Contains(schema.Properties["confirm"]["description"].(string), "user explicitly agreed") {
		t.Fatalf("the definition does not explain the flow: %s %s", got.Description, got.RawInputSchema)
	}
	clash := mcp.NewToolWithRawSchema("demo_y", "Y.", json.RawMessage(`{"type":"object","properties":{"ticket":{"type":"string"}},"additionalProperties":false}`))
	if _, err := withConfirmArgs(clash); err == nil {
		t.Fatal("a tool with its own ticket argument was accepted")
	}
}

func TestIsWriteIsConservative(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		tool mcp.Tool
		want bool
	}{
		{"read-only hint", mcp.Tool{Annotations: mcp.ToolAnnotation{ReadOnlyHint: &yes}}, false},
		{"no hints", mcp.Tool{}, true},
		{"read-only false", mcp.Tool{Annotations: mcp.ToolAnnotation{ReadOnlyHint: &no}}, true},
		{"declared write despite read-only hint", mcp.Tool{Annotations: mcp.ToolAnnotation{ReadOnlyHint: &yes},
			Meta: &mcp.Meta{AdditionalFields: map[string]any{"io.toolgate/write": true}}}, true},
	}
	for _, tc := range cases {
		if got := isWrite(tc.tool); got != tc.want {
			t.Errorf("%s: isWrite = %v", tc.name, got)
		}
	}
}
