package toolkit_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolkit"
)

func FuzzServeMCP(f *testing.F) {
	var (
		mu     sync.Mutex
		echoes int64
	)
	opts := baseOptions(newFakeClock())
	svc, err := toolkit.New(opts, allTools(&echoes, &mu, &lightState{level: 10})...)
	if err != nil {
		f.Fatal(err)
	}
	h := svc.Handler()

	meta := modernMetaJSON(f, nil)
	metaWith := func(extra map[string]any) string { return modernMetaJSON(f, extra) }
	seeds := []struct{ body, version string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":"hi","count":2},"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_echo","arguments":{"text":5},"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"test_set_light","arguments":{"room":"hall","level":40},"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_set_light","arguments":{"room":"hall","level":40},"_meta":` +
			metaWith(map[string]any{approval.MetaApproval: "eyJ4IjoxfQ.AAAA"}) + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"test_panic","arguments":{},"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_nope","_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"test_echo","arguments":null,"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_echo","arguments":[1],"_meta":` + meta + `}}`, modernVersion},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "2025-11-25"},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "2025-11-25"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":`, ""},
		{`null`, modernVersion},
		{``, ""},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.version)
	}
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+string(serviceToken))
		if version != "" && !strings.ContainsAny(version, "\r\n\x00") {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		// Fill the modern routing headers from the body when it has them,
		// so inputs get past the transport checks.
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil {
			if m.Method != "" && !strings.ContainsAny(m.Method, "\r\n\x00") {
				req.Header.Set("Mcp-Method", m.Method)
			}
			if m.Params.Name != "" && !strings.ContainsAny(m.Params.Name, "\r\n\x00") {
				req.Header.Set("Mcp-Name", m.Params.Name)
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		if bytes.Contains(out, []byte(upstreamSecret)) {
			t.Fatalf("response leaks the secret: %s", out)
		}
		if rec.Code < 500 {
			return
		}
		var r rpcResponse
		if err := json.Unmarshal(out, &r); err != nil || r.Error == nil {
			t.Fatalf("status %d without a JSON-RPC error: %q", rec.Code, out)
		}
	})
}
