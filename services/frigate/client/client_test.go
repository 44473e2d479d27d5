package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/frigate/client"
)

// Planted secrets: no error text may contain any of them.
const (
	user        = "viewer"
	password    = "pw-Planted-client-4711"
	bearerToken = "bearer-Planted-client-0815"
	sessionMark = "session-Planted-" // prefix of every session token the stub issues
	errorBody   = "UPSTREAM-BODY-Planted-must-not-leak"
)

// stub is a scripted Frigate: POST /api/login issues session cookies the
// way Frigate does, GET /api/data needs a live session or bearer token,
// GET /api/version is public. Knobs script the faults.
type stub struct {
	mu sync.Mutex
	// Knobs, set before use or under mu.
	loginStatus   int    // non-zero: /login answers this status and no cookie
	loginCookie   string // the cookie name /login sets (default frigate_token)
	loginRedirect string // non-empty: /login redirects here
	dataRedirect  string // non-empty: /data redirects here
	rejectData    bool   // /data answers 401 whatever the credentials
	loginGate     chan struct{}
	loginEntered  chan struct{}
	// Observations.
	logins     int
	loginBody  []map[string]any
	dataHdrs   []http.Header
	publicHdrs []http.Header
	valid      map[string]bool
	issued     int
	cookieSeen []string
}

func newStub(t *testing.T) (*stub, *httptest.Server) {
	t.Helper()
	s := &stub{valid: map[string]bool{bearerToken: true}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/login":
		s.login(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/api/data":
		s.data(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/api/version":
		s.mu.Lock()
		s.publicHdrs = append(s.publicHdrs, r.Header.Clone())
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("0.18.2-4d1a5c7"))
	default:
		http.NotFound(w, r)
	}
}

func (s *stub) login(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	s.logins++
	s.loginBody = append(s.loginBody, body)
	gate, entered := s.loginGate, s.loginEntered
	status, redirect, name := s.loginStatus, s.loginRedirect, s.loginCookie
	s.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	switch {
	case redirect != "":
		http.Redirect(w, r, redirect, http.StatusTemporaryRedirect)
		return
	case status != 0:
		http.Error(w, `{"message":"Frigate's reason","trace":"`+errorBody+`"}`, status)
		return
	case r.Header.Get("Content-Type") != "application/json" || body["user"] != user || body["password"] != password:
		http.Error(w, `{"message":"Login failed"}`, http.StatusUnauthorized)
		return
	}
	if name == "" {
		name = client.DefaultCookieName
	}
	s.mu.Lock()
	s.issued++
	tok := sessionMark + strconv.Itoa(s.issued)
	s.valid[tok] = true
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: name, Value: tok, Path: "/", HttpOnly: true})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}

func (s *stub) data(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.dataHdrs = append(s.dataHdrs, r.Header.Clone())
	ok := false
	if c, err := r.Cookie(client.DefaultCookieName); err == nil {
		s.cookieSeen = append(s.cookieSeen, c.Value)
		ok = s.valid[c.Value]
	}
	if c, err := r.Cookie("custom_cookie"); err == nil {
		s.cookieSeen = append(s.cookieSeen, c.Value)
		ok = s.valid[c.Value]
	}
	if tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
		ok = s.valid[tok]
	}
	ok = ok && !s.rejectData
	redirect := s.dataRedirect
	s.mu.Unlock()
	switch {
	case redirect != "":
		http.Redirect(w, r, redirect, http.StatusFound)
	case !ok:
		http.Error(w, `{"message":"Frigate's reason","trace":"`+errorBody+`"}`, http.StatusUnauthorized)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
}

// revoke ends every session the stub issued (a JWT secret rotation).
func (s *stub) revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.valid = map[string]bool{bearerToken: true}
}

func (s *stub) counts() (logins, reads int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins, len(s.dataHdrs)
}

