package router

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

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
