package stdio

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/capture"
)

// testToken is what the test gateways accept; leak checks look for it.
const testToken = "tg-test-secret-7f3a9c51"

// guard bounds waits that only end early when something is broken; it is a
// hang guard, not a timing assertion.
const guard = 10 * time.Second

// rpcMsg is a line read from the bridge's stdout.
type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw string
}

// bridgeRun drives one Run call through pipes, as a client would.
type bridgeRun struct {
	t      *testing.T
	token  string
	stdin  *io.PipeWriter
	lines  chan string
	stderr *capture.Buffer
	done   chan error
	seen   []string // every stdout line, for the leak check
	closed bool
}

func startBridge(t *testing.T, ctx context.Context, cfg Config) *bridgeRun {
	t.Helper()
	if cfg.Token == "" {
		cfg.Token = testToken
	}
	stderr := &capture.Buffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	br := &bridgeRun{
		t: t, token: cfg.Token, stdin: inW, stderr: stderr,
		lines: make(chan string, 256), done: make(chan error, 1),
	}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			br.lines <- sc.Text()
		}
		close(br.lines)
	}()
	go func() {
		err := Run(ctx, cfg, inR, outW)
		_ = outW.Close()
		br.done <- err
	}()
	t.Cleanup(func() {
		if !br.closed {
			_ = inW.Close()
			select {
			case <-br.done:
			case <-time.After(guard):
				t.Error("Run did not return after stdin closed")
			}
		}
	})
	return br
}

func (br *bridgeRun) send(line string) {
	br.t.Helper()
	if _, err := io.WriteString(br.stdin, line+"\n"); err != nil {
		br.t.Fatalf("writing stdin: %v", err)
	}
}

// next returns the next stdout line, which must be a JSON-RPC 2.0 message.
func (br *bridgeRun) next() rpcMsg {
	br.t.Helper()
	select {
	case line, ok := <-br.lines:
		if !ok {
			br.t.Fatal("stdout closed while a line was expected")
		}
		br.seen = append(br.seen, line)
		return mustParse(br.t, line)
	case <-time.After(guard):
		br.t.Fatalf("no line on stdout; stderr:\n%s", br.stderr.String())
	}
	return rpcMsg{}
}

func mustParse(t *testing.T, line string) rpcMsg {
	t.Helper()
	var m rpcMsg
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("stdout line is not JSON: %q", line)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("stdout line is not JSON-RPC 2.0: %q", line)
	}
	m.raw = line
	return m
}

// finish closes stdin, waits for Run, checks it returned nil, and returns
// any stdout lines that were not read yet. It also checks that the token
// reached neither stdout nor stderr.
func (br *bridgeRun) finish() []string {
	br.t.Helper()
	br.closed = true
	_ = br.stdin.Close()
	select {
	case err := <-br.done:
		if err != nil {
			br.t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(guard):
		br.t.Fatal("Run did not return after stdin closed")
	}
	var rest []string
	for line := range br.lines {
		rest = append(rest, line)
	}
	br.seen = append(br.seen, rest...)
	br.checkNoLeak()
	return rest
}

func (br *bridgeRun) checkNoLeak() {
	br.t.Helper()
	if strings.Contains(br.stderr.String(), br.token) {
		br.t.Errorf("token leaked to stderr:\n%s", br.stderr.String())
	}
	for _, l := range br.seen {
		if strings.Contains(l, br.token) {
			br.t.Errorf("token leaked to stdout: %q", l)
		}
	}
}

func (br *bridgeRun) waitStderr(substr string) {
	br.t.Helper()
	deadline := time.Now().Add(guard)
	for !strings.Contains(br.stderr.String(), substr) {
		if time.Now().After(deadline) {
			br.t.Fatalf("stderr never contained %q:\n%s", substr, br.stderr.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func idOf(m rpcMsg) string { return string(m.ID) }

// seenRequest is what the test gateway observed of one HTTP request.
type seenRequest struct {
	httpMethod string
	rpcMethod  string
	header     http.Header
}

// recorder wraps a gateway handler: it checks the bearer token like the real
// gateway does and records every request.
type recorder struct {
	mu   sync.Mutex
	reqs []seenRequest
	next http.Handler
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+testToken)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, seenRequest{httpMethod: r.Method, rpcMethod: m.Method, header: r.Header.Clone()})
	rc.mu.Unlock()
	rc.next.ServeHTTP(w, r)
}

func (rc *recorder) requests() []seenRequest {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]seenRequest(nil), rc.reqs...)
}

func (rc *recorder) find(rpcMethod string) (seenRequest, bool) {
	for _, r := range rc.requests() {
		if r.rpcMethod == rpcMethod {
			return r, true
		}
	}
	return seenRequest{}, false
}

// gate lets a test hold the "slow" tool until it releases it.
type gate struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate() *gate  { return &gate{started: make(chan struct{}, 16), release: make(chan struct{})} }
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// waitStarted waits until the slow tool is running.
func (g *gate) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-g.started:
	case <-time.After(guard):
		t.Fatal("the slow tool never started")
	}
}

