package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// rawBackend is a fakeBackend that can also pass results through, and
// counts which way each call went.
type rawBackend struct {
	fakeBackend
	mu       sync.Mutex
	raw      int
	decoded  int
	lastArgs string
	result   json.RawMessage // what CallRaw answers; nil: a plain success
}

func (b *rawBackend) Call(ctx context.Context, tool string, args any, meta map[string]any, retry bool) (*mcp.CallToolResult, error) {
	b.mu.Lock()
	b.decoded++
	b.mu.Unlock()
	return toolkit.Success(map[string]any{"tool": tool}, 0)
}

func (b *rawBackend) CallRaw(_ context.Context, tool string, args json.RawMessage, _ bool) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.raw++
	b.lastArgs = string(args)
	if b.result != nil {
		return b.result, nil
	}
	res, _ := toolkit.Success(map[string]any{"tool": tool}, 0)
	return json.Marshal(res)
}

func (b *rawBackend) counts() (raw, decoded int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.raw, b.decoded
}

type fastRig struct {
	t   *testing.T
	r   *Router
	b   *rawBackend
	srv *httptest.Server
}

func newFastRig(t *testing.T) *fastRig {
	t.Helper()
	ctx := context.Background()
	engine, err := policy.NewEmbedded(ctx, policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := approval.NewSigner([]byte("fast-test-approval-key-0123456789abcdef00"))
	pinStore, _ := pins.Load("")
	b := &rawBackend{fakeBackend: fakeBackend{name: "demo", tools: []string{"demo_echo"}}}
	r, err := New(Config{}, Deps{Policy: engine, Tickets: tickets.NewStore(nil, 100, 10), Pins: pinStore, Signer: signer, Backends: []Backend{b}})
	if err != nil {
		t.Fatal(err)
	}
	r.RefreshAll(ctx)
	rig := &fastRig{t: t, r: r, b: b}
	// The identity the auth middleware would set, from a test header.
	rig.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		groups := strings.Split(req.Header.Get("X-Test-Groups"), ",")
		id := auth.Identity{Client: auth.Client{Name: "c", Groups: groups}}
		req = req.WithContext(auth.WithIdentity(req.Context(), id))
		if req.Header.Get("X-Test-Via") == "mcp-go" {
			// Handler's way for a POST without its direct path: mcp-go's
			// answer to the very request the direct path serves.
			name := strings.Trim(strings.TrimPrefix(req.URL.Path, "/mcp"), "/")
			if _, msg, ok := mcpwire.ReadRequest(w, req); ok {
				r.post(w, req, name, r.handlers[name], msg, false)
			}
			return
		}
		r.Handler().ServeHTTP(w, req)
	}))
	t.Cleanup(rig.srv.Close)
	return rig
}

// post sends one message on session sid as a 2025-11-25 client and
// returns the status and the body.
func (f *fastRig) post(path, sid, groups, body string) (int, string, http.Header) {
	f.t.Helper()
	return f.send(path, sid, groups, body, false)
}

// postMCPGo is post, served the way Handler serves what its direct path
// does not take.
func (f *fastRig) postMCPGo(path, sid, groups, body string) (int, string, http.Header) {
	f.t.Helper()
	return f.send(path, sid, groups, body, true)
}

