package app_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/stdio"
)

// The differential test of the one admission step: every front a client
// can call a tool through × every kind of caller × {read, preview,
// confirm} must end the same way — the same outcome, the same error code,
// the same number of writes applied (none unless the call may), and the
// same audit lines. A new front is one more entry in fronts().

// caller is who calls: a client's bearer token and the headers its front
// end adds (OpenWebUI's signed user token).
type caller struct {
	name   string
	bearer string
	header map[string]string
	// user and role are the end user the gateway would bind a ticket to.
	client, user, role string
	// groups and mode are the client's line in the tokens file.
	groups []string
	mode   auth.UserMode
}

// outcome is how one call ended, whatever the front's words for it.
type outcome struct {
	// Code: ok (a read's result), preview, applied, an error code
	// (not_found, forbidden, …), or http_<status> when the request was
	// refused before it reached the MCP or OpenAPI layer.
	Code string
	// Applied is how many writes the service applied during the call.
	Applied int64
	// Audit are the call's audit lines: event/decision/outcome/reason.
	Audit []string
}

// front sends one tools/call of tool on endpoint (a service or toolset
// name) with args, as the caller, and reports the outcome's Code.
type front struct {
	name string
	// scoped: the front addresses an endpoint, so it can name a toolset;
	// discovery calls any tool the caller may use.
	scoped bool
	call   func(r *frontRig, t *testing.T, who caller, endpoint, tool string, args map[string]any) string
}

func fronts() []front {
	return []front{
		{"MCP session through mcp-go", true, func(r *frontRig, t *testing.T, who caller, endpoint, tool string, args map[string]any) string {
			// A _meta other than a progress token is mcp-go's to serve.
			return r.sessionCall(t, who, "/mcp/"+endpoint, tool, args, `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},`)
		}},
		{"MCP session, direct path", true, func(r *frontRig, t *testing.T, who caller, endpoint, tool string, args map[string]any) string {
			return r.sessionCall(t, who, "/mcp/"+endpoint, tool, args, "")
		}},
		{"MCP 2026-07-28 without a session (go-sdk)", true, (*frontRig).sdkCall},
		{"discovery's toolgate_call_tool", false, func(r *frontRig, t *testing.T, who caller, _, tool string, args map[string]any) string {
			return r.sessionCall(t, who, "/mcp/discover", "toolgate_call_tool", map[string]any{"name": tool, "arguments": args}, "")
		}},
		{"OpenAPI tool server", true, (*frontRig).openAPICall},
		{"stdio bridge", true, (*frontRig).stdioCall},
	}
}

