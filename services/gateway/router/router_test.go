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