func (s *stub) set(f func(*stub)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

type modeCfg func(*client.Config)

func managed(c *client.Config) {
	c.Mode, c.Username, c.Password = client.Managed, user, []byte(password)
}

func bearer(c *client.Config) { c.Mode, c.Token = client.Bearer, []byte(bearerToken) }

func unauthenticated(c *client.Config) { c.Mode = client.Unauthenticated }

func newClient(t *testing.T, srv *httptest.Server, mode modeCfg, more ...modeCfg) *client.Client {
	t.Helper()
	cfg := client.Config{Upstream: upstream.Config{BaseURL: srv.URL + "/api", AllowHTTP: true, Timeout: 5 * time.Second, MaxConcurrent: 32}}
	mode(&cfg)
	for _, m := range more {
		m(&cfg)
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// get runs one Read with one GET of /data.
func get(t *testing.T, c *client.Client) error {
	t.Helper()
	var out map[string]any
	err := c.Begin().GetJSON(t.Context(), "/data", nil, &out)
	noSecrets(t, err)
	if err == nil && out["ok"] != true {
		t.Fatalf("decoded %v", out)
	}
	return err
}

// noSecrets fails when any error text in err's chain holds a credential,
// a session token or the upstream's error body.
func noSecrets(t *testing.T, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		for _, s := range []string{password, bearerToken, sessionMark, errorBody} {
			if strings.Contains(e.Error(), s) || strings.Contains(toolerr.MessageOf(e), s) {
				t.Errorf("error %q contains %q", e.Error(), s)
			}
		}
	}
}

func wantCode(t *testing.T, err error, code toolerr.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if got := toolerr.CodeOf(err); err == nil || got != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  client.Config
		want string
	}{
		{"managed without password", client.Config{Mode: client.Managed, Username: user}, "username and a password"},
		{"managed without user", client.Config{Mode: client.Managed, Password: []byte(password)}, "username and a password"},
		{"bearer without token", client.Config{Mode: client.Bearer}, "needs a token"},
		{"bearer with a newline", client.Config{Mode: client.Bearer, Token: []byte(bearerToken + "\r\nX-Evil: 1")}, "control characters"},
		{"no mode", client.Config{}, "unknown authentication mode"},
		{"plain http without opt-in", client.Config{Mode: client.Unauthenticated, Upstream: upstream.Config{BaseURL: "http://frigate.lan:5000/api"}}, "http"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := client.New(tc.cfg)
			if err == nil || c != nil {
				t.Fatalf("New accepted %+v", tc.cfg)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			noSecrets(t, err)
		})
	}
}

// The managed flow: one POST /login with Frigate's body, then the session
// cookie on every read, reused across reads until it is rejected.
func TestManagedLoginAndCookieReuse(t *testing.T) {
	tests := []struct {
		name   string
		cookie string // Config.CookieName and the name the stub sets
		reads  int
	}{
		{"default cookie, one read", "", 1},
		{"default cookie reused over reads", "", 4},
		{"custom cookie name", "custom_cookie", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newStub(t)
			s.loginCookie = tc.cookie
			c := newClient(t, srv, managed, func(cfg *client.Config) { cfg.CookieName = tc.cookie })
			if c.Mode() != client.Managed || c.Mode().String() != "managed_session" {
				t.Errorf("mode = %v", c.Mode())
			}
			for i := 0; i < tc.reads; i++ {
				if err := get(t, c); err != nil {
					t.Fatalf("read %d: %v", i, err)
				}
			}
			logins, reads := s.counts()
			if logins != 1 || reads != tc.reads {
				t.Fatalf("logins = %d, reads = %d; want 1, %d", logins, reads, tc.reads)
			}
			if b := s.loginBody[0]; len(b) != 2 || b["user"] != user || b["password"] != password {
				t.Errorf("login body = %v", b)
			}
			for i, tok := range s.cookieSeen {
				if tok != sessionMark+"1" {
					t.Errorf("read %d sent cookie %q, want the first session", i, tok)
				}
			}
			for _, h := range s.dataHdrs {
				if h.Get("Authorization") != "" {
					t.Error("managed mode sent an Authorization header")
				}
			}
		})
	}
}