// TestEveryFrontAdmitsAlike is the differential matrix.
func TestEveryFrontAdmitsAlike(t *testing.T) {
	r := newFrontRig(t)
	now := r.h.clock.Now()
	callers := []caller{
		{name: "user=jwt client, valid user token", bearer: r.owui, header: r.jwt("ann@example.org", "user", now, now.Add(5*time.Minute), owuiJWTSecret),
			client: "owui", user: "ann@example.org", role: "user", groups: []string{"users"}, mode: auth.UserJWT},
		{name: "user=jwt client, no user token", bearer: r.owui, client: "owui", groups: []string{"users"}, mode: auth.UserJWT},
		{name: "user=jwt client, expired user token", bearer: r.owui, header: r.jwt("ann@example.org", "user", now.Add(-10*time.Minute), now.Add(-5*time.Minute), owuiJWTSecret),
			client: "owui", user: "ann@example.org", role: "user", groups: []string{"users"}, mode: auth.UserJWT},
		{name: "user=jwt client, forged user token", bearer: r.owui, header: r.jwt("ann@example.org", "admin", now, now.Add(5*time.Minute), "not-the-shared-secret-0123456789abcdef"),
			client: "owui", user: "ann@example.org", role: "admin", groups: []string{"users"}, mode: auth.UserJWT},
		{name: "user=jwt client, user in a role that may do nothing", bearer: r.owui, header: r.jwt("new@example.org", "pending", now, now.Add(5*time.Minute), owuiJWTSecret),
			client: "owui", user: "new@example.org", role: "pending", groups: []string{"users"}, mode: auth.UserJWT},
		{name: "read-only client", bearer: r.kiosk, client: "kiosk", groups: []string{"readonly"}},
		{name: "client with no rights", bearer: r.stranger, client: "stranger", groups: []string{"nobody"}},
	}
	read := map[string]any{"text": "matrix"}
	write := map[string]any{"amount": 2}
	type want struct{ read, preview, confirm string }
	wants := map[string]want{
		callers[0].name: {"ok", "preview", "applied"},
		callers[1].name: {"forbidden", "forbidden", "forbidden"},
		callers[2].name: {"http_403", "http_403", "http_403"},
		callers[3].name: {"http_403", "http_403", "http_403"},
		callers[4].name: {"not_found", "not_found", "not_found"},
		callers[5].name: {"ok", "not_found", "not_found"},
		callers[6].name: {"not_found", "not_found", "not_found"},
	}
	type row struct {
		name     string
		who      caller
		endpoint string // "demo-reads" is a toolset of demo_echo only
		want     want
	}
	var rows []row
	for _, c := range callers {
		rows = append(rows, row{c.name, c, "demo", wants[c.name]})
	}
	rows = append(rows, row{"toolset endpoint without the tool", callers[0], "demo-reads", want{"ok", "not_found", "not_found"}})

	for _, rw := range rows {
		t.Run(rw.name, func(t *testing.T) {
			steps := []struct {
				name, tool, want string
				args             func() map[string]any
			}{
				{"read", "demo_echo", rw.want.read, func() map[string]any { return read }},
				{"preview", "demo_counter_add", rw.want.preview, func() map[string]any { return write }},
				{"confirm", "demo_counter_add", rw.want.confirm, func() map[string]any { return r.confirmArgs(t, rw.who, write) }},
			}
			for _, st := range steps {
				t.Run(st.name, func(t *testing.T) {
					var first *outcome
					firstFront := ""
					for _, f := range fronts() {
						if !f.scoped && rw.endpoint != "demo" {
							continue // discovery has no toolsets
						}
						args := st.args()
						if first == nil {
							r.explainAgrees(t, rw.who, rw.endpoint, st.tool, args, st.want)
						}
						got := r.run(t, f, rw.who, rw.endpoint, st.tool, args)
						if got.Code != st.want {
							t.Errorf("%s: %s, want %s (audit %v)", f.name, got.Code, st.want, got.Audit)
						}
						if want := int64(0); st.want == "applied" {
							if got.Applied != 1 {
								t.Errorf("%s: applied %d writes, want 1", f.name, got.Applied)
							}
						} else if got.Applied != want {
							t.Errorf("%s: applied %d writes on a call that may not write", f.name, got.Applied)
						}
						if first == nil {
							first, firstFront = &got, f.name
							continue
						}
						if strings.Join(got.Audit, "\n") != strings.Join(first.Audit, "\n") {
							t.Errorf("audit lines differ:\n %s: %v\n %s: %v", firstFront, first.Audit, f.name, got.Audit)
						}
					}
				})
			}
		})
	}
}

// explainAgrees holds the gateway's explanation of a call (what `gateway
// policy explain` and the console show) to the outcome the call really
// has: the same admission step and policy decision, nothing run.
func (r *frontRig) explainAgrees(t *testing.T, who caller, endpoint, tool string, args map[string]any, want string) {
	t.Helper()
	if strings.HasPrefix(want, "http_") {
		return // refused by the auth middleware, before any identity
	}
	id := auth.Identity{Client: auth.Client{Name: who.client, Groups: who.groups, UserMode: who.mode}, User: who.user, UserRole: who.role}
	if who.mode == auth.UserJWT && who.header == nil {
		id.UserMissing = "missing end-user token"
	}
	ex := r.h.gw.Router.Explain(auth.WithIdentity(t.Context(), id), endpoint, tool, json.RawMessage(mustJSON(t, args)))
	got := string(ex.Code)
	if ex.Refused == "" {
		switch d := ex.Decision; {
		case d.Decision == "allow" && !ex.Write:
			got = "ok"
		case d.Decision == "confirm" && args["ticket"] == nil:
			got = "preview"
		case d.Decision == "confirm":
			got = "applied"
		default:
			got = d.Decision
		}
	}
	if got != want {
		t.Errorf("explain: %s (%+v), the call: %s", got, ex, want)
	}
}

// frontRig is the harness with three clients of its own — an
// OpenWebUI-style client (user=jwt, group users), a read-only one and one
// with no rights — and a toolset of demo_echo only.
type frontRig struct {
	h                     *harness
	owui, kiosk, stranger string // bearer tokens
}

