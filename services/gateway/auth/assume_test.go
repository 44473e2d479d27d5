package auth

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/fakeclock"
)

// Assume gives the identity the middleware gives a real request of the
// same client and end user, for every user mode; what the middleware
// would refuse, it refuses.
func TestAssumeIsWhatTheMiddlewareGives(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	owui, owuiLine, _ := NewToken("openwebui", []string{"users"}, UserJWT)
	plain, plainLine, _ := NewToken("legacy-ui", []string{"users"}, UserHeaders)
	none, noneLine, _ := NewToken("desktop", []string{"admins"}, UserNone)
	tokens, err := ParseTokens(strings.NewReader(owuiLine + "\n" + plainLine + "\n" + noneLine))
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(tokens, nil, UserTokens{Secret: []byte(owuiSecret), Now: clock.Now}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Middleware(echoIdentity()))
	t.Cleanup(srv.Close)
	clients := map[string]Client{}
	for _, c := range tokens.Clients() {
		clients[c.Name] = c
	}
	if len(clients) != 3 || clients["openwebui"].UserMode != UserJWT || clients["desktop"].Groups[0] != "admins" {
		t.Fatalf("Clients: %+v", tokens.Clients())
	}
	real := func(bearer string, h ...string) Identity {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+bearer)
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var id Identity
		if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&id) != nil {
			t.Fatalf("real request: HTTP %d", res.StatusCode)
		}
		return id
	}
	jwt := owuiToken(hs256, owuiClaims("ann@example.org", "pending", clock.Now()), owuiSecret, sha256.New)
	same := []struct {
		name               string
		client, user, role string
		real               Identity
	}{
		{"verified user with a role", "openwebui", "ann@example.org", "pending", real(owui, "X-OpenWebUI-User-Jwt", jwt)},
		{"user=jwt without a user token", "openwebui", "", "", real(owui)},
		{"plain user header", "legacy-ui", "bob@example.org", "", real(plain, "X-OpenWebUI-User-Email", "bob@example.org")},
		{"plain headers, none sent", "legacy-ui", "", "", real(plain)},
		{"no end users", "desktop", "", "", real(none)},
	}
	for _, tc := range same {
		got, err := a.Assume(clients[tc.client], tc.user, tc.role)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.real)
		if string(g) != string(w) {
			t.Errorf("%s:\n assumed %s\n real    %s", tc.name, g, w)
		}
	}
	if same[1].real.UserMissing == "" {
		t.Fatal("the middleware gave a user=jwt client without a token no UserMissing")
	}

	refused := []struct{ name, client, user, role, msg string }{
		{"a user for a client that names none", "desktop", "ann@example.org", "", "names no end user"},
		{"a role for plain headers", "legacy-ui", "bob@example.org", "admin", "carry no role"},
		{"user=jwt user without a role", "openwebui", "ann@example.org", "", "carry a role"},
		{"a role without a user", "openwebui", "", "admin", "a role comes with a user"},
		{"a user with a line break", "legacy-ui", "bob\n@example.org", "", "invalid user"},
		{"a role with a space", "openwebui", "ann@example.org", "super admin", "invalid role"},
	}
	for _, tc := range refused {
		if _, err := a.Assume(clients[tc.client], tc.user, tc.role); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.msg)
		}
	}
}
