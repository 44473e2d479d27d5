package app_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/gateway/app"
)

// rawSession is a plain JSON-RPC client on a 2025-11-25 session: the shape
// of call the gateway serves on its direct path.
type rawSession struct {
	h          *harness
	path, id   string
	hdr        map[string]string
	nextCallID int
}

func (h *harness) rawSession(clientName, path string) *rawSession {
	h.t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + h.tokens[clientName]}
	res, body := h.post(path, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, hdr)
	id := res.Header.Get("Mcp-Session-Id")
	if id == "" {
		h.t.Fatalf("no session: %s", body)
	}
	hdr["Mcp-Session-Id"], hdr["MCP-Protocol-Version"] = id, "2025-11-25"
	h.post(path, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	return &rawSession{h: h, path: path, id: id, hdr: hdr}
}

// call sends tools/call; viaMCPGo adds a _meta parameter (trace
// context), which only mcp-go's path handles.
func (s *rawSession) call(tool string, args any, viaMCPGo bool) map[string]any {
	s.h.t.Helper()
	if viaMCPGo {
		return s.callWithMeta(tool, args, map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	}
	return s.callWithMeta(tool, args, nil)
}

// callWithMeta sends tools/call with meta as its _meta, if not nil.
func (s *rawSession) callWithMeta(tool string, args any, meta map[string]any) map[string]any {
	s.h.t.Helper()
	s.nextCallID++
	params := map[string]any{"name": tool, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.nextCallID, "method": "tools/call", "params": params})
	res, out := s.h.post(s.path, string(body), s.hdr)
	var msg map[string]any
	if res.StatusCode != 200 || json.Unmarshal(out, &msg) != nil {
		s.h.t.Fatalf("HTTP %d: %s", res.StatusCode, out)
	}
	delete(msg, "id")
	return msg
}

var volatile = regexp.MustCompile(`tkt_[a-z0-9]+|"expires_at":"[^"]*"|\\"expires_at\\":\\"[^"\\]*\\"|"(time|duration_ms)":[^,]*,`)

func normalized(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return volatile.ReplaceAllString(string(b), "…")
}