func (f *fastRig) send(path, sid, groups, body string, viaMCPGo bool) (int, string, http.Header) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Test-Groups", groups)
	if viaMCPGo {
		req.Header.Set("X-Test-Via", "mcp-go")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (f *fastRig) session(path, groups string) string {
	f.t.Helper()
	_, body, hdr := f.post(path, "", groups, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	if sid == "" {
		f.t.Fatalf("no session: %s", body)
	}
	f.post(path, sid, groups, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

const echoCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"hi"}}}`

// TestPlainCallsTakeTheDirectPath: a plain tools/call on a live 2025
// session is served without mcp-go and passes the service's result
// through; a call mcp-go must see (extra parameters, no session, another
// revision) still goes to mcp-go, and both answer the same.
func TestPlainCallsTakeTheDirectPath(t *testing.T) {
	f := newFastRig(t)
	for _, path := range []string{"/mcp", "/mcp/demo"} {
		sid := f.session(path, "users")
		raw0, dec0 := f.b.counts()
		status, direct, hdr := f.post(path, sid, "users", echoCall)
		raw1, dec1 := f.b.counts()
		if status != 200 || raw1 != raw0+1 || dec1 != dec0 || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: status %d, raw %d, decoded %d: %s", path, status, raw1-raw0, dec1-dec0, direct)
		}
		if f.b.lastArgs != `{"text":"hi"}` {
			t.Errorf("arguments sent %s", f.b.lastArgs)
		}
		// The same call with another _meta goes through mcp-go.
		status, viaMCPGo, _ := f.post(path, sid, "users", strings.Replace(echoCall, `"arguments"`, `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},"arguments"`, 1))
		raw2, dec2 := f.b.counts()
		if status != 200 || raw2 != raw1 || dec2 != dec1+1 {
			t.Fatalf("%s with _meta: status %d, raw %d, decoded %d", path, status, raw2-raw1, dec2-dec1)
		}
		if !sameJSON(t, direct, viaMCPGo) {
			t.Errorf("%s: the two ways answer differently:\n direct %s\n mcp-go %s", path, direct, viaMCPGo)
		}
	}
}

// withMeta is echoCall with params' _meta (or any member text) put before
// its arguments.
func withMeta(member string) string {
	return strings.Replace(echoCall, `"arguments"`, member+`,"arguments"`, 1)
}

// TestProgressCallsTakeTheDirectPath: a call whose _meta only asks for
// progress (as the TypeScript and Python SDKs and MCP Inspector send it)
// is served on the direct path, and its answer — status, headers, body,
// byte for byte — is mcp-go's answer to the very same request, which is
// in turn mcp-go's answer to the call without _meta: mcp-go sends no
// progress, opens no event stream and answers no differently for it.
func TestProgressCallsTakeTheDirectPath(t *testing.T) {
	f := newFastRig(t)
	cases := []struct{ name, body string }{
		{"integer token, TypeScript SDK", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"hi"},"_meta":{"progressToken":7}}}`},
		{"integer token, Python SDK", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"demo_echo","arguments":{"text":"hi"}}}`},
		{"token 0, MCP Inspector", withMeta(`"_meta":{"progressToken":0}`)},
		{"negative token", withMeta(`"_meta":{"progressToken":-12}`)},
		{"minus zero token", withMeta(`"_meta":{"progressToken":-0}`)},
		{"token of 20 digits", withMeta(`"_meta":{"progressToken":18446744073709551615}`)},
		{"token of 20 bytes with its sign", withMeta(`"_meta":{"progressToken":-9223372036854775808}`)},
		{"string token", withMeta(`"_meta":{"progressToken":"p-1"}`)},
		{"empty string token", withMeta(`"_meta":{"progressToken":""}`)},
		{"string token with escapes and non-ASCII", withMeta(`"_meta":{"progressToken":"\u00e9\"é😀\ud800"}`)},
		{"spaces inside _meta", withMeta(`"_meta" : { "progressToken" : 3 } `)},
		// Spellings encoding/json decodes to the same keys, as mcp-go does.
		{"escaped progressToken", withMeta(`"_meta":{"progress\u0054oken":1}`)},
		{"escaped _meta", withMeta(`"_\u006deta":{"progressToken":1}`)},
		{"no arguments", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"demo_echo","_meta":{"progressToken":1}}}`},
	}
	for _, path := range []string{"/mcp", "/mcp/demo"} {
		sid := f.session(path, "users")
		for _, tc := range cases {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				raw0, dec0 := f.b.counts()
				status, direct, hdr := f.post(path, sid, "users", tc.body)
				if raw, dec := f.b.counts(); raw != raw0+1 || dec != dec0 {
					t.Fatalf("not served on the direct path: raw %d, decoded %d: %s", raw-raw0, dec-dec0, direct)
				}
				mstatus, viaMCPGo, mhdr := f.postMCPGo(path, sid, "users", tc.body)
				if raw, dec := f.b.counts(); raw != raw0+1 || dec != dec0+1 {
					t.Fatalf("mcp-go's way not taken: raw %d, decoded %d", raw-raw0, dec-dec0)
				}
				if status != 200 || status != mstatus || direct != viaMCPGo {
					t.Fatalf("the two ways answer differently:\n direct %d %q\n mcp-go %d %q", status, direct, mstatus, viaMCPGo)
				}
				hdr.Del("Date")
				mhdr.Del("Date")
				if !reflect.DeepEqual(hdr, mhdr) {
					t.Fatalf("headers differ:\n direct %v\n mcp-go %v", hdr, mhdr)
				}
				// Without the _meta, mcp-go answers the same bytes.
				var msg struct {
					Params map[string]json.RawMessage `json:"params"`
				}
				if err := json.Unmarshal([]byte(tc.body), &msg); err != nil {
					t.Fatal(err)
				}
				delete(msg.Params, "_meta")
				p, _ := json.Marshal(msg.Params)
				id := tc.body[strings.Index(tc.body, `"id":`)+5 : strings.Index(tc.body, `,"method"`)]
				plainBody := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + string(p) + `}`
				if _, plainAnswer, phdr := f.postMCPGo(path, sid, "users", plainBody); plainAnswer != viaMCPGo || phdr.Get("Content-Type") != mhdr.Get("Content-Type") {
					t.Fatalf("mcp-go answers the call without _meta otherwise:\n %q\n %q", plainAnswer, viaMCPGo)
				}
			})
		}
	}
}

