package toolkit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// Fixed test secrets. They are long enough for the toolkit's minimums.
var (
	serviceToken = []byte("service-token-0123456789abcdef")
	approvalKey  = []byte("approval-key-0123456789abcdef-0123456789")
	otherKey     = []byte("another-key-0123456789abcdef-0123456789ab")
)

// upstreamSecret is a credential a handler might accidentally echo.
const upstreamSecret = "s3cr3t-upstream-credential-value"

// redacted is what the redactor puts in place of a secret.
const redacted = redact.Marker

// newFakeClock returns a settable clock for approval expiry.
func newFakeClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// lightState is the fake upstream behind the write tool: a dimmer whose
// level a write changes.
type lightState struct {
	mu       sync.Mutex
	level    int
	applies  int
	previews int
}

func (s *lightState) snapshot() (level, applies, previews int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.level, s.applies, s.previews
}

func (s *lightState) setLevelOutOfBand(level int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.level = level
}

const echoSchema = `{
	"type": "object",
	"additionalProperties": false,
	"properties": {
		"text":  {"type": "string", "minLength": 1, "maxLength": 64},
		"count": {"type": "integer", "minimum": 1, "maximum": 10},
		"mode":  {"type": "string", "enum": ["short", "long"]}
	},
	"required": ["text"]
}`

const emptySchema = `{"type":"object","additionalProperties":false,"properties":{}}`

const lightSchema = `{
	"type": "object",
	"additionalProperties": false,
	"properties": {
		"room":  {"type": "string", "enum": ["kitchen", "hall"]},
		"level": {"type": "integer", "minimum": 0, "maximum": 100}
	},
	"required": ["room", "level"]
}`

type echoArgs struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
	Mode  string `json:"mode"`
}

type lightArgs struct {
	Room  string `json:"room"`
	Level int    `json:"level"`
}

// readAnn are the annotations of an ordinary read tool.
var readAnn = toolkit.Annotations{ReadOnly: true, Idempotent: true}

// echoTool answers with its validated arguments; calls counts invocations.
func echoTool(calls *int64, mu *sync.Mutex) toolkit.Tool {
	return toolkit.Tool{
		Name:        "test_echo",
		Title:       "Echo",
		Description: "Echoes its arguments.",
		Schema:      json.RawMessage(echoSchema),
		Annotations: readAnn,
		Read: func(_ context.Context, args toolkit.Args) (any, error) {
			if mu != nil {
				mu.Lock()
				*calls++
				mu.Unlock()
			}
			var a echoArgs
			if err := args.Decode(&a); err != nil {
				return nil, err
			}
			return map[string]any{"echo": a.Text, "count": a.Count, "mode": a.Mode}, nil
		},
	}
}

// readTool is a read tool with an empty schema and the given body.
func readTool(name string, fn toolkit.ReadFunc) toolkit.Tool {
	return toolkit.Tool{
		Name:        name,
		Description: "Test tool " + name + ".",
		Schema:      json.RawMessage(emptySchema),
		Annotations: readAnn,
		Read:        fn,
	}
}

// lightTool is a write tool over st.
func lightTool(st *lightState) toolkit.Tool {
	return toolkit.Tool{
		Name:        "test_set_light",
		Title:       "Set light",
		Description: "Sets a dimmer level.",
		Schema:      json.RawMessage(lightSchema),
		Annotations: toolkit.Annotations{Idempotent: true},
		Write: &toolkit.Write{
			Preview: func(_ context.Context, args toolkit.Args) (any, error) {
				var a lightArgs
				if err := args.Decode(&a); err != nil {
					return nil, err
				}
				st.mu.Lock()
				defer st.mu.Unlock()
				st.previews++
				return map[string]any{"room": a.Room, "from": st.level, "to": a.Level}, nil
			},
			Apply: func(_ context.Context, args toolkit.Args, preview any) (any, error) {
				var a lightArgs
				if err := args.Decode(&a); err != nil {
					return nil, err
				}
				if _, ok := preview.(map[string]any); !ok {
					return nil, fmt.Errorf("apply got preview of type %T", preview)
				}
				st.mu.Lock()
				defer st.mu.Unlock()
				st.applies++
				st.level = a.Level
				return map[string]any{"room": a.Room, "level": st.level}, nil
			},
		},
	}
}

// baseOptions returns valid options; writes are allowed.
func baseOptions(clock *fakeclock.Clock) toolkit.Options {
	o := toolkit.Options{
		Name:         "test",
		Version:      "0.0.1",
		Instructions: "Test service.",
		ServiceToken: serviceToken,
		ApprovalKey:  approvalKey,
		AllowWrites:  true,
		Redactor:     redact.New([]byte(upstreamSecret)),
	}
	if clock != nil {
		o.Now = clock.Now
	}
	return o
}

// fixture is a running service with every test tool registered.
type fixture struct {
	t      *testing.T
	svc    *toolkit.Service
	srv    *httptest.Server
	url    string
	clock  *fakeclock.Clock
	light  *lightState
	mu     sync.Mutex
	echoes int64
}

func (f *fixture) echoCalls() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.echoes
}