func newFrontRig(t *testing.T) *frontRig {
	r := &frontRig{}
	var lines []string
	for _, c := range []struct {
		bearer *string
		name   string
		group  string
		mode   auth.UserMode
	}{{&r.owui, "owui", "users", auth.UserJWT}, {&r.kiosk, "kiosk", "readonly", auth.UserNone}, {&r.stranger, "stranger", "nobody", auth.UserNone}} {
		token, line, err := auth.NewToken(c.name, []string{c.group}, c.mode)
		if err != nil {
			t.Fatal(err)
		}
		*c.bearer = token
		lines = append(lines, line)
	}
	r.h = newHarness(t, func(c *app.Config) {
		tokens, err := auth.ParseTokens(strings.NewReader(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		c.Tokens = tokens
		c.UserTokens = auth.UserTokens{Secret: []byte(owuiJWTSecret)}
		c.Toolsets = append(c.Toolsets, catalog.Toolset{Name: "demo-reads", Service: "demo", Tools: []string{"demo_echo"}})
	})
	return r
}

// jwt is the header of an OpenWebUI user token for email and role, issued
// at iat, expiring at exp, signed with secret.
func (r *frontRig) jwt(email, role string, iat, exp time.Time, secret string) map[string]string {
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(
		`{"sub":"u-1","email":%q,"name":"Ann","role":%q,"iss":"open-webui","iat":%d,"exp":%d}`, email, role, iat.Unix(), exp.Unix())))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(head + "." + body))
	return map[string]string{"X-OpenWebUI-User-Jwt": head + "." + body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))}
}

// confirmArgs returns the arguments of a confirm of write by who, with a
// ticket bound to who's call: the one a real preview issued for the
// verified user, and for any other caller one made in the ticket store
// for exactly its call, with that preview's digest — so if a front let
// the call through, the service would apply it.
func (r *frontRig) confirmArgs(t *testing.T, who caller, write map[string]any) map[string]any {
	t.Helper()
	ann := auth.Identity{Client: auth.Client{Name: "owui", Groups: []string{"users"}, UserMode: auth.UserJWT}, User: "ann@example.org", UserRole: "user"}
	res, err := r.h.gw.Router.CallTool(auth.WithIdentity(t.Context(), ann), "demo", "demo_counter_add", json.RawMessage(mustJSON(t, write)))
	if err != nil || res.IsError {
		t.Fatalf("reference preview: %v %v", err, res)
	}
	id, _ := structured(t, res)["ticket"].(string)
	issued, ok := r.h.gw.Tickets.Get(id)
	if !ok {
		t.Fatalf("reference preview issued no ticket: %v", structured(t, res))
	}
	if who.client != "owui" || who.user != ann.User || who.role != ann.UserRole {
		b := issued.Binding
		b.Client, b.User, b.UserRole = who.client, who.user, who.role
		mine, err := r.h.gw.Tickets.Issue(b, issued.PreviewDigest, approval.Model, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		id = mine.ID
	}
	out := map[string]any{"confirm": true, "ticket": id}
	for k, v := range write {
		out[k] = v
	}
	return out
}

// run sends one call through f and collects its outcome.
func (r *frontRig) run(t *testing.T, f front, who caller, endpoint, tool string, args map[string]any) outcome {
	t.Helper()
	applied := r.h.demo.applied.Load()
	from := len(r.h.audit.String())
	code := f.call(r, t, who, endpoint, tool, args)
	return outcome{Code: code, Applied: r.h.demo.applied.Load() - applied, Audit: auditSummary(t, r.h.audit.String()[from:])}
}

// auditSummary keeps what every front must write alike: each line's
// event, decision, outcome and reason.
func auditSummary(t *testing.T, lines string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		if l == "" {
			continue
		}
		var rec struct{ Event, Decision, Outcome, Reason, Tool string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		out = append(out, strings.Join([]string{rec.Event, rec.Tool, rec.Decision, rec.Outcome, rec.Reason}, "/"))
	}
	return out
}

// httpClient sends as who, and remembers the status of a request the
// gateway refused before any MCP or OpenAPI layer saw it (the auth
// middleware's JSON-RPC error, id null).
type refusals struct {
	mu     sync.Mutex
	status int
}

func (r *frontRig) httpClient(who caller) (*http.Client, *refusals) {
	hdr := map[string]string{"Authorization": "Bearer " + who.bearer}
	for k, v := range who.header {
		hdr[k] = v
	}
	ref := &refusals{}
	return &http.Client{Transport: roundTrip(func(req *http.Request) (*http.Response, error) {
		req = req.Clone(req.Context())
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil || res.StatusCode < 400 || res.StatusCode >= 500 {
			return res, err
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.JSONRPC == "2.0" && string(msg.ID) == "null" {
			ref.mu.Lock()
			if ref.status == 0 {
				ref.status = res.StatusCode
			}
			ref.mu.Unlock()
		}
		return res, nil
	})}, ref
}

func (f *refusals) code() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status == 0 {
		return "", false
	}
	return fmt.Sprintf("http_%d", f.status), true
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// resultCode reads an MCP tools/call result as an outcome code.
func resultCode(t *testing.T, result json.RawMessage) string {
	t.Helper()
	var res struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		t.Fatalf("result %s: %v", result, err)
	}
	return bodyCode(res.StructuredContent)
}

// bodyCode reads a result's structured content (or an OpenAPI body) as an
// outcome code.
func bodyCode(sc map[string]any) string {
	if c := errCode(sc); c != "" {
		return string(c)
	}
	switch sc["status"] {
	case "confirmation_required":
		return "preview"
	case "applied":
		return "applied"
	case nil:
		return "ok"
	}
	return fmt.Sprint(sc["status"])
}

// rpcCode reads a JSON-RPC response to tools/call as an outcome code.
func rpcCode(t *testing.T, body []byte) string {
	t.Helper()
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatalf("JSON-RPC answer %q: %v", body, err)
	}
	switch {
	case msg.Error != nil && msg.Error.Code == -32602:
		return "not_found" // MCP's answer to an unknown tool
	case msg.Error != nil:
		return fmt.Sprintf("rpc_%d", msg.Error.Code)
	}
	return resultCode(t, msg.Result)
}

