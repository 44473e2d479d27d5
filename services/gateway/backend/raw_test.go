package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

const token = "backend-test-token-0123456789"

// realService is a toolkit service with one read that reports the raw
// arguments it received.
func realService(t *testing.T) *httptest.Server {
	t.Helper()
	svc, err := toolkit.New(toolkit.Options{
		Name: "demo", ServiceToken: []byte(token), Redactor: redact.New([]byte(token)),
	}, toolkit.Tool{
		Name: "demo_args", Description: "Report the arguments.",
		Schema:      json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"number"}},"additionalProperties":false}`),
		Annotations: toolkit.Annotations{ReadOnly: true},
		Read: func(_ context.Context, a toolkit.Args) (any, error) {
			return map[string]any{"raw": string(a.Raw())}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func newBackend(t *testing.T, url string, mutate ...func(*Config)) *Backend {
	t.Helper()
	cfg := Config{Name: "demo", URL: url, Token: []byte(token)}
	for _, m := range mutate {
		m(&cfg)
	}
	b := New(cfg)
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestCallRawPassesArgumentsAndResultAsTheyAre(t *testing.T) {
	srv := realService(t)
	b := newBackend(t, srv.URL+"/mcp")
	args := json.RawMessage(`{"n":1.50,"text":"<a&b>"}`)
	raw, err := b.CallRaw(t.Context(), "demo_args", args, false)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent struct{ Raw string }
		IsError           bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError || len(res.Content) != 1 {
		t.Fatalf("%v: %s", err, raw)
	}
	if res.StructuredContent.Raw != string(args) {
		t.Errorf("the service got %s, sent %s", res.StructuredContent.Raw, args)
	}
	// The decoding call on the same session still works.
	if dec, err := b.Call(t.Context(), "demo_args", map[string]any{"text": "x"}, nil, false); err != nil || dec.IsError {
		t.Fatalf("Call: %v %+v", err, dec)
	}
}

func TestCallRawFailures(t *testing.T) {
	srv := realService(t)
	// Docker's DNS answers "no such host" for a container that stopped or
	// was removed.
	removed := func(c *Config) {
		c.HTTPClient = &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "demo", IsNotFound: true}}
		}}}
	}
	answers := func(status int) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
		t.Cleanup(s.Close)
		return s.URL + "/mcp"
	}
	cases := []struct {
		name string
		url  string
		cfg  func(*Config)
		tool string
		code toolerr.Code
		// gone: what the failure says of the catalog ("service": not
		// running, "tool": the service no longer has it).
		gone string
	}{
		{"unknown tool", srv.URL + "/mcp", nil, "demo_nosuch", toolerr.NotFound, "tool"},
		{"wrong service token", srv.URL + "/mcp", func(c *Config) { c.Token = []byte("wrong-token-0123456789abcdef") }, "demo_args", toolerr.AuthFailed, ""},
		{"nobody listening", "http://127.0.0.1:1/mcp", nil, "demo_args", toolerr.UpstreamUnavailable, "service"},
		{"name does not resolve", "http://demo:8000/mcp", removed, "demo_args", toolerr.UpstreamUnavailable, "service"},
		{"service failing", answers(http.StatusBadGateway), nil, "demo_args", toolerr.UpstreamUnavailable, ""},
		{"answer over the bound", srv.URL + "/mcp", func(c *Config) { c.MaxResponseBytes = 64 }, "demo_args", toolerr.TooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var muts []func(*Config)
			if tc.cfg != nil {
				muts = append(muts, tc.cfg)
			}
			b := newBackend(t, tc.url, muts...)
			_, err := b.CallRaw(t.Context(), tc.tool, json.RawMessage(`{}`), true)
			if toolerr.CodeOf(err) != tc.code || goneOf(err) != tc.gone {
				t.Fatalf("got %v (%s, gone %q), want %s, gone %q", err, toolerr.CodeOf(err), goneOf(err), tc.code, tc.gone)
			}
			if tc.gone == "service" && !strings.Contains(toolerr.MessageOf(err), "service demo is not running") {
				t.Errorf("message %q does not say the service is not running", toolerr.MessageOf(err))
			}
			// Call, the decoding way, fails alike.
			if tc.code != toolerr.TooLarge {
				if _, err := b.Call(t.Context(), tc.tool, map[string]any{}, nil, true); toolerr.CodeOf(err) != tc.code || goneOf(err) != tc.gone {
					t.Errorf("Call: got %v (%s, gone %q), want %s, gone %q", err, toolerr.CodeOf(err), goneOf(err), tc.code, tc.gone)
				}
			}
			if strings.Contains(toolerr.MessageOf(err), token) {
				t.Error("the token is in the message")
			}
		})
	}
}

// goneOf reads a failure as the router does (catalog/refresh.go).
func goneOf(err error) string {
	var service interface{ ServiceGone() bool }
	var tool interface{ ToolGone() bool }
	switch {
	case errors.As(err, &service) && service.ServiceGone():
		return "service"
	case errors.As(err, &tool) && tool.ToolGone():
		return "tool"
	}
	return ""
}

func TestCallRawIsBoundedLikeCall(t *testing.T) {
	b := newBackend(t, "http://127.0.0.1:1/mcp", func(c *Config) { c.MaxConcurrent = 1 })
	b.sem <- struct{}{} // one call in flight
	defer func() { <-b.sem }()
	if _, err := b.CallRaw(t.Context(), "demo_args", nil, false); toolerr.CodeOf(err) != toolerr.Busy {
		t.Fatalf("got %v, want busy", err)
	}
}

// fakeService answers initialize itself and tools/call with answer.
type fakeService struct {
	calls  atomic.Int32
	answer func(w http.ResponseWriter, r *http.Request, id json.RawMessage, n int32)
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	switch msg.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "fake-session")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, msg.ID)
	case "tools/call":
		if r.Header.Get("Mcp-Session-Id") != "fake-session" || r.Header.Get("MCP-Protocol-Version") != "2025-11-25" {
			http.Error(w, "no session", http.StatusBadRequest)
			return
		}
		f.answer(w, r, msg.ID, f.calls.Add(1))
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

func TestCallRawReadsWhatServicesMayAnswer(t *testing.T) {
	ok := `{"content":[{"type":"text","text":"fine"}]}`
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request, id json.RawMessage, n int32)
		retry  bool
		want   string       // the result, or
		code   toolerr.Code // the error
	}{
		{"event stream with a notification first", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n")
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, ok)
		}, false, ok, ""},
		{"an answer to another request", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage, _ int32) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":999999,"result":%s}`, ok)
		}, false, "", toolerr.UpstreamUnavailable},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage, _ int32) {
			fmt.Fprint(w, "<html>")
		}, false, "", toolerr.UpstreamUnavailable},
		{"a result that is not an object", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":"x"}`, id)
		}, false, "", toolerr.UpstreamUnavailable},
		{"announced length", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, ok)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			fmt.Fprint(w, body)
		}, false, ok, ""},
		{"no announced length (chunked)", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,`, id)
			w.(http.Flusher).Flush()
			fmt.Fprintf(w, `"result":%s}`, ok)
		}, false, ok, ""},
		{"shorter than announced", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			w.Header().Set("Content-Length", "1000")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, ok)
		}, false, "", toolerr.UpstreamUnavailable},
		{"over the limit, announced", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, strings.Repeat("x", 2<<10))
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			fmt.Fprint(w, body)
		}, false, "", toolerr.TooLarge},
		{"over the limit, not announced", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, _ int32) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,`, id)
			w.(http.Flusher).Flush()
			fmt.Fprintf(w, `"result":{"content":[{"type":"text","text":"%s"}]}}`, strings.Repeat("x", 2<<10))
		}, false, "", toolerr.TooLarge},
		{"HTTP 500", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage, _ int32) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, false, "", toolerr.UpstreamUnavailable},
		{"session gone, then a new one (read)", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, n int32) {
			if n == 1 {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, ok)
		}, true, ok, ""},
		{"connection cut, retried once (read)", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, n int32) {
			if n == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, ok)
		}, true, ok, ""},
		{"connection cut, not retried (write)", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage, n int32) {
			if n == 1 {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, ok)
		}, false, "", toolerr.UpstreamUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeService{answer: tc.answer}
			srv := httptest.NewServer(f)
			defer srv.Close()
			b := newBackend(t, srv.URL, func(c *Config) { c.MaxResponseBytes = 2 << 10 })
			raw, err := b.CallRaw(t.Context(), "x_tool", json.RawMessage(`{}`), tc.retry)
			if tc.code != "" {
				if toolerr.CodeOf(err) != tc.code {
					t.Fatalf("got %v %s, want %s", err, raw, tc.code)
				}
				return
			}
			if err != nil || string(raw) != tc.want {
				t.Fatalf("got %s, %v", raw, err)
			}
		})
	}
}

