package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func TestSessionFlowAgainstMCPGoServer(t *testing.T) {
	tests := []struct {
		name        string
		opts        []server.StreamableHTTPOption
		wantSession bool
	}{
		{name: "stateful", opts: []server.StreamableHTTPOption{server.WithStateful(true)}, wantSession: true},
		{name: "stateless", opts: []server.StreamableHTTPOption{server.WithStateLess(true)}, wantSession: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, rec := newMCPGateway(t, nil, tc.opts...)
			br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})

			version := br.initialize()
			br.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			list := br.next()
			if idOf(list) != "2" || list.Error != nil {
				t.Fatalf("tools/list answer = %s", list.raw)
			}
			var tools struct {
				Tools []struct {
					Name        string             `json:"name"`
					Annotations mcp.ToolAnnotation `json:"annotations"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(list.Result, &tools); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, tool := range tools.Tools {
				if tool.Name == "echo" {
					found = true
					if a := tool.Annotations; a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint {
						t.Errorf("echo annotations = %+v, want read-only, not destructive", a)
					}
				}
			}
			if !found {
				t.Fatalf("tools/list lacks echo: %s", list.raw)
			}

			br.send(`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`)
			call := br.next()
			if idOf(call) != `"three"` {
				t.Fatalf("tools/call answer has id %s, want \"three\"", call.ID)
			}
			if got := toolText(t, call); got != "hello" {
				t.Errorf("echo returned %q, want hello", got)
			}

			if rest := br.finish(); len(rest) != 0 {
				t.Errorf("unexpected extra stdout lines: %q", rest)
			}

			// The notification went out before the request that followed it.
			var order []string
			for _, r := range rec.requests() {
				if r.httpMethod == http.MethodPost {
					order = append(order, r.rpcMethod)
				}
			}
			want := []string{"initialize", "notifications/initialized", "tools/list", "tools/call"}
			if fmt.Sprint(order) != fmt.Sprint(want) {
				t.Errorf("gateway saw %v, want %v", order, want)
			}

			init, _ := rec.find("initialize")
			if init.header.Get(mcp.HeaderSessionID) != "" || init.header.Get(mcp.HeaderProtocolVersion) != "" {
				t.Errorf("initialize carried session headers: %v", init.header)
			}
			session := ""
			for _, m := range want[1:] {
				r, _ := rec.find(m)
				if got := r.header.Get(mcp.HeaderProtocolVersion); got != version {
					t.Errorf("%s carried %s %q, want %q", m, mcp.HeaderProtocolVersion, got, version)
				}
				if a, c := r.header.Get("Accept"), r.header.Get("Content-Type"); a != "application/json, text/event-stream" || c != "application/json" {
					t.Errorf("%s carried Accept %q Content-Type %q", m, a, c)
				}
				got := r.header.Get(mcp.HeaderSessionID)
				if tc.wantSession && (got == "" || (session != "" && got != session)) {
					t.Errorf("%s carried session %q, want the one from initialize (%q)", m, got, session)
				}
				if !tc.wantSession && got != "" {
					t.Errorf("%s carried session %q on a stateless server", m, got)
				}
				session = got
			}

			// On exit a stateful session is ended with DELETE.
			deleted := false
			for _, r := range rec.requests() {
				if r.httpMethod == http.MethodDelete {
					deleted = r.header.Get(mcp.HeaderSessionID) == session && session != ""
				}
			}
			if deleted != tc.wantSession {
				t.Errorf("session DELETE sent = %v, want %v", deleted, tc.wantSession)
			}
		})
	}
}

func TestSlowCallDoesNotBlockOtherRequests(t *testing.T) {
	g := newGate()
	ts, _ := newMCPGateway(t, g, server.WithStateful(true))
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	br.initialize()

	br.send(`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	g.waitStarted(t)
	// While the slow call is held, many pings go through; their lines must
	// stay whole despite being written concurrently.
	const pings = 20
	for i := range pings {
		br.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1))
	}
	got := map[string]bool{}
	for range pings {
		m := br.next()
		if m.Error != nil || string(m.Result) != "{}" {
			t.Fatalf("ping answer = %s", m.raw)
		}
		got[idOf(m)] = true
	}
	if len(got) != pings || got["100"] {
		t.Fatalf("ping answers for ids %v", got)
	}

	g.open()
	if m := br.next(); idOf(m) != "100" || toolText(t, m) != "slow done" {
		t.Fatalf("slow call answer = %s", m.raw)
	}
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("unexpected extra stdout lines: %q", rest)
	}
}