// newMCPGateway serves a real mcp-go Streamable HTTP server behind the
// token check. Tools: echo, slow (waits for the gate), progress (sends a
// notification first, which makes mcp-go answer with SSE) and route (binds
// an argument to an Mcp-Param-Region header for 2026-07-28 clients).
func newMCPGateway(t *testing.T, g *gate, opts ...server.StreamableHTTPOption) (*httptest.Server, *recorder) {
	t.Helper()
	s := server.NewMCPServer("test-gateway", "1.0.0", server.WithToolCapabilities(false))
	readOnly := func(title string) mcp.ToolOption {
		return mcp.WithToolAnnotation(mcp.ToolAnnotation{
			Title:           title,
			ReadOnlyHint:    mcp.ToBoolPtr(true),
			DestructiveHint: mcp.ToBoolPtr(false),
			IdempotentHint:  mcp.ToBoolPtr(true),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		})
	}
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes text."),
		mcp.WithString("text", mcp.Required()), readOnly("Echo")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Waits for the test."), readOnly("Slow")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if g != nil {
				g.started <- struct{}{}
				select {
				case <-g.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return mcp.NewToolResultText("slow done"), nil
		})
	s.AddTool(mcp.NewTool("progress", mcp.WithDescription("Notifies, then answers."), readOnly("Progress")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message",
				map[string]any{"level": "info", "data": "working\non it"})
			if err != nil {
				return nil, err
			}
			// Hold the answer until the test has seen the notification:
			// mcp-go drops a notification still in flight when the handler
			// returns.
			if g != nil {
				select {
				case <-g.release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return mcp.NewToolResultText("progress done"), nil
		})
	route := mcp.NewToolWithRawSchema("route", "Routes by region.", json.RawMessage(
		`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"],"additionalProperties":false}`))
	route.Annotations = mcp.ToolAnnotation{
		ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false),
	}
	s.AddTool(route, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("routed " + req.GetString("region", "")), nil
	})

	rec := &recorder{next: server.NewStreamableHTTPServer(s, opts...)}
	ts := httptest.NewServer(rec)
	t.Cleanup(func() {
		if g != nil {
			g.open()
		}
		closeServer(ts)
	})
	return ts, rec
}

// closeServer drops open connections first: after a failure a bridge may
// still hold a stream open, and Close alone would wait for it for ever.
func closeServer(ts *httptest.Server) {
	ts.CloseClientConnections()
	ts.Close()
}

const initializeMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test-client","version":"1.0"}}}`
const initializedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// initialize runs the handshake and returns the negotiated version.
func (br *bridgeRun) initialize() string {
	br.t.Helper()
	br.send(initializeMsg)
	m := br.next()
	if idOf(m) != "1" || m.Error != nil {
		br.t.Fatalf("initialize answer = %s", m.raw)
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil || res.ProtocolVersion == "" {
		br.t.Fatalf("initialize result without protocolVersion: %s", m.raw)
	}
	br.send(initializedMsg)
	return res.ProtocolVersion
}

// toolText returns the first text content of a tools/call result.
func toolText(t *testing.T, m rpcMsg) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &res) != nil || len(res.Content) == 0 || res.IsError {
		t.Fatalf("not a successful tool result: %s", m.raw)
	}
	return res.Content[0].Text
}