// A login whose answer lacks the configured cookie fails clearly and points
// at the cookie-name setting.
func TestLoginWithoutTheCookie(t *testing.T) {
	s, srv := newStub(t)
	s.loginCookie = "other_cookie"
	c := newClient(t, srv, managed)
	err := get(t, c)
	wantCode(t, err, toolerr.AuthFailed)
	if !strings.Contains(toolerr.MessageOf(err), "FRIGATE_AUTH_COOKIE_NAME") {
		t.Errorf("message %q does not name the setting", toolerr.MessageOf(err))
	}
	if _, reads := s.counts(); reads != 0 {
		t.Errorf("%d reads were sent without a session", reads)
	}
}

// Concurrent reads share one login, and after a revocation one re-login.
func TestConcurrentReadsShareOneLogin(t *testing.T) {
	const n = 16
	s, srv := newStub(t)
	// The first login is held until every reader has been started, so the
	// readers pile up behind it rather than running one after another.
	gate, entered := make(chan struct{}), make(chan struct{}, 2*n)
	s.set(func(s *stub) { s.loginGate, s.loginEntered = gate, entered })
	c := newClient(t, srv, managed)

	run := func() {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- c.Begin().GetJSON(context.Background(), "/data", nil, &map[string]any{})
			}()
		}
		<-entered
		close(gate)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("read: %v", err)
			}
		}
	}
	run()
	if logins, reads := s.counts(); logins != 1 || reads != n {
		t.Fatalf("after the first burst: logins = %d, reads = %d; want 1, %d", logins, reads, n)
	}

	s.revoke()
	gate = make(chan struct{})
	s.set(func(s *stub) { s.loginGate = gate })
	// Every reader's first request fails with the revoked session; the
	// first re-login is held until all have been started.
	run()
	if logins, _ := s.counts(); logins != 2 {
		t.Fatalf("after revocation: logins = %d, want 2 (one shared re-login)", logins)
	}
}

// A revoked session is re-established at most once per Read; a second
// rejection is reported as auth_failed.
func TestRevokedSession(t *testing.T) {
	tests := []struct {
		name string
		// setup runs under the stub's lock after the first successful read.
		setup func(s *stub)
		// getsPerRead is how many GETs each Read sends.
		getsPerRead, readsAfter int
		want                    toolerr.Code
		wantLogins, wantGets    int // totals after the readsAfter reads
	}{
		{name: "revoked once: one re-login, then success",
			setup: func(s *stub) { s.valid = map[string]bool{bearerToken: true} }, getsPerRead: 1, readsAfter: 1,
			want: "", wantLogins: 2, wantGets: 1 + 2},
		{name: "revoked once: later gets of the same read use the new session",
			setup: func(s *stub) { s.valid = map[string]bool{bearerToken: true} }, getsPerRead: 3, readsAfter: 1,
			want: "", wantLogins: 2, wantGets: 1 + 4},
		{name: "rejected again after re-login",
			setup: func(s *stub) { s.rejectData = true }, getsPerRead: 1, readsAfter: 1,
			want: toolerr.AuthFailed, wantLogins: 2, wantGets: 1 + 2},
		{name: "each read gets its own single re-login",
			setup: func(s *stub) { s.rejectData = true }, getsPerRead: 1, readsAfter: 3,
			want: toolerr.AuthFailed, wantLogins: 1 + 3, wantGets: 1 + 3*2},
		{name: "password changed: the re-login is rejected and remembered",
			setup: func(s *stub) { s.valid = map[string]bool{}; s.loginStatus = http.StatusUnauthorized }, getsPerRead: 1, readsAfter: 3,
			want: toolerr.AuthFailed, wantLogins: 2, wantGets: 1 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newStub(t)
			c := newClient(t, srv, managed)
			if err := get(t, c); err != nil {
				t.Fatal(err)
			}
			s.set(tc.setup)
			for i := 0; i < tc.readsAfter; i++ {
				r := c.Begin()
				var err error
				for j := 0; j < tc.getsPerRead && err == nil; j++ {
					err = r.GetJSON(t.Context(), "/data", nil, &map[string]any{})
				}
				noSecrets(t, err)
				wantCode(t, err, tc.want)
			}
			if logins, gets := s.counts(); logins != tc.wantLogins || gets != tc.wantGets {
				t.Fatalf("logins = %d, gets = %d; want %d, %d", logins, gets, tc.wantLogins, tc.wantGets)
			}
		})
	}
}