// sessionCall opens a 2025-11-25 session on path as who and sends one
// tools/call whose params hold extra (JSON members and a comma) first.
func (r *frontRig) sessionCall(t *testing.T, who caller, path, tool string, args map[string]any, extra string) string {
	t.Helper()
	hc, ref := r.httpClient(who)
	post := func(body string, hdr map[string]string) (*http.Response, []byte) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.h.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, _ := post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"matrix","version":"1"}}}`, nil)
	if code, refused := ref.code(); refused {
		return code
	}
	hdr := map[string]string{"Mcp-Session-Id": res.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	if hdr["Mcp-Session-Id"] == "" {
		t.Fatalf("no session on %s", path)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	_, body := post(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{%s"name":%q,"arguments":%s}}`, extra, tool, mustJSON(t, args)), hdr)
	if code, refused := ref.code(); refused {
		return code
	}
	return rpcCode(t, body)
}

// sdkCall calls through the official Go SDK's client, which speaks the
// 2026-07-28 revision: no initialize, no session.
func (r *frontRig) sdkCall(t *testing.T, who caller, endpoint, tool string, args map[string]any) string {
	t.Helper()
	hc, ref := r.httpClient(who)
	c := sdk.NewClient(&sdk.Implementation{Name: "matrix-sdk", Version: "1"}, nil)
	sess, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: r.h.URL + "/mcp/" + endpoint, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if code, refused := ref.code(); refused {
		return code
	}
	if err != nil {
		t.Fatalf("go-sdk connect: %v", err)
	}
	defer sess.Close()
	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if code, refused := ref.code(); refused {
		return code
	}
	if err != nil {
		if strings.Contains(err.Error(), "not found") {
			return "not_found"
		}
		t.Fatalf("go-sdk call: %v", err)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return resultCode(t, raw)
}

// openAPICall posts the arguments to OpenWebUI's OpenAPI tool server.
func (r *frontRig) openAPICall(t *testing.T, who caller, endpoint, tool string, args map[string]any) string {
	t.Helper()
	hc, ref := r.httpClient(who)
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.h.URL+"/openapi/"+endpoint+"/"+tool, strings.NewReader(mustJSON(t, args)))
	req.Header.Set("Content-Type", "application/json")
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if code, refused := ref.code(); refused {
		return code
	}
	var sc map[string]any
	if err := json.Unmarshal(body, &sc); err != nil {
		t.Fatalf("OpenAPI answer %d %q: %v", res.StatusCode, body, err)
	}
	return bodyCode(sc)
}

// stdioCall runs the stdio bridge (gateway stdio) in front of the
// endpoint, as a desktop client starts it, and speaks to it by lines.
func (r *frontRig) stdioCall(t *testing.T, who caller, endpoint, tool string, args map[string]any) string {
	t.Helper()
	hc, ref := r.httpClient(who)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- stdio.Run(ctx, stdio.Config{URL: r.h.URL + "/mcp/" + endpoint, Token: who.bearer, HTTPClient: hc, Logger: slog.New(slog.DiscardHandler)}, inR, outW)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 64<<10), 8<<20)
	answer := func(id string) []byte {
		for lines.Scan() {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(lines.Bytes(), &msg) == nil && string(msg.ID) == id {
				return append([]byte(nil), lines.Bytes()...)
			}
		}
		t.Fatalf("the bridge gave no answer to %s", id)
		return nil
	}
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"desktop","version":"1"}}}`)
	answer("0")
	code, refused := ref.code()
	if !refused {
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, mustJSON(t, args)))
		body := answer("1")
		if code, refused = ref.code(); !refused {
			code = rpcCode(t, body)
		}
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
	return code
}