// TestDirectPathAnswersAndAuditsLikeMCPGo: every kind of call answers the
// client the same, and writes the same audit lines, whether the gateway
// serves it on its direct path (plain, or asking for progress as the
// TypeScript and Python SDKs do: the request id as an integer token) or
// through mcp-go.
func TestDirectPathAnswersAndAuditsLikeMCPGo(t *testing.T) {
	h := newHarness(t)
	// A gateway whose cap cuts a 100-character echo.
	small := newHarness(t, func(c *app.Config) { c.MaxResultBytes = 150 })
	cases := []struct {
		name, client, path, tool string
		args                     any
	}{
		{"read", "openwebui", "/mcp", "demo_echo", map[string]any{"text": "hi <b>&</b>"}},
		{"read on the service endpoint", "openwebui", "/mcp/demo", "demo_echo", map[string]any{"text": "hi"}},
		{"redacted read", "openwebui", "/mcp", "demo_config", map[string]any{}},
		{"failing read", "openwebui", "/mcp", "demo_fail", map[string]any{}},
		{"read over the cap", "openwebui", "/mcp/small", "demo_echo", map[string]any{"text": strings.Repeat("y", 100)}},
		{"arguments the service refuses", "openwebui", "/mcp", "demo_echo", map[string]any{"text": 5}},
		{"arguments not an object", "openwebui", "/mcp", "demo_echo", []any{1}},
		{"no arguments", "openwebui", "/mcp", "demo_echo", nil},
		{"number beyond the gateway's limit", "openwebui", "/mcp", "demo_counter_add", map[string]any{"amount": json.Number("1e-30000")}},
		{"preview of a write", "openwebui", "/mcp", "demo_counter_add", map[string]any{"amount": 3}},
		{"confirm without a ticket", "openwebui", "/mcp", "demo_counter_add", map[string]any{"amount": 3, "confirm": true}},
		{"a ticket that does not exist", "openwebui", "/mcp", "demo_counter_add", map[string]any{"amount": 3, "confirm": true, "ticket": "tkt_nosuch"}},
		{"tool hidden from a read-only client", "kiosk", "/mcp", "demo_counter_add", map[string]any{"amount": 1}},
		{"no rights at all", "stranger", "/mcp", "demo_echo", map[string]any{"text": "x"}},
		{"unknown tool", "openwebui", "/mcp", "demo_nosuch", map[string]any{}},
		{"tool of another endpoint", "openwebui", "/mcp/nosuch", "demo_echo", map[string]any{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path == "/mcp/nosuch" {
				res, _ := h.post(tc.path, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo","arguments":{}}}`, nil)
				if res.StatusCode != 404 {
					t.Fatalf("unknown endpoint: HTTP %d", res.StatusCode)
				}
				return
			}
			h := h
			if tc.path == "/mcp/small" {
				h, tc.path = small, "/mcp"
			}
			s := h.rawSession(tc.client, tc.path)
			before := len(h.audit.String())
			direct := normalized(t, s.call(tc.tool, tc.args, false))
			mid := len(h.audit.String())
			progress := normalized(t, s.callWithMeta(tc.tool, tc.args, map[string]any{"progressToken": s.nextCallID + 1}))
			mid2 := len(h.audit.String())
			viaMCPGo := normalized(t, s.call(tc.tool, tc.args, true))
			if direct != viaMCPGo || progress != viaMCPGo {
				t.Errorf("answers differ:\n direct   %s\n progress %s\n mcp-go   %s", direct, progress, viaMCPGo)
			}
			all := h.audit.String()
			a, p, b := volatile.ReplaceAllString(all[before:mid], "…"), volatile.ReplaceAllString(all[mid:mid2], "…"), volatile.ReplaceAllString(all[mid2:], "…")
			if a != b || p != b {
				t.Errorf("audit lines differ:\n direct   %s\n progress %s\n mcp-go   %s", a, p, b)
			}
			if tc.name == "read over the cap" && !strings.Contains(direct, "[toolgate: truncated") {
				t.Errorf("not cut: %s", direct)
			}
		})
	}
}

// TestConfirmOnTheDirectPath: the whole write flow on the direct path —
// preview, the ticket bound to the exact call, single use.
func TestConfirmOnTheDirectPath(t *testing.T) {
	h := newHarness(t)
	s := h.rawSession("openwebui", "/mcp")
	result := func(m map[string]any) map[string]any {
		r, _ := m["result"].(map[string]any)
		sc, _ := r["structuredContent"].(map[string]any)
		return sc
	}
	prev := result(s.call("demo_counter_add", map[string]any{"amount": 4}, false))
	ticket, _ := prev["ticket"].(string)
	if prev["status"] != "confirmation_required" || ticket == "" {
		t.Fatalf("preview: %v", prev)
	}
	if got := result(s.call("demo_counter_add", map[string]any{"amount": 5, "confirm": true, "ticket": ticket}, false)); got["error"] == nil {
		t.Fatalf("a ticket confirmed other arguments: %v", got)
	}
	before := h.demo.applied.Load()
	if got := result(s.call("demo_counter_add", map[string]any{"amount": 4, "confirm": true, "ticket": ticket}, false)); got["status"] != "applied" {
		t.Fatalf("confirm: %v", got)
	}
	if got := result(s.call("demo_counter_add", map[string]any{"amount": 4, "confirm": true, "ticket": ticket}, false)); got["error"] == nil {
		t.Fatalf("a ticket was used twice: %v", got)
	}
	if h.demo.applied.Load() != before+1 {
		t.Fatalf("applied %d times", h.demo.applied.Load()-before)
	}
}

// TestProgressCallsAnswerAsPlainCalls: through the real gateway and the
// demo service, a call that asks for progress (served on the direct path,
// router/direct_test.go) gets the very bytes and headers of the plain
// call, and what mcp-go answers a call with another _meta. (Previews and
// the rest: TestDirectPathAnswersAndAuditsLikeMCPGo.) (mcp-go writes
// a result's members in its own order where the direct path passes on the
// service's — "isError" before "structuredContent" — so with it the
// answers are equal as JSON; router/direct_test.go holds the progress
// call to mcp-go's answer to the very same request byte for byte.)
func TestProgressCallsAnswerAsPlainCalls(t *testing.T) {
	h := newHarness(t)
	cases := []struct{ name, client, tool, args string }{
		{"read", "openwebui", "demo_echo", `{"text":"hi <b>&</b> é"}`},
		{"redacted read", "openwebui", "demo_config", `{}`},
		{"failing read", "openwebui", "demo_fail", `{}`},
		{"arguments the service refuses", "openwebui", "demo_echo", `{"text":5}`},
		{"tool hidden from a read-only client", "kiosk", "demo_counter_add", `{"amount":1}`},
		{"unknown tool", "openwebui", "demo_nosuch", `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := h.rawSession(tc.client, "/mcp")
			post := func(meta string) (http.Header, string) {
				t.Helper()
				body := `{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":` + tc.args + meta + `}}`
				res, out := h.post(s.path, body, s.hdr)
				if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%s: HTTP %d %v: %s", meta, res.StatusCode, res.Header, out)
				}
				res.Header.Del("Date")
				return res.Header, string(out)
			}
			plainHdr, plain := post(``)
			for _, meta := range []string{`,"_meta":{"progressToken":41}`, `,"_meta":{"progressToken":"41"}`} {
				hdr, out := post(meta)
				if out != plain || !reflect.DeepEqual(hdr, plainHdr) {
					t.Fatalf("%s answers otherwise:\n %v %q\n %v %q", meta, hdr, out, plainHdr, plain)
				}
			}
			var a, b any
			_, viaMCPGo := post(`,"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`)
			if json.Unmarshal([]byte(plain), &a) != nil || json.Unmarshal([]byte(viaMCPGo), &b) != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("mcp-go answers otherwise:\n %q\n %q", viaMCPGo, plain)
			}
		})
	}
}
