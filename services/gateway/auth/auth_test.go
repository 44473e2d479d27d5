package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/capture"
)

// newTestTokens mints tokens for two clients and returns them with the
// parsed file.
func newTestTokens(t *testing.T) (tokens *Tokens, alice, bob string) {
	t.Helper()
	alice, lineA, err := NewToken("openwebui", []string{"family", "media"}, UserHeaders)
	if err != nil {
		t.Fatal(err)
	}
	bob, lineB, err := NewToken("claude-desktop", []string{"admin"}, UserNone)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err = ParseTokens(strings.NewReader("# clients\n\n" + lineA + "\n" + lineB + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tokens, alice, bob
}

// newServer serves an Authenticator whose inner handler echoes the Identity.
func newServer(t *testing.T, tokens *Tokens, logs io.Writer) *httptest.Server {
	t.Helper()
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	a, err := NewAuthenticator(tokens, []string{"https://chat.example.org", "http://localhost:3000/", "not an origin"}, UserTokens{}, logger)
	if err != nil {
		t.Fatal(err)
	}
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := IdentityFrom(r.Context())
		if !ok {
			http.Error(w, "no identity", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(id)
	})
	srv := httptest.NewServer(a.Middleware(inner))
	t.Cleanup(srv.Close)
	return srv
}

func TestMiddleware(t *testing.T) {
	tokens, alice, bob := newTestTokens(t)
	var logs capture.Buffer
	srv := newServer(t, tokens, &logs)

	const originBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"origin not allowed"}}`
	aliceClient := Client{Name: "openwebui", Groups: []string{"family", "media"}, UserMode: UserHeaders}
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	with := func(h http.Header, k string, v ...string) http.Header {
		h = h.Clone()
		h[http.CanonicalHeaderKey(k)] = v
		return h
	}

	tests := []struct {
		name      string
		header    http.Header
		status    int
		challenge string // expected WWW-Authenticate, "" for none
		want      *Identity
		body      string // exact body, when set
	}{
		{name: "valid token, no origin", header: bearer(alice), status: 200, want: &Identity{Client: aliceClient}},
		{name: "second client", header: bearer(bob), status: 200, want: &Identity{Client: Client{Name: "claude-desktop", Groups: []string{"admin"}}}},
		{name: "scheme lower case", header: http.Header{"Authorization": {"bearer " + alice}}, status: 200, want: &Identity{Client: aliceClient}},
		{name: "scheme upper case", header: http.Header{"Authorization": {"BEARER " + alice}}, status: 200, want: &Identity{Client: aliceClient}},
		{name: "allowed origin", header: with(bearer(alice), "Origin", "https://chat.example.org"), status: 200, want: &Identity{Client: aliceClient}},
		{name: "allowed origin, host case-insensitive", header: with(bearer(alice), "Origin", "https://CHAT.Example.ORG"), status: 200, want: &Identity{Client: aliceClient}},
		{name: "allowed origin with port (configured with slash)", header: with(bearer(alice), "Origin", "http://localhost:3000"), status: 200, want: &Identity{Client: aliceClient}},
		{name: "foreign origin", header: with(bearer(alice), "Origin", "https://evil.example"), status: 403, body: originBody},
		{name: "origin other port", header: with(bearer(alice), "Origin", "https://chat.example.org:8443"), status: 403, body: originBody},
		{name: "origin other scheme", header: with(bearer(alice), "Origin", "http://chat.example.org"), status: 403, body: originBody},
		{name: "origin suffix trick", header: with(bearer(alice), "Origin", "https://chat.example.org.evil.example"), status: 403, body: originBody},
		{name: "origin null", header: with(bearer(alice), "Origin", "null"), status: 403, body: originBody},
		{name: "origin with path", header: with(bearer(alice), "Origin", "https://chat.example.org/x"), status: 403, body: originBody},
		{name: "origin twice", header: with(bearer(alice), "Origin", "https://chat.example.org", "https://chat.example.org"), status: 403, body: originBody},
		{name: "malformed configured origin is not allowed", header: with(bearer(alice), "Origin", "not an origin"), status: 403, body: originBody},
		{name: "foreign origin checked before token", header: http.Header{"Origin": {"https://evil.example"}}, status: 403, body: originBody},
		{name: "missing authorization", header: http.Header{}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "basic scheme", header: http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "bearer without token", header: http.Header{"Authorization": {"Bearer"}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "bearer with blank token", header: http.Header{"Authorization": {"Bearer    "}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "token with inner space", header: http.Header{"Authorization": {"Bearer " + alice + " x"}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "token with bad character", header: http.Header{"Authorization": {"Bearer " + alice + "!"}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "two authorization headers", header: http.Header{"Authorization": {"Bearer " + alice, "Bearer " + alice}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "oversized token", header: bearer("tg_" + strings.Repeat("A", maxTokenLen)), status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "unknown token", header: bearer("tg_" + strings.Repeat("A", 43)), status: 401, challenge: `Bearer realm="toolgate", error="invalid_token"`},
		{name: "token one char short", header: bearer(alice[:len(alice)-1]), status: 401, challenge: `Bearer realm="toolgate", error="invalid_token"`},
		{name: "user from email", header: with(with(bearer(alice), "X-OpenWebUI-User-Email", "ann@example.org"), "X-OpenWebUI-User-Id", "u-1"), status: 200, want: &Identity{Client: aliceClient, User: "ann@example.org"}},
		{name: "user from id", header: with(with(bearer(alice), "X-OpenWebUI-User-Id", "u-1"), "X-Toolgate-User", "ann"), status: 200, want: &Identity{Client: aliceClient, User: "u-1"}},
		{name: "user from toolgate header", header: with(bearer(alice), "X-Toolgate-User", "ann"), status: 200, want: &Identity{Client: aliceClient, User: "ann"}},
		{name: "empty email falls through", header: with(with(bearer(alice), "X-OpenWebUI-User-Email", ""), "X-Toolgate-User", "ann"), status: 200, want: &Identity{Client: aliceClient, User: "ann"}},
		{name: "unicode user", header: with(bearer(alice), "X-Toolgate-User", "Zoë 🐈"), status: 200, want: &Identity{Client: aliceClient, User: "Zoë 🐈"}},
		{name: "user of 256 bytes", header: with(bearer(alice), "X-Toolgate-User", strings.Repeat("u", 256)), status: 200, want: &Identity{Client: aliceClient, User: strings.Repeat("u", 256)}},
		{name: "user of 257 bytes", header: with(bearer(alice), "X-Toolgate-User", strings.Repeat("u", 257)), status: 400},
		{name: "user invalid utf-8", header: with(bearer(alice), "X-OpenWebUI-User-Email", "ann\xff@example.org"), status: 400},
		{name: "user with tab", header: with(bearer(alice), "X-Toolgate-User", "ann\tadmin"), status: 400},
		{name: "user with C1 control", header: with(bearer(alice), "X-Toolgate-User", "ann\u0085admin"), status: 400},
		{name: "user with line separator", header: with(bearer(alice), "X-Toolgate-User", "ann\u2028admin"), status: 400},
		{name: "bad user checked after token", header: http.Header{"X-Toolgate-User": {strings.Repeat("u", 300)}}, status: 401, challenge: `Bearer realm="toolgate"`},
		{name: "user header from a client without end users", header: with(bearer(bob), "X-OpenWebUI-User-Email", "ann@example.org"), status: 400},
		{name: "role header from a client without end users", header: with(bearer(bob), "X-OpenWebUI-User-Role", "admin"), status: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tc.header
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tc.status, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tc.challenge {
				t.Errorf("WWW-Authenticate = %q, want %q", got, tc.challenge)
			}
			if tc.want != nil {
				var got Identity
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("identity: %v (%s)", err, body)
				}
				if !equalIdentity(got, *tc.want) {
					t.Errorf("identity = %+v, want %+v", got, *tc.want)
				}
				return
			}
			if tc.body != "" && string(body) != tc.body {
				t.Errorf("body = %s, want %s", body, tc.body)
			}
			assertRPCError(t, resp, body)
		})
	}
	if !strings.Contains(logs.String(), `"reason":"origin not allowed"`) || !strings.Contains(logs.String(), `"reason":"unknown bearer token"`) {
		t.Errorf("failures not logged with reasons: %s", logs.String())
	}
	if !strings.Contains(logs.String(), `"remote":"127.0.0.1:`) {
		t.Errorf("failures logged without remote address: %s", logs.String())
	}
}