func TestNotificationDuringCallArrivesOverSSE(t *testing.T) {
	g := newGate()
	ts, _ := newMCPGateway(t, g, server.WithStateful(true))
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	br.initialize()

	br.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress","arguments":{}}}`)
	note := br.next()
	g.open()
	if note.Method != "notifications/message" || hasID(note.ID) {
		t.Fatalf("first line = %s, want the notification", note.raw)
	}
	if !strings.Contains(note.raw, `working\non it`) {
		t.Errorf("notification data mangled: %s", note.raw)
	}
	if m := br.next(); idOf(m) != "7" || toolText(t, m) != "progress done" {
		t.Fatalf("answer = %s", m.raw)
	}
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("unexpected extra stdout lines: %q", rest)
	}
}

func TestModernClientWithoutSession(t *testing.T) {
	ts, rec := newMCPGateway(t, nil)
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

	br.send(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta + `}}`)
	if m := br.next(); idOf(m) != "1" || m.Error != nil {
		t.Fatalf("server/discover answer = %s", m.raw)
	}
	// tools/list teaches the bridge that route binds "region" to a header.
	br.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + meta + `}}`)
	if m := br.next(); idOf(m) != "2" || m.Error != nil {
		t.Fatalf("tools/list answer = %s", m.raw)
	}
	br.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"route","arguments":{"region":"eu-west"},` + meta + `}}`)
	if m := br.next(); idOf(m) != "3" || toolText(t, m) != "routed eu-west" {
		t.Fatalf("tools/call answer = %s", m.raw)
	}
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("unexpected extra stdout lines: %q", rest)
	}

	call, _ := rec.find("tools/call")
	wantHeaders := map[string]string{
		mcp.HeaderProtocolVersion: "2026-07-28",
		mcp.HeaderMethod:          "tools/call",
		mcp.HeaderName:            "route",
		"Mcp-Param-Region":        "eu-west",
		mcp.HeaderSessionID:       "",
	}
	for k, want := range wantHeaders {
		if got := call.header.Get(k); got != want {
			t.Errorf("tools/call header %s = %q, want %q", k, got, want)
		}
	}
	for _, r := range rec.requests() {
		if r.httpMethod != http.MethodPost {
			t.Errorf("unexpected %s request (no session to end)", r.httpMethod)
		}
	}
}

func TestSSEParsing(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		want   []string
	}{
		{
			name: "multi-line data, comments, priming, CRLF",
			stream: ": keep-alive\n" +
				"retry: 1000\n" +
				"id: prime-1\n" +
				"data:\n" +
				"\n" +
				"event: message\r\n" +
				"id: 1\r\n" +
				"data: {\"jsonrpc\":\"2.0\",\r\n" +
				"data:   \"method\":\"notifications/message\",\r\n" +
				"data: \"params\":{\"data\":\"a\\nb\"}}\r\n" +
				"\r\n" +
				":ping\n\n" +
				"event: endpoint\n" +
				"data: /ignored\n\n" +
				"data: {\"jsonrpc\":\"2.0\",\"id\":7,\n" +
				"data: \"result\":{\"ok\":true}}\n\n",
			want: []string{
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"a\nb"}}`,
				`{"jsonrpc":"2.0","id":7,"result":{"ok":true}}`,
			},
		},
		{
			name:   "server request before the response",
			stream: "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n",
			want: []string{
				`{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`,
				`{"jsonrpc":"2.0","id":7,"result":{}}`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(&recorder{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = fmt.Fprint(w, tc.stream)
				w.(http.Flusher).Flush()
				// Keep the stream open: the bridge must stop reading once
				// the response has arrived.
				<-r.Context().Done()
			})})
			defer closeServer(ts)
			// A long drain: if the bridge kept reading, Run would not return
			// and the guard in finish would fail the test.
			br := startBridge(t, t.Context(), Config{URL: ts.URL, drainTimeout: time.Hour})
			br.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`)
			for _, want := range tc.want {
				if got := br.next().raw; got != want {
					t.Errorf("line = %s\nwant   %s", got, want)
				}
			}
			if rest := br.finish(); len(rest) != 0 {
				t.Errorf("unexpected extra stdout lines: %q", rest)
			}
		})
	}
}

// TestGatewayAnswers covers the shapes of gateway replies to one request
// with id 5: each must yield exactly the listed stdout lines.
func TestGatewayAnswers(t *testing.T) {
	type reply struct {
		status int
		ct     string
		body   string
	}
	const big = 4096
	tests := []struct {
		name  string
		reply reply
		// want holds exact lines, or "ERR <code> <message substring>".
		want []string
	}{
		{"json", reply{200, "application/json", `{"jsonrpc": "2.0", "id": 5, "result": {"x": [1, 2]}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"result":{"x":[1,2]}}`}},
		{"pretty-printed json", reply{200, "application/json; charset=utf-8", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 5,\n  \"result\": {\"s\": \"l1\\nl2\"}\n}\n"},
			[]string{`{"jsonrpc":"2.0","id":5,"result":{"s":"l1\nl2"}}`}},
		{"batch", reply{200, "application/json", `[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":5,"result":{}}]`},
			[]string{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, `{"jsonrpc":"2.0","id":5,"result":{}}`}},
		{"json-rpc error on 400 is forwarded", reply{400, "application/json", `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad params"}}`},
			[]string{`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"bad params"}}`}},
		{"json-rpc error with null id", reply{400, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"missing header"}}`},
			[]string{"ERR -32603 gateway answered HTTP 400: missing header"}},
		{"text error", reply{403, "text/plain", "Forbidden: invalid Host header\nmore"},
			[]string{"ERR -32603 gateway answered HTTP 403: Forbidden: invalid Host header"}},
		{"unauthorized with json body", reply{401, "application/json", `{"jsonrpc":"2.0","id":5,"error":{"code":-32001,"message":"nope"}}`},
			[]string{"ERR -32603 " + msgUnauthorized}},
		{"redirect refused", reply{307, "text/plain", ""},
			[]string{"ERR -32603 gateway answered HTTP 307"}},
		{"empty 200", reply{200, "", ""}, []string{"ERR -32603 gateway sent no response to this request (HTTP 200)"}},
		{"202 for a request", reply{202, "", ""}, []string{"ERR -32603 gateway sent no response to this request (HTTP 202)"}},
		{"wrong id only", reply{200, "application/json", `{"jsonrpc":"2.0","id":6,"result":{}}`},
			[]string{`{"jsonrpc":"2.0","id":6,"result":{}}`, "ERR -32603 gateway sent no response"}},
		{"unexpected content type", reply{200, "text/html", "<html>"}, []string{`ERR -32603 unexpected content type "text/html"`}},
		{"json too large", reply{200, "application/json", `{"jsonrpc":"2.0","id":5,"result":{"s":"` + strings.Repeat("x", big) + `"}}`},
			[]string{"ERR -32603 gateway response exceeds 1024 bytes"}},
		{"sse event too large", reply{200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"s\":\"" + strings.Repeat("x", big) + "\"}}\n\n"},
			[]string{"ERR -32603 gateway response exceeds 1024 bytes"}},
		{"sse ends without response", reply{200, "text/event-stream", ": only a comment\n\n"},
			[]string{"ERR -32603 gateway sent no response"}},
		{"not json", reply{200, "application/json", `{"jsonrpc":`}, []string{"ERR -32603 gateway sent no response"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(&recorder{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.reply.ct != "" {
					w.Header().Set("Content-Type", tc.reply.ct)
				}
				if tc.reply.status == http.StatusTemporaryRedirect {
					w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
				}
				w.WriteHeader(tc.reply.status)
				_, _ = fmt.Fprint(w, tc.reply.body)
			})})
			defer closeServer(ts)
			br := startBridge(t, t.Context(), Config{URL: ts.URL, maxResponse: 1024})
			br.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`)
			for _, want := range tc.want {
				m := br.next()
				code, msg, isErr := strings.Cut(strings.TrimPrefix(want, "ERR "), " ")
				if !strings.HasPrefix(want, "ERR ") {
					isErr = false
				}
				if !isErr {
					if m.raw != want {
						t.Errorf("line = %s\nwant   %s", m.raw, want)
					}
					continue
				}
				if idOf(m) != "5" || m.Error == nil || fmt.Sprint(m.Error.Code) != code || !strings.Contains(m.Error.Message, msg) {
					t.Errorf("line = %s, want error %s containing %q for id 5", m.raw, code, msg)
				}
			}
			if rest := br.finish(); len(rest) != 0 {
				t.Errorf("unexpected extra stdout lines: %q", rest)
			}
		})
	}
}