// TestOtherMetaStaysWithMCPGo: any _meta but a lone string or integer
// progressToken goes to mcp-go, which may answer it otherwise (a token
// it cannot decode is an error there).
func TestOtherMetaStaysWithMCPGo(t *testing.T) {
	f := newFastRig(t)
	sid := f.session("/mcp/demo", "users")
	for _, member := range []string{
		`"_meta":{}`,
		`"_meta":null`,
		`"_meta":"p"`,
		`"_meta":[{"progressToken":1}]`,
		`"_meta":{"progressToken":null}`,
		`"_meta":{"progressToken":true}`,
		`"_meta":{"progressToken":1.5}`,
		`"_meta":{"progressToken":1.0}`,
		`"_meta":{"progressToken":1e3}`,
		`"_meta":{"progressToken":{}}`,
		`"_meta":{"progressToken":[1]}`,
		`"_meta":{"progressToken":123456789012345678901}`,
		`"_meta":{"progressToken":1` + strings.Repeat("0", 400) + `}`,
		`"_meta":{"progressToken":1,"traceparent":"t"}`,
		`"_meta":{"traceparent":"t","progressToken":1}`,
		`"_meta":{"progressToken":1,"progressToken":2}`,
		`"_meta":{"ProgressToken":1}`,
		`"_meta":{"progressToken":1` + strings.Repeat("0", 400) + `},"_meta":{"progressToken":1}`,
		`"_meta":{"progressToken":1},"_\u006deta":{"progressToken":1}`,
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","progressToken":1}`,
		`"_Meta":{"progressToken":1}`,
		`"_META":{"progressToken":1}`,
		`"_meta":{"progressToken":1},"_meta":{"progressToken":2}`,
		`"_meta":{"progressToken":1},"task":{}`,
	} {
		t.Run(member, func(t *testing.T) {
			raw0, dec0 := f.b.counts()
			status, body, _ := f.post("/mcp/demo", sid, "users", withMeta(member))
			if raw, _ := f.b.counts(); raw != raw0 {
				t.Fatalf("served on the direct path: %s", body)
			}
			_, dec := f.b.counts()
			if status != 200 || (dec != dec0+1 && !strings.Contains(body, `"error"`)) {
				t.Fatalf("status %d, decoded %d: %s", status, dec-dec0, body)
			}
		})
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

// TestDirectPathRefusesWhatMCPGoRefuses: forged, missing and ended
// sessions, tools the endpoint does not offer or the caller may not see,
// for a plain call and for one that asks for progress.
func TestDirectPathRefusesWhatMCPGoRefuses(t *testing.T) {
	f := newFastRig(t)
	sid := f.session("/mcp/demo", "users")
	notFound := `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"tool 'demo_echo' not found: tool not found"}}` + "\n"
	cases := []struct {
		name, sid, groups, body string
		status                  int
		want                    string // the JSON-RPC answer, when 200
	}{
		{"forged session", "mcp-session-00000000000000000000000000000000", "users", echoCall, 404, ""},
		{"hidden from the caller", sid, "nobody", echoCall, 200, notFound},
		{"unknown tool", sid, "users", strings.Replace(echoCall, "demo_echo", "demo_nosuch", 1), 200,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"tool 'demo_nosuch' not found: tool not found"}}` + "\n"},
	}
	for _, tc := range cases {
		for _, progress := range []bool{false, true} {
			body := tc.body
			if progress {
				body = strings.Replace(body, `"arguments"`, `"_meta":{"progressToken":7},"arguments"`, 1)
			}
			t.Run(fmt.Sprintf("%s/progress=%t", tc.name, progress), func(t *testing.T) {
				raw0, dec0 := f.b.counts()
				status, answer, _ := f.post("/mcp/demo", tc.sid, tc.groups, body)
				if raw, dec := f.b.counts(); raw != raw0 || dec != dec0 {
					t.Fatal("the service was called")
				}
				if status != tc.status || (tc.want != "" && answer != tc.want) {
					t.Fatalf("status %d: %q", status, answer)
				}
				// mcp-go says the same to the very same request.
				mstatus, viaMCPGo, _ := f.postMCPGo("/mcp/demo", tc.sid, tc.groups, body)
				if mstatus != status || (tc.want != "" && viaMCPGo != answer) {
					t.Errorf("mcp-go answers %d %q", mstatus, viaMCPGo)
				}
			})
		}
	}
	t.Run("ended session", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodDelete, f.srv.URL+"/mcp/demo", nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("X-Test-Groups", "users")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("DELETE: %v %v", err, resp)
		}
		resp.Body.Close()
		raw0, _ := f.b.counts()
		for _, body := range []string{echoCall, withMeta(`"_meta":{"progressToken":7}`)} {
			if status, answer, _ := f.post("/mcp/demo", sid, "users", body); status != 404 {
				t.Fatalf("call on an ended session: %d %s", status, answer)
			}
		}
		if raw, _ := f.b.counts(); raw != raw0 {
			t.Fatal("the service was called")
		}
	})
	t.Run("session of another endpoint", func(t *testing.T) {
		other := f.session("/mcp", "users")
		for _, body := range []string{echoCall, withMeta(`"_meta":{"progressToken":7}`)} {
			if status, answer, _ := f.post("/mcp/demo", other, "users", body); status != 404 {
				t.Fatalf("%d %s", status, answer)
			}
		}
	})
}

// TestResultsPassedThroughKeepOnlyWhatMayLeave: the service's _meta and
// resultType stay behind, unknown content or a result over the cap take
// the decoding way, and both ways give the client the same.
func TestResultsPassedThroughKeepOnlyWhatMayLeave(t *testing.T) {
	big := strings.Repeat("x", 600<<10)
	cases := []struct {
		name   string
		result string
		check  func(t *testing.T, result map[string]any)
	}{
		{"meta and result type dropped",
			`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"demo"},"secret":"s"},"resultType":"complete","content":[{"type":"text","text":"ok"}],"structuredContent":{"ok":true}}`,
			func(t *testing.T, r map[string]any) {
				if _, ok := r["_meta"]; ok {
					t.Error("_meta left")
				}
				if _, ok := r["resultType"]; ok {
					t.Error("resultType left")
				}
				if r["structuredContent"].(map[string]any)["ok"] != true {
					t.Error("structured content lost")
				}
			}},
		{"failure keeps isError",
			`{"content":[{"type":"text","text":"{\"error\":{\"code\":\"not_found\"}}"}],"structuredContent":{"error":{"code":"not_found","message":"m"}},"isError":true}`,
			func(t *testing.T, r map[string]any) {
				if r["isError"] != true {
					t.Error("isError lost")
				}
			}},
		{"over the cap is cut",
			`{"content":[{"type":"text","text":"` + big + `"}]}`,
			func(t *testing.T, r map[string]any) {
				text := r["content"].([]any)[0].(map[string]any)["text"].(string)
				if len(text) >= len(big) || !strings.Contains(text, "[toolgate: truncated") {
					t.Errorf("not cut: %d bytes", len(text))
				}
			}},
		{"no content at all", `{"structuredContent":{"n":1}}`,
			func(t *testing.T, r map[string]any) {
				if c, ok := r["content"].([]any); !ok || len(c) != 0 {
					t.Errorf("content %v", r["content"])
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFastRig(t)
			f.b.result = json.RawMessage(tc.result)
			sid := f.session("/mcp/demo", "users")
			_, body, _ := f.post("/mcp/demo", sid, "users", echoCall)
			var msg struct {
				Result map[string]any `json:"result"`
			}
			if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.Result == nil {
				t.Fatalf("%v: %.300s", err, body)
			}
			tc.check(t, msg.Result)
			// The decoding way (forward, as mcp-go's path runs it) on the
			// same service answer gives the same result.
			var res mcp.CallToolResult
			if err := json.Unmarshal([]byte(tc.result), &res); err != nil {
				t.Fatal(err)
			}
			clean, _ := f.r.clean(&res)
			want, _ := json.Marshal(clean)
			got, _ := json.Marshal(msg.Result)
			if !sameJSON(t, string(got), string(want)) {
				t.Errorf("passthrough and decoding differ:\n got  %.300s\n want %.300s", got, want)
			}
		})
	}
}
