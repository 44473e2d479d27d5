package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"hash"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/fakeclock"
)

const owuiSecret = "owui-forward-secret-0123456789abcdefghij"

// owuiToken mints a user token the way OpenWebUI does (PyJWT
// jwt.encode(payload, secret, algorithm="HS256")): compact JSON header
// {"alg":"HS256","typ":"JWT"}, the payload in OpenWebUI's key order, an
// HMAC over "header.payload". It is written by hand so the test does not
// trust the library it tests. alg and mac let a case forge other shapes.
func owuiToken(header map[string]any, payload []claim, secret string, mac func() hash.Hash) string {
	h, _ := json.Marshal(header)
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range payload {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c.k)
		v, _ := json.Marshal(c.v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	signing := b64(h) + "." + b64([]byte(b.String()))
	if mac == nil {
		return signing + "."
	}
	m := hmac.New(mac, []byte(secret))
	m.Write([]byte(signing))
	return signing + "." + b64(m.Sum(nil))
}

type claim struct {
	k string
	v any
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

var hs256 = map[string]any{"alg": "HS256", "typ": "JWT"}

// owuiClaims are OpenWebUI's claims for a user, issued at iat with its
// default lifetime of 300 seconds.
func owuiClaims(email, role string, iat time.Time) []claim {
	return []claim{
		{"sub", "2d95199f-1f70-4690-9b4a-8f98280ca9da"}, {"email", email}, {"name", "Ann"},
		{"role", role}, {"iss", "open-webui"}, {"iat", iat.Unix()}, {"exp", iat.Unix() + 300},
	}
}

func without(cs []claim, key string) []claim {
	var out []claim
	for _, c := range cs {
		if c.k != key {
			out = append(out, c)
		}
	}
	return out
}

func set(cs []claim, key string, v any) []claim {
	out := without(cs, key)
	return append(out, claim{key, v})
}

func TestOpenWebUIUserTokens(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	now := clock.Now()
	owui, owuiLine, _ := NewToken("openwebui", []string{"users"}, UserJWT)
	plain, plainLine, _ := NewToken("legacy-ui", []string{"users"}, UserHeaders)
	none, noneLine, _ := NewToken("desktop", []string{"users"}, UserNone)
	tokens, err := ParseTokens(strings.NewReader(owuiLine + "\n" + plainLine + "\n" + noneLine))
	if err != nil {
		t.Fatal(err)
	}
	var logs capture.Buffer
	a, err := NewAuthenticator(tokens, nil, UserTokens{Secret: []byte(owuiSecret), Now: clock.Now},
		newJSONLogger(&logs))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Middleware(echoIdentity()))
	t.Cleanup(srv.Close)

	valid := owuiToken(hs256, owuiClaims("ann@example.org", "admin", now), owuiSecret, sha256.New)
	req := func(bearer string, h ...string) http.Header {
		out := http.Header{"Authorization": {"Bearer " + bearer}}
		for i := 0; i+1 < len(h); i += 2 {
			out.Add(h[i], h[i+1])
		}
		return out
	}
	jwtHdr := "X-OpenWebUI-User-Jwt"
	tests := []struct {
		name    string
		header  http.Header
		status  int
		user    string
		role    string
		msgPart string
		missing string
	}{
		{name: "valid token", header: req(owui, jwtHdr, valid), status: 200, user: "ann@example.org", role: "admin"},
		{name: "ordinary user", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("bob@example.org", "user", now), owuiSecret, sha256.New)), status: 200, user: "bob@example.org", role: "user"},
		{name: "no email: the user is sub", header: req(owui, jwtHdr, owuiToken(hs256, set(owuiClaims("", "user", now), "email", ""), owuiSecret, sha256.New)), status: 200, user: "2d95199f-1f70-4690-9b4a-8f98280ca9da", role: "user"},
		{name: "pending role is passed on for the policy", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("new@example.org", "pending", now), owuiSecret, sha256.New)), status: 200, user: "new@example.org", role: "pending"},
		{name: "expired 10 s ago is within the clock leeway", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("ann@example.org", "admin", now.Add(-310*time.Second)), owuiSecret, sha256.New)), status: 200, user: "ann@example.org", role: "admin"},
		{name: "expired", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("ann@example.org", "admin", now.Add(-10*time.Minute)), owuiSecret, sha256.New)), status: 403, msgPart: "expired"},
		{name: "wrong secret", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("ann@example.org", "admin", now), "another-secret-0123456789abcdefghijklmnop", sha256.New)), status: 403, msgPart: "signature is invalid"},
		{name: "alg none", header: req(owui, jwtHdr, owuiToken(map[string]any{"alg": "none", "typ": "JWT"}, owuiClaims("ann@example.org", "admin", now), "", nil)), status: 403, msgPart: "not signed with HS256"},
		{name: "alg None", header: req(owui, jwtHdr, owuiToken(map[string]any{"alg": "None"}, owuiClaims("ann@example.org", "admin", now), "", nil)), status: 403, msgPart: "not signed with HS256"},
		{name: "HS512 with the right secret", header: req(owui, jwtHdr, owuiToken(map[string]any{"alg": "HS512", "typ": "JWT"}, owuiClaims("ann@example.org", "admin", now), owuiSecret, sha512.New)), status: 403, msgPart: "not signed with HS256"},
		{name: "RS256 header over an HMAC (key confusion)", header: req(owui, jwtHdr, owuiToken(map[string]any{"alg": "RS256", "typ": "JWT"}, owuiClaims("ann@example.org", "admin", now), owuiSecret, sha256.New)), status: 403, msgPart: "not signed with HS256"},
		{name: "no expiry", header: req(owui, jwtHdr, owuiToken(hs256, without(owuiClaims("ann@example.org", "admin", now), "exp"), owuiSecret, sha256.New)), status: 403, msgPart: "lacks a required claim"},
		{name: "wrong issuer", header: req(owui, jwtHdr, owuiToken(hs256, set(owuiClaims("ann@example.org", "admin", now), "iss", "evil"), owuiSecret, sha256.New)), status: 403, msgPart: "wrong issuer"},
		{name: "no issuer", header: req(owui, jwtHdr, owuiToken(hs256, without(owuiClaims("ann@example.org", "admin", now), "iss"), owuiSecret, sha256.New)), status: 403, msgPart: "lacks a required claim"},
		{name: "issued in the future", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("ann@example.org", "admin", now.Add(time.Hour)), owuiSecret, sha256.New)), status: 403, msgPart: "not valid yet"},
		{name: "no role", header: req(owui, jwtHdr, owuiToken(hs256, without(owuiClaims("ann@example.org", "admin", now), "role"), owuiSecret, sha256.New)), status: 403, msgPart: "no valid role"},
		{name: "role with spaces", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("ann@example.org", "super admin", now), owuiSecret, sha256.New)), status: 403, msgPart: "no valid role"},
		{name: "no user at all", header: req(owui, jwtHdr, owuiToken(hs256, without(without(owuiClaims("", "user", now), "email"), "sub"), owuiSecret, sha256.New)), status: 403, msgPart: "no valid user"},
		{name: "user with a control character", header: req(owui, jwtHdr, owuiToken(hs256, owuiClaims("ann\u0085@example.org", "user", now), owuiSecret, sha256.New)), status: 403, msgPart: "no valid user"},
		{name: "signature altered", header: req(owui, jwtHdr, valid[:len(valid)-2]+"AA"), status: 403, msgPart: "signature is invalid"},
		{name: "payload altered", header: req(owui, jwtHdr, alterPayload(valid)), status: 403, msgPart: "signature is invalid"},
		{name: "malformed", header: req(owui, jwtHdr, "not-a-jwt"), status: 403, msgPart: "malformed"},
		{name: "too large", header: req(owui, jwtHdr, strings.Repeat("a", 5000)), status: 400, msgPart: "too large"},
		{name: "two tokens", header: req(owui, jwtHdr, valid, jwtHdr, valid), status: 400, msgPart: "more than one"},
		// Discovery passes without a user; the router refuses every call.
		{name: "JWT client without a token", header: req(owui), status: 200, missing: "missing end-user token X-OpenWebUI-User-Jwt"},
		{name: "header-only request to a JWT client", header: req(owui, "X-OpenWebUI-User-Email", "ann@example.org", "X-OpenWebUI-User-Role", "admin"), status: 400, msgPart: "plain user headers"},
		{name: "plain role header beside a valid token", header: req(owui, jwtHdr, valid, "X-OpenWebUI-User-Role", "admin"), status: 400, msgPart: "plain user headers"},
		{name: "JWT to a header client", header: req(plain, jwtHdr, valid), status: 400, msgPart: "set up for plain user headers"},
		{name: "header client keeps its headers, no role", header: req(plain, "X-OpenWebUI-User-Email", "ann@example.org", "X-OpenWebUI-User-Role", "admin"), status: 200, user: "ann@example.org", role: ""},
		{name: "JWT to a client without end users", header: req(none, jwtHdr, valid), status: 400, msgPart: "not set up to"},
		{name: "client without end users", header: req(none), status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{}`))
			r.Header = tc.header
			resp, err := srv.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status != 200 {
				assertRPCError(t, resp, body)
				if !strings.Contains(string(body), tc.msgPart) {
					t.Errorf("refusal %s does not say %q", body, tc.msgPart)
				}
				return
			}
			var id Identity
			if err := json.Unmarshal(body, &id); err != nil {
				t.Fatal(err)
			}
			if id.User != tc.user || id.UserRole != tc.role {
				t.Errorf("user %q role %q, want %q %q", id.User, id.UserRole, tc.user, tc.role)
			}
			if (tc.missing == "") != (id.UserMissing == "") || !strings.Contains(id.UserMissing, tc.missing) {
				t.Errorf("user missing %q, want %q", id.UserMissing, tc.missing)
			}
		})
	}
	// No token, ours or OpenWebUI's, is ever written back or logged.
	for _, secret := range []string{valid, strings.Split(valid, ".")[2], owuiSecret, owui} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("logs contain token material %.20q…", secret)
		}
	}
}

func TestUserTokenHeaderAndAudienceAreConfigurable(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	owui, line, _ := NewToken("openwebui", []string{"users"}, UserJWT)
	tokens, _ := ParseTokens(strings.NewReader(line))
	a, err := NewAuthenticator(tokens, nil, UserTokens{Secret: []byte(owuiSecret), Header: "x-home-user-jwt", Audience: "toolgate", Now: clock.Now}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Middleware(echoIdentity()))
	t.Cleanup(srv.Close)
	claims := owuiClaims("ann@example.org", "admin", clock.Now())
	for _, tc := range []struct {
		name, header, token string
		status              int
		body                string
	}{
		{"configured header and audience", "X-Home-User-Jwt", owuiToken(hs256, set(claims, "aud", "toolgate"), owuiSecret, sha256.New), 200, `"User":"ann@example.org"`},
		// Under the default name the token is no user token: calls are refused.
		{"default header name is not read", "X-OpenWebUI-User-Jwt", owuiToken(hs256, set(claims, "aud", "toolgate"), owuiSecret, sha256.New), 200, `"UserMissing":"missing end-user token x-home-user-jwt`},
		{"audience missing", "X-Home-User-Jwt", owuiToken(hs256, claims, owuiSecret, sha256.New), 403, "lacks a required claim"},
		{"other audience", "X-Home-User-Jwt", owuiToken(hs256, set(claims, "aud", "elsewhere"), owuiSecret, sha256.New), 403, "wrong audience"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
			r.Header.Set("Authorization", "Bearer "+owui)
			r.Header.Set(tc.header, tc.token)
			resp, err := srv.Client().Do(r)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
				t.Errorf("status %d, want %d; body %s, want %q", resp.StatusCode, tc.status, body, tc.body)
			}
		})
	}
}