func TestBadTokenIsReportedWithoutLeaking(t *testing.T) {
	ts, _ := newMCPGateway(t, nil)
	const wrong = "wrong-token-4c1d9e"
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp", Token: wrong})
	br.send(initializeMsg)
	m := br.next()
	if idOf(m) != "1" || m.Error == nil || m.Error.Code != codeInternalError || m.Error.Message != msgUnauthorized {
		t.Fatalf("answer = %s, want the 401 error", m.raw)
	}
	// A notification has no id to answer: the failure goes to stderr only.
	br.send(initializedMsg)
	br.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := br.next(); idOf(m) != "2" || m.Error == nil || m.Error.Message != msgUnauthorized {
		t.Fatalf("answer = %s, want the 401 error for id 2", m.raw)
	}
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("unexpected extra stdout lines: %q", rest)
	}
	if !strings.Contains(br.stderr.String(), "gateway rejected the token") {
		t.Errorf("stderr lacks the rejection:\n%s", br.stderr.String())
	}
	for _, out := range append(br.seen, br.stderr.String()) {
		if strings.Contains(out, wrong) || strings.Contains(out, testToken) {
			t.Errorf("a token leaked: %q", out)
		}
	}
}

func TestInvalidInputIsAnsweredAndSkipped(t *testing.T) {
	ts, _ := newMCPGateway(t, nil, server.WithStateLess(true))
	tests := []struct {
		name   string
		line   string
		wantID string
		code   int
	}{
		{"not json", `{"jsonrpc":"2.0","id":1,"method":`, "null", codeParseError},
		{"garbage", `hello`, "null", codeParseError},
		{"oversize", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1000) + `"}}`, "null", codeParseError},
		{"not an object", `42`, "null", codeInvalidRequest},
		{"empty batch", `[]`, "null", codeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":9,"method":5}`, "9", codeInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp", MaxLine: 512})
			br.send(tc.line)
			m := br.next()
			if idOf(m) != tc.wantID || m.Error == nil || m.Error.Code != tc.code {
				t.Fatalf("answer = %s, want error %d for id %s", m.raw, tc.code, tc.wantID)
			}
			// Blank lines are skipped, and the bridge keeps going.
			br.send("")
			br.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if m := br.next(); idOf(m) != "2" || m.Error != nil {
				t.Fatalf("ping after bad line = %s", m.raw)
			}
			if rest := br.finish(); len(rest) != 0 {
				t.Errorf("unexpected extra stdout lines: %q", rest)
			}
		})
	}
}

func TestGatewayDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()

	br := startBridge(t, t.Context(), Config{URL: "http://user:pw-secret-9@" + addr + "/mcp"})
	br.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	m := br.next()
	if idOf(m) != "1" || m.Error == nil || m.Error.Code != codeInternalError || !strings.Contains(m.Error.Message, "gateway unreachable") {
		t.Fatalf("answer = %s, want -32603 gateway unreachable", m.raw)
	}
	br.send(initializedMsg)
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("a notification produced stdout lines: %q", rest)
	}
	if !strings.Contains(br.stderr.String(), "gateway did not take the message") {
		t.Errorf("stderr lacks the notification failure:\n%s", br.stderr.String())
	}
	for _, out := range append(br.seen, br.stderr.String()) {
		if strings.Contains(out, "pw-secret-9") {
			t.Errorf("URL password leaked: %q", out)
		}
	}
}

func TestExpiredSessionIsReopened(t *testing.T) {
	ts, rec := newMCPGateway(t, nil, server.WithStateful(true))
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	br.initialize()
	br.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := br.next(); idOf(m) != "2" || m.Error != nil {
		t.Fatalf("ping = %s", m.raw)
	}
	ping, _ := rec.find("ping")
	session := ping.header.Get(mcp.HeaderSessionID)
	if session == "" {
		t.Fatal("ping carried no session")
	}

	// The gateway ends the session (as after a restart or idle timeout).
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodDelete, ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set(mcp.HeaderSessionID, session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()

	// The next request still succeeds: the bridge replays initialize and
	// sends the request again on the new session.
	br.send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	if m := br.next(); idOf(m) != "3" || m.Error != nil {
		t.Fatalf("answer = %s, want the tool list", m.raw)
	}
	br.finish()

	var methods []string
	var lists []seenRequest
	for _, r := range rec.requests() {
		methods = append(methods, r.rpcMethod)
		if r.rpcMethod == "tools/list" {
			lists = append(lists, r)
		}
	}
	if len(lists) != 2 || lists[0].header.Get(mcp.HeaderSessionID) != session ||
		lists[1].header.Get(mcp.HeaderSessionID) == "" || lists[1].header.Get(mcp.HeaderSessionID) == session {
		t.Fatalf("tools/list sessions: want %q then a new one; requests: %v", session, methods)
	}
	if strings.Count(strings.Join(methods, " "), "initialize") < 2 {
		t.Fatalf("initialize was not replayed: %v", methods)
	}
}

func TestExpiredSessionThatCannotReopen(t *testing.T) {
	var initializes atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"initialize"`) {
			if initializes.Add(1) > 1 {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set(mcp.HeaderSessionID, "s1")
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}`)
			return
		}
		if strings.Contains(string(body), `"notifications/`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		http.Error(w, "Invalid session ID", http.StatusNotFound)
	}))
	t.Cleanup(ts.Close)
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	br.initialize()
	br.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if m := br.next(); idOf(m) != "2" || m.Error == nil || !strings.Contains(m.Error.Message, msgSessionExpired) {
		t.Fatalf("answer = %s, want the session-expired error", m.raw)
	}
	br.finish()
}