// A read that has already re-logged in reports the next 401 of a later GET
// without a third login.
func TestOneReloginPerRead(t *testing.T) {
	s, srv := newStub(t)
	c := newClient(t, srv, managed)
	r := c.Begin()
	if err := r.GetJSON(t.Context(), "/data", nil, &map[string]any{}); err != nil {
		t.Fatal(err)
	}
	s.revoke()
	if err := r.GetJSON(t.Context(), "/data", nil, &map[string]any{}); err != nil {
		t.Fatalf("the first revocation should be healed: %v", err)
	}
	s.revoke()
	err := r.GetJSON(t.Context(), "/data", nil, &map[string]any{})
	wantCode(t, err, toolerr.AuthFailed)
	if logins, _ := s.counts(); logins != 2 {
		t.Fatalf("logins = %d, want 2", logins)
	}
	// A new read may sign in again.
	if err := get(t, c); err != nil {
		t.Fatalf("next read: %v", err)
	}
	if logins, _ := s.counts(); logins != 3 {
		t.Fatalf("logins = %d after a new read, want 3", logins)
	}
}

// Rejected credentials are remembered and never sent again; transient
// login failures are not.
func TestLoginFailures(t *testing.T) {
	tests := []struct {
		name       string
		password   string
		status     int
		want       toolerr.Code
		remembered bool
		// says: the message names what to do.
		says string
	}{
		// frigate/api/auth.py: with auth.enabled false, POST /api/login
		// answers 404 "Authentication is disabled".
		{name: "authentication disabled (404)", status: http.StatusNotFound, want: toolerr.AuthFailed, says: "FRIGATE_TRUSTED_UNAUTHENTICATED"},
		{name: "wrong password (401)", password: "wrong-password-123", want: toolerr.AuthFailed, remembered: true},
		{name: "forbidden (403)", status: http.StatusForbidden, want: toolerr.AuthFailed, remembered: true},
		{name: "bad request (400)", status: http.StatusBadRequest, want: toolerr.AuthFailed, remembered: true},
		{name: "validation error (422)", status: http.StatusUnprocessableEntity, want: toolerr.AuthFailed, remembered: true},
		{name: "rate limited (429)", status: http.StatusTooManyRequests, want: toolerr.Busy},
		{name: "server error (500)", status: http.StatusInternalServerError, want: toolerr.UpstreamUnavailable},
		{name: "unavailable (503)", status: http.StatusServiceUnavailable, want: toolerr.UpstreamUnavailable},
	}
	const calls = 3
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newStub(t)
			s.loginStatus = tc.status
			c := newClient(t, srv, managed, func(cfg *client.Config) {
				if tc.password != "" {
					cfg.Password = []byte(tc.password)
				}
			})
			for i := 0; i < calls; i++ {
				err := get(t, c)
				wantCode(t, err, tc.want)
				if tc.says != "" && !strings.Contains(toolerr.MessageOf(err), tc.says) {
					t.Errorf("message %q does not name %s", toolerr.MessageOf(err), tc.says)
				}
				if got := errors.Is(err, client.ErrCredentialsRejected); got != tc.remembered {
					t.Errorf("call %d: errors.Is(ErrCredentialsRejected) = %v", i, got)
				}
				if tc.password != "" && strings.Contains(err.Error(), tc.password) {
					t.Error("error shows the wrong password")
				}
			}
			logins, reads := s.counts()
			wantLogins := calls
			if tc.remembered {
				wantLogins = 1
			}
			if logins != wantLogins || reads != 0 {
				t.Fatalf("logins = %d, reads = %d; want %d, 0", logins, reads, wantLogins)
			}
			if !tc.remembered {
				// A transient failure does not lock the service out.
				s.set(func(s *stub) { s.loginStatus = 0 })
				if err := get(t, c); err != nil {
					t.Fatalf("after recovery: %v", err)
				}
			}
		})
	}
}