func equalIdentity(a, b Identity) bool {
	return a.User == b.User && a.UserRole == b.UserRole && a.Client.Name == b.Client.Name && a.Client.UserMode == b.Client.UserMode &&
		strings.Join(a.Client.Groups, ",") == strings.Join(b.Client.Groups, ",")
}

// assertRPCError checks a refusal is a JSON-RPC-shaped error.
func assertRPCError(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not JSON: %v (%s)", err, body)
	}
	if m.JSONRPC != "2.0" || string(m.ID) != "null" || m.Error.Code != -32600 || m.Error.Message == "" {
		t.Errorf("not a JSON-RPC error: %s", body)
	}
}

// TestNoTokenLeak plants a distinctive token in every place a client can
// put it and checks it shows up in no log line, body or response header.
func TestNoTokenLeak(t *testing.T) {
	tokens, alice, _ := newTestTokens(t)
	var logs capture.Buffer
	srv := newServer(t, tokens, &logs)

	const canary = "tg_CANARYzq8Xv2LeakCheck0000000000000000000000"
	secrets := []string{canary, canary[:10], alice, alice[:10]}
	headers := []http.Header{
		{"Authorization": {"Bearer " + canary}},                                         // unknown token
		{"Authorization": {"Bearer " + canary + " extra"}},                              // malformed
		{"Authorization": {"Basic " + canary}},                                          // wrong scheme
		{"Authorization": {"Bearer " + canary}, "Origin": {"https://evil.example"}},     // origin refusal
		{"Authorization": {"Bearer " + alice}, "X-Toolgate-User": {"x\u0085y"}},         // valid token, bad user
		{"Authorization": {"Bearer " + alice}, "Origin": {"https://evil.example"}},      // valid token, bad origin
		{"Authorization": {"Bearer " + nearMiss(alice)}},                                // near miss
		{"Authorization": {"Bearer " + canary, "Bearer " + alice}},                      // two headers
		{"Authorization": {"bearer " + alice}, "X-OpenWebUI-User-Email": {"a@b.c\xfe"}}, // invalid utf-8 user
	}
	var seen bytes.Buffer
	for _, h := range headers {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
		req.Header = h
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			t.Fatalf("request with headers %d unexpectedly accepted", len(h))
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		seen.Write(body)
		_ = resp.Header.Write(&seen)
	}
	out := logs.String()
	if strings.Count(out, "auth rejected") != len(headers) {
		t.Fatalf("want %d logged rejections, got:\n%s", len(headers), out)
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("log output contains token material %q:\n%s", s, out)
		}
		if strings.Contains(seen.String(), s) {
			t.Errorf("responses contain token material %q", s)
		}
	}
}