func TestStdinCloseWaitsForInFlightRequests(t *testing.T) {
	g := newGate()
	ts, _ := newMCPGateway(t, g, server.WithStateLess(true))
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	br.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	g.waitStarted(t)
	_ = br.stdin.Close()
	br.waitStderr("stdin closed; waiting for in-flight requests")
	g.open()
	rest := br.finish()
	if len(rest) != 1 {
		t.Fatalf("stdout after close = %q, want the one response", rest)
	}
	if m := mustParse(t, rest[0]); idOf(m) != "1" || toolText(t, m) != "slow done" {
		t.Fatalf("answer = %s", m.raw)
	}
}

func TestStdinCloseGivesUpAfterDrainTimeout(t *testing.T) {
	g := newGate() // never opened before the test ends
	ts, _ := newMCPGateway(t, g, server.WithStateLess(true))
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp", drainTimeout: 20 * time.Millisecond})
	br.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	g.waitStarted(t)
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("abandoned request wrote %q", rest)
	}
	if !strings.Contains(br.stderr.String(), "abandoning in-flight requests") {
		t.Errorf("stderr lacks the abandon note:\n%s", br.stderr.String())
	}
}

func TestContextCancelStopsRun(t *testing.T) {
	g := newGate()
	ts, _ := newMCPGateway(t, g, server.WithStateLess(true))
	ctx, cancel := context.WithCancel(t.Context())
	br := startBridge(t, ctx, Config{URL: ts.URL + "/mcp"})
	br.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	g.waitStarted(t)
	cancel()
	select {
	case err := <-br.done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
		br.closed = true
	case <-time.After(guard):
		t.Fatal("Run did not return after cancel")
	}
	_ = br.stdin.Close()
}

func TestRunRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"empty url", Config{Token: testToken}},
		{"relative url", Config{URL: "127.0.0.1:8080/mcp", Token: testToken}},
		{"other scheme", Config{URL: "ftp://127.0.0.1/mcp", Token: testToken}},
		{"token with newline", Config{URL: "http://127.0.0.1:1/mcp", Token: testToken + "\nX-Evil: 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Run(t.Context(), tc.cfg, strings.NewReader(""), &strings.Builder{})
			if err == nil {
				t.Fatal("Run accepted a bad config")
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestReadLine(t *testing.T) {
	tests := []struct {
		name  string
		input string
		limit int
		want  []string // "!" marks errLineTooLong
	}{
		{"lf and crlf", "a\r\nbb\n\nccc", 10, []string{"a", "bb", "", "ccc"}},
		{"exact limit", "abcd\nabcde\nx\n", 4, []string{"abcd", "!", "x"}},
		{"long line spanning buffer", strings.Repeat("y", 100) + "\nz", 20, []string{"!", "z"}},
		{"long last line", "ok\n" + strings.Repeat("y", 100), 20, []string{"ok", "!"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The smallest buffer, so lines span several reads.
			r := bufio.NewReaderSize(strings.NewReader(tc.input), 16)
			var got []string
			for {
				line, err := readLine(r, tc.limit)
				if errors.Is(err, errLineTooLong) {
					got = append(got, "!")
					continue
				}
				if err != nil {
					break
				}
				got = append(got, string(line))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("lines = %q, want %q", got, tc.want)
			}
		})
	}
}

// overlapWriter notices concurrent Write calls, which on a real stdout pipe
// could interleave two messages inside one line.
type overlapWriter struct {
	busy, overlapped atomic.Bool
	mu               sync.Mutex
	buf              bytes.Buffer
}

func (w *overlapWriter) Write(p []byte) (int, error) {
	if !w.busy.CompareAndSwap(false, true) {
		w.overlapped.Store(true)
	}
	defer w.busy.Store(false)
	for range 3 {
		runtime.Gosched()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func TestStdoutWritesAreWholeLines(t *testing.T) {
	ts, _ := newMCPGateway(t, nil, server.WithStateLess(true))
	const n = 40
	var in strings.Builder
	for i := range n {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	out := &overlapWriter{}
	cfg := Config{URL: ts.URL + "/mcp", Token: testToken, Logger: slog.New(slog.DiscardHandler)}
	if err := Run(t.Context(), cfg, strings.NewReader(in.String()), out); err != nil {
		t.Fatal(err)
	}
	if out.overlapped.Load() {
		t.Error("stdout saw concurrent writes")
	}
	lines := strings.Split(strings.TrimSuffix(out.buf.String(), "\n"), "\n")
	ids := map[string]bool{}
	for _, l := range lines {
		if m := mustParse(t, l); m.Error == nil {
			ids[idOf(m)] = true
		}
	}
	if len(lines) != n || len(ids) != n {
		t.Errorf("got %d lines with %d distinct successful ids, want %d", len(lines), len(ids), n)
	}
}

func TestBatchFromClient(t *testing.T) {
	// The gateway answers only the first request of the batch; the second
	// must still get exactly one line.
	ts := httptest.NewServer(&recorder{next: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprint(w, `[{"jsonrpc":"2.0","id":1,"result":{}}]`)
	})})
	defer closeServer(ts)
	br := startBridge(t, t.Context(), Config{URL: ts.URL})
	br.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`)
	if m := br.next(); m.raw != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("first line = %s", m.raw)
	}
	if m := br.next(); idOf(m) != `"b"` || m.Error == nil || m.Error.Code != codeInternalError {
		t.Errorf("second line = %s, want an error for id \"b\"", m.raw)
	}
	if rest := br.finish(); len(rest) != 0 {
		t.Errorf("unexpected extra stdout lines: %q", rest)
	}
}

// TestPipelinedStartup: a client may write initialize, initialized and its
// first request without waiting; the bridge holds them until initialize has
// brought the session id, so none reaches the gateway without it.
func TestPipelinedStartup(t *testing.T) {
	ts, _ := newMCPGateway(t, nil, server.WithStateful(true))
	br := startBridge(t, t.Context(), Config{URL: ts.URL + "/mcp"})
	br.send(initializeMsg)
	br.send(initializedMsg)
	br.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"pipelined"}}}`)
	got := map[string]rpcMsg{}
	for range 2 {
		m := br.next()
		got[idOf(m)] = m
	}
	if got["1"].Error != nil || got["2"].Error != nil {
		t.Fatalf("pipelined start-up failed: %s / %s", got["1"].raw, got["2"].raw)
	}
	if text := toolText(t, got["2"]); text != "pipelined" {
		t.Fatalf("tools/call answered %q", text)
	}
}
