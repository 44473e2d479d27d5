package faketuliprox_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
)

type served struct {
	url   string
	clock *fakeclock.Clock
	fake  *faketuliprox.Fake
}

func serve(t *testing.T, o faketuliprox.Options) served {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC))
	o.Now = clock.Now
	f := faketuliprox.New(o)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return served{url: srv.URL + o.WebPath, clock: clock, fake: f}
}

func do(t *testing.T, method, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func signIn(t *testing.T, s served, user, pass string) string {
	t.Helper()
	code, _, body := do(t, "POST", s.url+"/auth/token", "", `{"username":"`+user+`","password":"`+pass+`"}`)
	if code != 200 {
		t.Fatalf("sign-in: %d %s", code, body)
	}
	var tr struct{ Token, Username string }
	if err := json.Unmarshal([]byte(body), &tr); err != nil || tr.Username != user {
		t.Fatalf("sign-in answer %s", body)
	}
	return tr.Token
}

// The sign-in and the permission layer answer as Tuliprox's do.
func TestAuthAnswersAsTuliprox(t *testing.T) {
	s := serve(t, faketuliprox.Options{WebPath: "/admin", TokenTTL: 10 * time.Minute})
	if code, _, _ := do(t, "POST", s.url+"/auth/token", "", `{"username":"assistant","password":"wrong"}`); code != 401 {
		t.Fatalf("wrong password: %d", code)
	}
	tok := signIn(t, s, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword)
	if code, _, _ := do(t, "GET", s.url+"/api/v1/status", tok, ""); code != 200 {
		t.Fatalf("status: %d", code)
	}
	if code, _, _ := do(t, "GET", s.url+"/api/v1/status", "", ""); code != 403 {
		t.Fatalf("no Authorization header: %d, want 403 (AuthBearer)", code)
	}
	if code, _, _ := do(t, "GET", s.url+"/api/v1/geoip/update", tok, ""); code != 403 {
		t.Fatalf("missing system.write: %d", code)
	}
	s.clock.Advance(11 * time.Minute)
	code, hdr, _ := do(t, "GET", s.url+"/api/v1/status", tok, "")
	if code != 401 || hdr.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("expired token: %d %q", code, hdr.Get("WWW-Authenticate"))
	}
	tok = signIn(t, s, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword)
	s.fake.RevokeTokens()
	if code, _, _ := do(t, "GET", s.url+"/api/v1/status", tok, ""); code != 401 {
		t.Fatalf("revoked token: %d", code)
	}
}

func TestWithoutWebAuthentication(t *testing.T) {
	s := serve(t, faketuliprox.Options{NoAuth: true})
	code, _, body := do(t, "POST", s.url+"/auth/token", "", `{"username":"","password":""}`)
	if code != 200 || strings.TrimSpace(body) != `{"token":"authorized","username":"admin"}` {
		t.Fatalf("%d %s", code, body)
	}
	if code, _, _ := do(t, "GET", s.url+"/api/v1/streams", "", ""); code != 200 {
		t.Fatalf("streams without a token: %d", code)
	}
}

// A queued update answers 409 until it has run; the status follows it.
func TestPlaylistUpdateQueue(t *testing.T) {
	s := serve(t, faketuliprox.Options{})
	tok := signIn(t, s, faketuliprox.DemoOperator, faketuliprox.DemoOperatorPassword)
	state := func() string {
		_, _, body := do(t, "GET", s.url+"/api/v1/playlist/update/status", tok, "")
		var st struct{ State string }
		_ = json.Unmarshal([]byte(body), &st)
		return st.State
	}
	if code, _, _ := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `["nope"]`); code != 400 {
		t.Fatalf("unknown target: %d", code)
	}
	code, _, body := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `["main"]`)
	if code != 202 || !strings.Contains(body, `"run_id":1`) {
		t.Fatalf("update: %d %s", code, body)
	}
	if state() != "queued" {
		t.Fatal("not queued")
	}
	if code, _, _ := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `[]`); code != 409 {
		t.Fatalf("second update while queued: %d", code)
	}
	s.clock.Advance(faketuliprox.UpdateQueued)
	if state() != "running" {
		t.Fatal("not running")
	}
	s.clock.Advance(faketuliprox.UpdateRuns)
	if state() != "idle" {
		t.Fatal("not idle")
	}
	if code, _, _ := do(t, "POST", s.url+"/api/v1/playlist/update", tok, `[]`); code != 202 {
		t.Fatalf("update after the run: %d", code)
	}
}

// An older release serves its Web UI page where newer routes would be.
func TestLegacyReleaseLacksTheNewerRoutes(t *testing.T) {
	s := serve(t, faketuliprox.Options{Legacy: true})
	tok := signIn(t, s, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword)
	code, hdr, body := do(t, "GET", s.url+"/api/v1/playlist/sources", tok, "")
	if code != 200 || hdr.Get("Content-Type") != "text/html" || !strings.Contains(body, "<html") {
		t.Fatalf("%d %s %s", code, hdr.Get("Content-Type"), body)
	}
}