// allTools are the tools of the test service: echo counts its calls in
// *echoes under mu, the light tool writes to light.
func allTools(echoes *int64, mu *sync.Mutex, light *lightState) []toolkit.Tool {
	return []toolkit.Tool{
		echoTool(echoes, mu),
		lightTool(light),
		readTool("test_leak", func(context.Context, toolkit.Args) (any, error) {
			return map[string]any{
				"note":    "the upstream said: token=" + upstreamSecret,
				"api_key": "plain-key-value-abc",
				"items":   []any{map[string]any{"password": "hunter2-value"}, upstreamSecret},
			}, nil
		}),
		readTool("test_fail", func(context.Context, toolkit.Args) (any, error) {
			return nil, fmt.Errorf("query upstream: %w", errors.New("secret-xyz "+upstreamSecret))
		}),
		readTool("test_notfound", func(context.Context, toolkit.Args) (any, error) {
			return nil, toolerr.New(toolerr.NotFound, "no series named that")
		}),
		readTool("test_quote", func(context.Context, toolkit.Args) (any, error) {
			return nil, toolerr.New(toolerr.NotFound, "no series named %q", upstreamSecret)
		}),
		readTool("test_list", func(context.Context, toolkit.Args) (any, error) {
			return []int{1, 2, 3}, nil
		}),
		{
			Name:        "test_slow",
			Description: "Waits for its deadline.",
			Schema:      json.RawMessage(emptySchema),
			Annotations: readAnn,
			Timeout:     time.Millisecond,
			Read: func(ctx context.Context, _ toolkit.Args) (any, error) {
				<-ctx.Done()
				return nil, fmt.Errorf("wait: %w", ctx.Err())
			},
		},
		readTool("test_panic", func(context.Context, toolkit.Args) (any, error) {
			panic("boom " + upstreamSecret)
		}),
	}
}

// newFixture starts a service over loopback; edit may change the options.
func newFixture(t *testing.T, edit func(*toolkit.Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: newFakeClock(), light: &lightState{level: 10}}
	opts := baseOptions(f.clock)
	if edit != nil {
		edit(&opts)
	}
	tools := allTools(&f.echoes, &f.mu, f.light)
	svc, err := toolkit.New(opts, tools...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.svc = svc
	f.srv = httptest.NewServer(svc.Handler())
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL + "/mcp"
	return f
}

// rpcResponse is a JSON-RPC response as it arrives over HTTP.
type rpcResponse struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// toolResult is the wire shape of a tools/call result.
type toolResult struct {
	Meta    map[string]any `json:"_meta"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// modernVersion is the stateless protocol revision both SDKs default to.
const modernVersion = "2026-07-28"

// post sends one raw body to /mcp with the service token and the modern
// protocol headers, and returns the status and body.
func (f *fixture) post(body string, header map[string]string) (int, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+string(serviceToken))
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// modernHeaders are the HTTP headers of a 2026-07-28 request.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": modernVersion, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// modernMeta is the _meta every 2026-07-28 request carries.
func modernMeta() map[string]any {
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-test", "version": "1"},
	}
}

// modernMetaJSON is modernMeta as JSON, with extra members appended.
func modernMetaJSON(t testing.TB, extra map[string]any) string {
	t.Helper()
	m := modernMeta()
	for k, v := range extra {
		m[k] = v
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// modernCall builds a 2026-07-28 tools/call body.
func modernCall(t *testing.T, id int, tool string, args any, meta map[string]any) string {
	t.Helper()
	m := modernMeta()
	for k, v := range meta {
		m[k] = v
	}
	body := map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": args, "_meta": m},
	}
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// decodeRPC parses a JSON or single-event SSE response body.
func decodeRPC(t *testing.T, body []byte) rpcResponse {
	t.Helper()
	data := bytes.TrimSpace(body)
	if bytes.HasPrefix(data, []byte("event:")) || bytes.HasPrefix(data, []byte("data:")) || bytes.HasPrefix(data, []byte("id:")) {
		var last []byte
		for _, line := range bytes.Split(data, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				last = bytes.TrimSpace(rest)
			}
		}
		data = last
	}
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("response is not JSON-RPC: %v: %q", err, body)
	}
	return r
}

// callRaw performs a modern tools/call over raw HTTP and returns the result
// and the raw body.
func (f *fixture) callRaw(tool string, args any, meta map[string]any) (toolResult, []byte) {
	f.t.Helper()
	status, body := f.post(modernCall(f.t, 1, tool, args, meta), modernHeaders("tools/call", tool))
	if status != http.StatusOK {
		f.t.Fatalf("tools/call %s: status %d: %s", tool, status, body)
	}
	r := decodeRPC(f.t, body)
	if r.Error != nil {
		f.t.Fatalf("tools/call %s: JSON-RPC error %d %s", tool, r.Error.Code, r.Error.Message)
	}
	var res toolResult
	if err := json.Unmarshal(r.Result, &res); err != nil {
		f.t.Fatalf("tools/call %s: result: %v", tool, err)
	}
	return res, body
}

// errorCode returns structuredContent.error.code of a failed result.
func errorCode(t *testing.T, res toolResult) toolerr.Code {
	t.Helper()
	if !res.IsError {
		t.Fatalf("result is not an error: %+v", res)
	}
	e, ok := res.StructuredContent["error"].(map[string]any)
	if !ok {
		t.Fatalf("error result without structured error: %+v", res)
	}
	code, _ := e["code"].(string)
	return toolerr.Code(code)
}

func errorMessage(res toolResult) string {
	e, _ := res.StructuredContent["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

// sign returns an approval token for a call of the light tool.
func sign(t *testing.T, key []byte, a approval.Approval) string {
	t.Helper()
	s, err := approval.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Sign(a)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// argsDigest is approval.Digest of v, failing the test on error.
func argsDigest(t *testing.T, v any) string {
	t.Helper()
	d, err := approval.Digest(v)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// bearerTransport adds the service token to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// recordingTransport keeps every response body it passes on.
type recordingTransport struct {
	base http.RoundTripper
	seen capture.Buffer
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, _ = rt.seen.Write(data)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, err
}

func (rt *recordingTransport) String() string {
	return rt.seen.String()
}