func TestParseTokens(t *testing.T) {
	const h1 = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	const h2 = "sha256:" + "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
	tests := []struct {
		name    string
		in      string
		line    int    // 0: valid
		msg     string // part of the error message
		clients int
	}{
		{name: "valid with comments and blanks", in: "# header\n\n  " + h1 + "  owui  a,b \n\t# indented comment\n" + h2 + " cli x\n", clients: 2},
		{name: "upper-case hex", in: "sha256:" + strings.ToUpper(h1[7:]) + " owui a\n", clients: 1},
		{name: "empty file", in: "", clients: 0},
		{name: "two fields", in: h1 + " owui\n", line: 1, msg: "3 or 4 fields"},
		{name: "five fields", in: "#\n" + h1 + " owui a user=jwt b\n", line: 2, msg: "3 or 4 fields"},
		{name: "user mode jwt", in: h1 + " owui a user=jwt\n", clients: 1},
		{name: "user mode headers", in: h1 + " owui a user=headers\n", clients: 1},
		{name: "unknown user mode", in: h1 + " owui a user=cookie\n", line: 1, msg: "user=jwt or user=headers"},
		{name: "fourth field not a user mode", in: h1 + " owui a b\n", line: 1, msg: "user=jwt or user=headers"},
		{name: "no hash prefix", in: h1[7:] + " owui a\n", line: 1, msg: "sha256:"},
		{name: "other algorithm", in: "md5:" + h1[7:] + " owui a\n", line: 1, msg: "sha256:"},
		{name: "short hash", in: h1[:len(h1)-1] + " owui a\n", line: 1, msg: "64 hex"},
		{name: "non-hex hash", in: h1[:len(h1)-1] + "g owui a\n", line: 1, msg: "not hex"},
		{name: "bad client char", in: h1 + " ow/ui a\n", line: 1, msg: "client name"},
		{name: "client name too long", in: h1 + " " + strings.Repeat("c", 65) + " a\n", line: 1, msg: "client name"},
		{name: "client name of 64", in: h1 + " " + strings.Repeat("c", 64) + " a\n", clients: 1},
		{name: "empty group", in: h1 + " owui a,,b\n", line: 1, msg: "groups"},
		{name: "trailing comma", in: h1 + " owui a,\n", line: 1, msg: "groups"},
		{name: "bad group char", in: h1 + " owui a,b*\n", line: 1, msg: "groups"},
		{name: "group too long", in: h1 + " owui " + strings.Repeat("g", 65) + "\n", line: 1, msg: "groups"},
		{name: "duplicate hash", in: h1 + " owui a\n\n" + h1 + " cli b\n", line: 3, msg: "duplicate hash"},
		{name: "duplicate hash other case", in: h1 + " owui a\n" + "sha256:" + strings.ToUpper(h1[7:]) + " cli b\n", line: 2, msg: "duplicate hash"},
		{name: "duplicate name", in: h1 + " owui a\n# x\n" + h2 + " owui b\n", line: 3, msg: "duplicate client name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok, err := ParseTokens(strings.NewReader(tc.in))
			if tc.line == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if tok.Len() != tc.clients {
					t.Fatalf("clients = %d, want %d", tok.Len(), tc.clients)
				}
				return
			}
			if err == nil {
				t.Fatal("expected an error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line {
				t.Fatalf("error %v: want ParseError on line %d", err, tc.line)
			}
			if !errors.Is(err, ErrTokensFile) {
				t.Errorf("error %v does not wrap ErrTokensFile", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			if strings.Contains(strings.ToLower(err.Error()), h1[7:23]) {
				t.Errorf("error %q repeats the hash", err)
			}
		})
	}
}

func TestLoadTokens(t *testing.T) {
	_, line, err := NewToken("owui", []string{"family"}, UserNone)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "tokens")
	if err := os.WriteFile(good, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err := LoadTokens(good)
	if err != nil || tok.Len() != 1 {
		t.Fatalf("LoadTokens = %v, %v", tok, err)
	}

	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("# ok\n"+line+"\n"+line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadTokens(bad)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(err.Error(), bad) {
		t.Fatalf("LoadTokens(bad) = %v, want line 3 error naming the path", err)
	}

	if _, err := LoadTokens(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadTokens(missing) = %v, want fs.ErrNotExist", err)
	}
}

func TestNewTokenRoundTrip(t *testing.T) {
	token, line, err := NewToken("home-assistant.v2", []string{"home", "admins"}, UserJWT)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, TokenPrefix) || len(token) != len(TokenPrefix)+43 {
		t.Fatalf("token has wrong shape (len %d)", len(token))
	}
	if strings.Contains(line, token) || strings.Contains(line, token[len(TokenPrefix):]) {
		t.Fatal("tokens-file line contains the token itself")
	}
	if !strings.HasSuffix(line, " home-assistant.v2 home,admins user=jwt") {
		t.Fatalf("line = %q", line)
	}
	tokens, err := ParseTokens(strings.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := tokens.Lookup(token)
	if !ok || c.Name != "home-assistant.v2" || strings.Join(c.Groups, ",") != "home,admins" || c.UserMode != UserJWT {
		t.Fatalf("Lookup = %+v, %v", c, ok)
	}
	c.Groups[0] = "mutated"
	if c2, _ := tokens.Lookup(token); c2.Groups[0] != "home" {
		t.Fatal("Lookup shares its groups slice with callers")
	}

	// Changing any single character must fail.
	for i := range token {
		b := []byte(token)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		if _, ok := tokens.Lookup(string(b)); ok {
			t.Fatalf("token changed at %d still accepted", i)
		}
	}
	for _, tok := range []string{"", token + "A", token[:len(token)-1]} {
		if _, ok := tokens.Lookup(tok); ok {
			t.Fatalf("Lookup accepted a variant of length %d", len(tok))
		}
	}

	other, _, err := NewToken("home-assistant.v2", []string{"home"}, UserNone)
	if err != nil || other == token {
		t.Fatal("NewToken is not random")
	}
}

func TestNewTokenRejectsBadNames(t *testing.T) {
	tests := []struct {
		client string
		groups []string
	}{
		{"", []string{"a"}},
		{"bad name", []string{"a"}},
		{"ok", nil},
		{"ok", []string{""}},
		{"ok", []string{"a,b"}},
		{strings.Repeat("x", 65), []string{"a"}},
	}
	for _, tc := range tests {
		if tok, line, err := NewToken(tc.client, tc.groups, UserNone); err == nil {
			t.Errorf("NewToken(%q, %q) = %q, %q; want error", tc.client, tc.groups, tok, line)
		}
	}
}

func TestIdentityContext(t *testing.T) {
	if _, ok := IdentityFrom(context.Background()); ok {
		t.Fatal("identity in empty context")
	}
	want := Identity{Client: Client{Name: "c", Groups: []string{"g"}}, User: "u"}
	got, ok := IdentityFrom(WithIdentity(context.Background(), want))
	if !ok || !equalIdentity(got, want) {
		t.Fatalf("IdentityFrom = %+v, %v", got, ok)
	}
}

// nearMiss changes the token's last character to a different valid one.
func nearMiss(token string) string {
	last := "Q"
	if token[len(token)-1] == 'Q' {
		last = "R"
	}
	return token[:len(token)-1] + last
}