// Bearer and unauthenticated modes send exactly their credential, never
// call /login, and report a 401 at once without retrying or refreshing.
func TestBearerAndUnauthenticated(t *testing.T) {
	tests := []struct {
		name      string
		mode      modeCfg
		wantAuth  string
		revoke    bool
		want      toolerr.Code
		wantReads int
	}{
		{name: "bearer accepted", mode: bearer, wantAuth: "Bearer " + bearerToken, wantReads: 3},
		{name: "bearer rejected is never refreshed", mode: bearer, wantAuth: "Bearer " + bearerToken, revoke: true, want: toolerr.AuthFailed, wantReads: 3},
		{name: "unauthenticated rejected", mode: unauthenticated, want: toolerr.AuthFailed, wantReads: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, srv := newStub(t)
			if tc.revoke {
				s.valid = map[string]bool{}
			}
			c := newClient(t, srv, tc.mode)
			for i := 0; i < 3; i++ {
				wantCode(t, get(t, c), tc.want)
			}
			logins, reads := s.counts()
			if logins != 0 || reads != tc.wantReads {
				t.Fatalf("logins = %d, reads = %d; want 0, %d", logins, reads, tc.wantReads)
			}
			for _, h := range s.dataHdrs {
				if h.Get("Authorization") != tc.wantAuth || h.Get("Cookie") != "" {
					t.Errorf("sent Authorization %q Cookie %q", h.Get("Authorization"), h.Get("Cookie"))
				}
			}
		})
	}
}

// Redirects are never followed: no credential or request reaches the
// redirect target, and the error says to fix the base URL.
func TestRedirectsRefused(t *testing.T) {
	tests := []struct {
		name  string
		mode  modeCfg
		setup func(s *stub, target string)
	}{
		{"login redirect", managed, func(s *stub, target string) { s.loginRedirect = target + "/api/login" }},
		{"read redirect with a session", managed, func(s *stub, target string) { s.dataRedirect = target + "/api/data" }},
		{"read redirect with a bearer token", bearer, func(s *stub, target string) { s.dataRedirect = target + "/api/data" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var leaked []string
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				leaked = append(leaked, r.Method+" "+r.URL.Path)
				mu.Unlock()
			}))
			t.Cleanup(elsewhere.Close)
			s, srv := newStub(t)
			tc.setup(s, elsewhere.URL)
			c := newClient(t, srv, tc.mode)
			err := get(t, c)
			wantCode(t, err, toolerr.UpstreamUnavailable)
			if !strings.Contains(toolerr.MessageOf(err), "redirect") {
				t.Errorf("message %q does not say redirect", toolerr.MessageOf(err))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(leaked) != 0 {
				t.Fatalf("the redirect was followed: %v", leaked)
			}
		})
	}
}

// Status mapping of GetJSON and Get: a body that gives no reason (an
// HTML page) never reaches the error text.
func TestStatusMapping(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   toolerr.Code
	}{
		{"forbidden", http.StatusForbidden, "<html>" + errorBody, toolerr.Forbidden},
		{"validation error", http.StatusUnprocessableEntity, "<html>" + errorBody, toolerr.InvalidArgument},
		{"not found", http.StatusNotFound, "<html>" + errorBody, toolerr.NotFound},
		{"not json", http.StatusOK, "<html>" + errorBody, toolerr.UpstreamUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			c := newClient(t, srv, bearer)
			err := c.Begin().GetJSON(t.Context(), "/anything", nil, &map[string]any{})
			wantCode(t, err, tc.want)
			noSecrets(t, err)
		})
	}
}

// A read waiting behind another read's login gives up when its own
// deadline ends.
func TestLoginWaitHonoursTheDeadline(t *testing.T) {
	s, srv := newStub(t)
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	s.set(func(s *stub) { s.loginGate, s.loginEntered = gate, entered })
	c := newClient(t, srv, managed)
	first := make(chan error, 1)
	go func() { first <- c.Begin().GetJSON(context.Background(), "/data", nil, &map[string]any{}) }()
	<-entered // the first read holds the login

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := c.Begin().GetJSON(ctx, "/data", nil, &map[string]any{})
	wantCode(t, err, toolerr.Timeout)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cause is not the context's: %v", err)
	}
	close(gate)
	if err := <-first; err != nil {
		t.Fatalf("first read: %v", err)
	}
	if logins, _ := s.counts(); logins != 1 {
		t.Fatalf("logins = %d, want 1", logins)
	}
}