func TestJWTClientsNeedAGoodSecret(t *testing.T) {
	_, jwtLine, _ := NewToken("openwebui", []string{"users"}, UserJWT)
	_, plainLine, _ := NewToken("desktop", []string{"users"}, UserNone)
	withJWT, _ := ParseTokens(strings.NewReader(jwtLine))
	withoutJWT, _ := ParseTokens(strings.NewReader(plainLine))
	if _, err := NewAuthenticator(withJWT, nil, UserTokens{}, nil); err == nil || !strings.Contains(err.Error(), "user=jwt") {
		t.Errorf("a user=jwt client without a secret: %v", err)
	}
	if _, err := NewAuthenticator(withJWT, nil, UserTokens{Secret: []byte("short")}, nil); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("a short secret: %v", err)
	}
	if _, err := NewAuthenticator(withoutJWT, nil, UserTokens{}, nil); err != nil {
		t.Errorf("no JWT client needs no secret: %v", err)
	}
}

func echoIdentity() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _ := IdentityFrom(r.Context())
		_ = json.NewEncoder(w).Encode(id)
	})
}

// alterPayload swaps the role in a token's payload, keeping the signature.
func alterPayload(tok string) string {
	parts := strings.Split(tok, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	parts[1] = b64([]byte(strings.Replace(string(raw), `"role":"admin"`, `"role":"owner"`, 1)))
	return strings.Join(parts, ".")
}

func newJSONLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