func TestCallRawHonoursTheDeadline(t *testing.T) {
	f := &fakeService{answer: func(w http.ResponseWriter, r *http.Request, _ json.RawMessage, _ int32) {
		<-r.Context().Done()
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	b := newBackend(t, srv.URL)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := b.CallRaw(ctx, "x_tool", nil, true); toolerr.CodeOf(err) != toolerr.Timeout {
		t.Fatalf("got %v, want timeout", err)
	}
}

// TestCallRawResultsShareNoBytes: response buffers are reused between
// calls, so results of different sizes, announced or not, one after the
// other and at once, must each come back whole and alone.
func TestCallRawResultsShareNoBytes(t *testing.T) {
	result := func(n int32) string {
		return fmt.Sprintf(`{"content":[{"type":"text","text":"%d %s"}]}`, n, strings.Repeat(string(rune('a'+n%26)), int(n%7)*900))
	}
	f := &fakeService{answer: func(w http.ResponseWriter, r *http.Request, id json.RawMessage, _ int32) {
		n64, _ := strconv.ParseInt(r.Header.Get("X-N"), 10, 32)
		n := int32(n64)
		out := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result(n))
		if n%2 == 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		}
		fmt.Fprint(w, out)
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// fakeService reads the body itself: the call's n goes along in
		// a header.
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			Params struct {
				Arguments struct {
					N int32 `json:"n"`
				} `json:"arguments"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &msg)
		r.Header.Set("X-N", strconv.Itoa(int(msg.Params.Arguments.N)))
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.ServeHTTP(w, r)
	}))
	defer srv.Close()
	b := newBackend(t, srv.URL)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 30 {
				n := int32(g*30 + i)
				raw, err := b.CallRaw(t.Context(), "x_tool", json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), false)
				if err != nil || string(raw) != result(n) {
					t.Errorf("call %d: %v, %.60s…", n, err, raw)
					return
				}
			}
		})
	}
	wg.Wait()
}

// capture keeps the body of every response it carries.
type capture struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.mu.Lock()
	c.bodies = append(c.bodies, b)
	c.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, err
}

// TestServicesAnswerInThePlainLayout: what a toolkit service (mcp-go)
// answers to a tools/call is read without a decode.
func TestServicesAnswerInThePlainLayout(t *testing.T) {
	srv := realService(t)
	c := &capture{}
	b := newBackend(t, srv.URL+"/mcp", func(cfg *Config) { cfg.HTTPClient = &http.Client{Transport: c} })
	raw, err := b.CallRaw(t.Context(), "demo_args", json.RawMessage(`{"text":"x"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	last := c.bodies[len(c.bodies)-1]
	c.mu.Unlock()
	got, ok := plainResponse(last, b.nextID.Load())
	if !ok || string(got) != string(raw) {
		t.Fatalf("not read in the plain layout: %s", last)
	}
}

// TestPlainResponseIsTheDecode: plainResponse takes only messages whose
// decode gives the same result, and leaves the others to it.
func TestPlainResponseIsTheDecode(t *testing.T) {
	const res = `{"content":[{"type":"text","text":"}\"{"}],"structuredContent":{"a":[1,{"b":"}"}]}}`
	cases := []struct {
		name, msg string
		plain     bool
	}{
		{"as mcp-go writes it", `{"jsonrpc":"2.0","id":7,"result":` + res + `}`, true},
		{"a trailing newline", `{"jsonrpc":"2.0","id":7,"result":` + res + "}\n", true},
		{"another id", `{"jsonrpc":"2.0","id":70,"result":` + res + `}`, false},
		{"an id that starts the same", `{"jsonrpc":"2.0","id":7` + `0,"result":` + res + `}`, false},
		{"a member after the result", `{"jsonrpc":"2.0","id":7,"result":` + res + `,"error":{"code":1,"message":"x"}}`, false},
		{"a second result", `{"jsonrpc":"2.0","id":7,"result":{"a":1},"result":{"b":2}}`, false},
		{"invalid result", `{"jsonrpc":"2.0","id":7,"result":{"a":}}`, false},
		{"result not an object", `{"jsonrpc":"2.0","id":7,"result":"x"}`, false},
		{"space before the result", `{"jsonrpc":"2.0","id":7,"result": ` + res + `}`, false},
		{"space after the result", `{"jsonrpc":"2.0","id":7,"result":` + res + ` }`, false},
		{"other field order", `{"id":7,"jsonrpc":"2.0","result":` + res + `}`, false},
		{"cut short", `{"jsonrpc":"2.0","id":7,"result":{"a":1}`, false},
		{"empty result", `{"jsonrpc":"2.0","id":7,"result":}`, false},
		{"nothing after the prefix", `{"jsonrpc":"2.0","id":7,"result":`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := plainResponse([]byte(tc.msg), 7)
			if ok != tc.plain {
				t.Fatalf("plain: %v, want %v", ok, tc.plain)
			}
			if !ok {
				return
			}
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal([]byte(tc.msg), &msg); err != nil || string(msg.ID) != "7" || string(msg.Result) != string(got) {
				t.Fatalf("plain read %s; the decode %s, %s, %v", got, msg.ID, msg.Result, err)
			}
		})
	}
}

// FuzzPlainResponse: whatever plainResponse takes decodes to the same
// result, with id 7, as a valid message.
func FuzzPlainResponse(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte(`{"a":1},"error":{}`))
	f.Add([]byte(`{"a":"}"}}`))
	f.Fuzz(func(t *testing.T, result []byte) {
		msg := append([]byte(`{"jsonrpc":"2.0","id":7,"result":`), result...)
		msg = append(msg, '}')
		got, ok := plainResponse(msg, 7)
		if !ok {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(msg, &m); err != nil || string(m.ID) != "7" || string(m.Result) != string(got) {
			t.Fatalf("plain read %q; the decode %s, %q, %v", got, m.ID, m.Result, err)
		}
	})
}

// BenchmarkReadResponse: the answer to a tools/call taken apart by the
// decode and by plainResponse (with the copy post makes).
func BenchmarkReadResponse(b *testing.B) {
	for _, n := range []int{1, 500} {
		items := make([]map[string]any, n)
		for i := range items {
			items[i] = map[string]any{"id": i, "title": fmt.Sprintf("Series <%d> & friends", i), "monitored": i%2 == 0}
		}
		res, _ := toolkit.Success(map[string]any{"items": items}, 0)
		result, _ := json.Marshal(res)
		msg := []byte(`{"jsonrpc":"2.0","id":7,"result":` + string(result) + "}\n")
		b.Run(fmt.Sprintf("decode/%dB", len(msg)), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if json.Unmarshal(msg, &m) != nil {
					b.Fatal("decode")
				}
			}
		})
		b.Run(fmt.Sprintf("plain/%dB", len(msg)), func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				r, ok := plainResponse(msg, 7)
				if !ok {
					b.Fatal("not plain")
				}
				_ = bytes.Clone(r)
			}
		})
	}
}
