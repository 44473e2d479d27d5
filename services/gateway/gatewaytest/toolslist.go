package gatewaytest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// ToolsListSize returns the size in bytes of the tools/list result (the
// JSON-RPC result, compacted) that clientName's MCP client receives at
// path, and the tool names in it: what a catalog budget is measured on.
// It speaks the protocol by hand so nothing a client library adds or
// drops changes the figure.
func (g *Gateway) ToolsListSize(clientName, path string) (int, []string) {
	t := g.t
	t.Helper()
	post := func(sid, body string) (*http.Response, []byte) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, g.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+g.Tokens[clientName])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		// A streamable HTTP answer may come as one SSE event.
		for _, line := range bytes.Split(b, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				return resp, bytes.TrimSpace(rest)
			}
		}
		return resp, b
	}
	resp, body := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"budget","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("%s: initialize: %s", path, body)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, body = post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || len(msg.Result) == 0 {
		t.Fatalf("%s: tools/list: %.300s", path, body)
	}
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	_ = json.Unmarshal(msg.Result, &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	compact := &bytes.Buffer{}
	if err := json.Compact(compact, msg.Result); err != nil {
		t.Fatal(err)
	}
	return compact.Len(), names
}
