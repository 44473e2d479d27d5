package router

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
)

// serviceResult is what a toolkit service sends for a read of n items.
func serviceResult(tb testing.TB, n int) json.RawMessage {
	tb.Helper()
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"id": i, "title": fmt.Sprintf("Series <%d> & friends", i), "path": "/tv/" + strings.Repeat("x", 20), "monitored": i%2 == 0}
	}
	res, err := toolkit.Success(map[string]any{"items": items, "total": n}, 0)
	if err != nil {
		tb.Fatal(err)
	}
	res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "arr"}}}
	b, err := json.Marshal(res)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func BenchmarkResultToClient(b *testing.B) {
	for _, n := range []int{1, 50, 500} {
		raw := serviceResult(b, n)
		b.Run(fmt.Sprintf("passthrough/%dB", len(raw)), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := mcpwire.Pass(raw, 512<<10); !ok {
					b.Fatal("not passed through")
				}
			}
		})
		b.Run(fmt.Sprintf("decode-encode/%dB", len(raw)), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			r := &Router{cfg: Config{MaxResultBytes: 512 << 10}}
			for b.Loop() {
				var res mcp.CallToolResult
				if err := json.Unmarshal(raw, &res); err != nil {
					b.Fatal(err)
				}
				out, _ := r.clean(&res)
				if _, err := json.Marshal(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
