package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/tuliprox/client"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func secretFile(t *testing.T, name, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

type env struct {
	fake  *faketuliprox.Fake
	clock *fakeclock.Clock
	c     *client.Client
	url   string
	// hits counts every request the server received, sign-ins included,
	// by status answered.
	mu   sync.Mutex
	hits map[int]int
	auth []string // Authorization headers of API requests
}

func (e *env) status(s int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hits[s]
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(s int) { r.status = s; r.ResponseWriter.WriteHeader(s) }

// start serves a fake Tuliprox and a client signed in as user (no
// credentials when user is ""); the client and the fake share clock
// unless clientClock is set.
func start(t *testing.T, o faketuliprox.Options, user, pass, path string, clientClock func() time.Time) *env {
	t.Helper()
	e := &env{clock: fakeclock.New(t0), hits: map[int]int{}}
	o.Now = e.clock.Now
	e.fake = faketuliprox.New(o)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w, status: 200}
		if strings.Contains(r.URL.Path, "/api/v1/") {
			e.mu.Lock()
			e.auth = append(e.auth, r.Header.Get("Authorization"))
			e.mu.Unlock()
		}
		e.fake.ServeHTTP(rec, r)
		e.mu.Lock()
		e.hits[rec.status]++
		e.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	e.url = srv.URL + path
	lookup := map[string]string{"TULIPROX_URL": e.url, "TULIPROX_ALLOW_HTTP": "true", "TULIPROX_TIMEOUT": "5s"}
	if user != "" {
		lookup["TULIPROX_USERNAME_FILE"] = secretFile(t, "user", user)
		lookup["TULIPROX_PASSWORD_FILE"] = secretFile(t, "pass", pass)
	}
	set, err := client.LoadSettings(config.New(func(k string) (string, bool) { v, ok := lookup[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now
	if clientClock != nil {
		now = clientClock
	}
	e.c, err = client.NewFromSettings(set, client.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func status(ctx context.Context, c *client.Client) error {
	var v any
	return c.GetJSON(ctx, client.Call{Route: []string{"status"}, Permission: "system.read"}, &v)
}

func TestSignsInOnceAndReusesTheToken(t *testing.T) {
	e := start(t, faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", nil)
	for range 5 {
		if err := status(t.Context(), e.c); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.fake.Logins(); n != 1 {
		t.Fatalf("%d sign-ins for 5 calls, want 1", n)
	}
	for _, h := range e.auth {
		if !strings.HasPrefix(h, "Bearer ey") {
			t.Fatalf("API request without the JWT: %q", h)
		}
	}
}

// The token is replaced shortly before its exp claim, so no call runs
// into the 401 of an expired token.
func TestRefreshesTheTokenBeforeItExpires(t *testing.T) {
	e := start(t, faketuliprox.Options{TokenTTL: 30 * time.Minute}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", nil)
	if err := status(t.Context(), e.c); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(27 * time.Minute) // before the 2-minute margin
	if err := status(t.Context(), e.c); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.Logins(); n != 1 {
		t.Fatalf("%d sign-ins 3 minutes before expiry, want 1", n)
	}
	e.clock.Advance(90 * time.Second) // inside the margin, still valid
	if err := status(t.Context(), e.c); err != nil {
		t.Fatal(err)
	}
	if n := e.fake.Logins(); n != 2 {
		t.Fatalf("%d sign-ins inside the refresh margin, want 2", n)
	}
	if n := e.status(http.StatusUnauthorized); n != 0 {
		t.Fatalf("%d answers were 401; the refresh should come first", n)
	}
}

// A token Tuliprox no longer accepts (expired by its clock, or revoked by a
// permission change) is replaced once and the call repeated.
func TestSignsInAgainOnceOn401(t *testing.T) {
	cases := []struct {
		name   string
		break_ func(e *env)
	}{
		{"revoked after a permission change", func(e *env) { e.fake.RevokeTokens() }},
		{"expired by Tuliprox's clock", func(e *env) { e.clock.Advance(45 * time.Minute) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			frozen := fakeclock.New(t0) // the client's clock stands still
			e := start(t, faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", frozen.Now)
			if err := status(t.Context(), e.c); err != nil {
				t.Fatal(err)
			}
			c.break_(e)
			if err := status(t.Context(), e.c); err != nil {
				t.Fatalf("call after the token broke: %v", err)
			}
			if n := e.fake.Logins(); n != 2 {
				t.Fatalf("%d sign-ins, want 2", n)
			}
			if n := e.status(http.StatusUnauthorized); n != 1 {
				t.Fatalf("%d answers were 401, want exactly the one that triggered the sign-in", n)
			}
		})
	}
}

// Concurrent calls share one sign-in at the start and one after a 401.
func TestConcurrentCallsShareOneSignIn(t *testing.T) {
	e := start(t, faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", fakeclock.New(t0).Now)
	run := func() {
		var wg sync.WaitGroup
		var failed atomic.Int32
		for range 6 { // within the client's 8 requests in flight, the sign-in included
			wg.Go(func() {
				if err := status(t.Context(), e.c); err != nil {
					failed.Add(1)
					t.Log(err)
				}
			})
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d calls failed", failed.Load())
		}
	}
	run()
	if n := e.fake.Logins(); n != 1 {
		t.Fatalf("%d sign-ins for 6 concurrent first calls, want 1", n)
	}
	e.fake.RevokeTokens()
	run()
	if n := e.fake.Logins(); n != 2 {
		t.Fatalf("%d sign-ins after 6 concurrent 401s, want 2", n)
	}
}

// A token that keeps being refused ends in auth_failed after one new
// sign-in, not in a loop.
func TestPersistent401EndsAfterOneRetry(t *testing.T) {
	// Tuliprox issues tokens that are already expired by its own clock
	// (a minute old at birth), while the client's clock is an hour behind
	// and believes them fresh.
	e := start(t, faketuliprox.Options{TokenTTL: -time.Minute}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "",
		fakeclock.New(t0.Add(-time.Hour)).Now)
	err := status(t.Context(), e.c)
	if toolerr.CodeOf(err) != toolerr.AuthFailed {
		t.Fatalf("got %v, want auth_failed", err)
	}
	if n := e.fake.Logins(); n != 2 {
		t.Fatalf("%d sign-ins, want 2 (the first and one retry)", n)
	}
	if n := e.status(http.StatusUnauthorized); n != 2 {
		t.Fatalf("%d 401s, want 2", n)
	}
}

func TestSignInFailures(t *testing.T) {
	cases := []struct {
		name       string
		opts       faketuliprox.Options
		user, pass string
		path       string
		code       toolerr.Code
		want       string
	}{
		{"wrong password", faketuliprox.Options{}, faketuliprox.DemoAssistant, "wrong-password-123", "", toolerr.AuthFailed, "TULIPROX_PASSWORD_FILE"},
		{"unknown user", faketuliprox.Options{}, "nobody-here", "whatever-pass", "", toolerr.AuthFailed, "throttled"},
		{"no credentials, auth on", faketuliprox.Options{}, "", "", "", toolerr.AuthFailed, "requires web authentication"},
		{"web path missing from the URL", faketuliprox.Options{WebPath: "/admin"}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", toolerr.UpstreamUnavailable, "web_ui.path"},
		{"web UI switched off", faketuliprox.Options{NoWebUI: true}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", toolerr.UpstreamUnavailable, "web_ui.enabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, c.opts, c.user, c.pass, c.path, nil)
			err := status(t.Context(), e.c)
			if toolerr.CodeOf(err) != c.code || !strings.Contains(toolerr.MessageOf(err), c.want) {
				t.Fatalf("got %v, want %s mentioning %q", err, c.code, c.want)
			}
			if c.pass != "" && strings.Contains(err.Error(), c.pass) {
				t.Fatal("the error quotes the password")
			}
			if len(e.auth) != 0 {
				t.Fatalf("%d API requests without a sign-in", len(e.auth))
			}
		})
	}
}

// A rejected sign-in is not repeated for every call (Tuliprox throttles a
// user after failed sign-ins).
func TestRejectedSignInIsNotHammered(t *testing.T) {
	e := start(t, faketuliprox.Options{}, faketuliprox.DemoAssistant, "wrong-password-123", "", nil)
	for range 5 {
		if err := status(t.Context(), e.c); toolerr.CodeOf(err) != toolerr.AuthFailed {
			t.Fatal(err)
		}
	}
	if n := e.status(http.StatusUnauthorized); n != 1 {
		t.Fatalf("%d sign-in attempts for 5 calls, want 1", n)
	}
	e.clock.Advance(time.Minute)
	_ = status(t.Context(), e.c)
	if n := e.status(http.StatusUnauthorized); n != 2 {
		t.Fatalf("%d sign-in attempts after the hold, want 2", n)
	}
}

func TestWebAuthDisabledMeansNoTokenAndNoAuth(t *testing.T) {
	for _, user := range []string{"", faketuliprox.DemoAssistant} {
		e := start(t, faketuliprox.Options{NoAuth: true}, user, "some-password-1", "", nil)
		noAuth, err := e.c.NoAuth(t.Context())
		if err != nil || !noAuth {
			t.Fatalf("NoAuth = %v, %v; want true", noAuth, err)
		}
		if err := status(t.Context(), e.c); err != nil {
			t.Fatal(err)
		}
		if len(e.auth) != 1 || e.auth[0] != "" {
			t.Fatalf("Authorization sent without web authentication: %q", e.auth)
		}
	}
}

func TestWebPathPrefix(t *testing.T) {
	e := start(t, faketuliprox.Options{WebPath: "/admin"}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "/admin", nil)
	if err := status(t.Context(), e.c); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestStatusesBecomeClearErrors(t *testing.T) {
	cases := []struct {
		name string
		opts faketuliprox.Options
		user string
		pass string
		call client.Call
		code toolerr.Code
		want string
	}{
		{"403 names the permission", faketuliprox.Options{}, faketuliprox.DemoViewer, faketuliprox.DemoViewerPassword,
			client.Call{Route: []string{"status"}, Permission: "system.read"}, toolerr.Forbidden, "HTTP 403: the Tuliprox user lacks system.read"},
		{"503 names the feature", faketuliprox.Options{NoQoS: true}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword,
			client.Call{Route: []string{"qos-snapshots"}, Feature: "QoS aggregation"}, toolerr.UpstreamUnavailable, "HTTP 503: QoS aggregation is disabled"},
		{"a route the release lacks (404)", faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword,
			client.Call{Route: []string{"no", "such"}}, toolerr.NotFound, "not supported by this Tuliprox release (needs a release that has it): it has no GET /api/v1/no/such"},
		{"a route the public release lacks names what it needs", faketuliprox.Options{Release: faketuliprox.ReleasePublic}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword,
			client.Call{Route: []string{"playlist", "sources"}, Needs: "the seed's playlist API"}, toolerr.NotFound,
			"not supported by this Tuliprox release (needs the seed's playlist API): it has no GET /api/v1/playlist/sources"},
		{"a POST to a route the release lacks (405)", faketuliprox.Options{Release: faketuliprox.ReleasePublic}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword,
			client.Call{Method: http.MethodPost, Route: []string{"no", "such"}, Needs: "X"}, toolerr.NotFound, "not supported by this Tuliprox release (needs X)"},
		{"a JSON 404 of an existing route", faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword,
			client.Call{Route: []string{"qos-snapshots", "nope"}, NotFound: "no such snapshot"}, toolerr.NotFound, "HTTP 404: no such snapshot"},
		{"a JSON 404 is still unsupported without its message", faketuliprox.Options{}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword,
			client.Call{Route: []string{"qos-snapshots", "nope"}}, toolerr.NotFound, "not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, c.opts, c.user, c.pass, "", nil)
			var v any
			err := e.c.GetJSON(t.Context(), c.call, &v)
			if toolerr.CodeOf(err) != c.code || !strings.Contains(toolerr.MessageOf(err), c.want) {
				t.Fatalf("got %v, want %s with %q", err, c.code, c.want)
			}
		})
	}
	e := start(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic}, faketuliprox.DemoAssistant, faketuliprox.DemoAssistantPassword, "", nil)
	var v any
	if err := e.c.GetJSON(t.Context(), client.Call{Route: []string{"events", "stats"}}, &v); !errors.Is(err, client.ErrUnsupported) {
		t.Fatalf("errors.Is(ErrUnsupported) = false for %v", err)
	}
}

// A Web UI page where JSON was asked for (a proxy's or an SPA's
// catch-all) is a route the release lacks, never data.
func TestAWebUIPageIsAMissingRoute(t *testing.T) {
	fake := faketuliprox.New(faketuliprox.Options{NoAuth: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/events") {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte("<!DOCTYPE html><html><body>app</body></html>"))
			return
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	set, err := client.LoadSettings(config.New(func(k string) (string, bool) {
		v, ok := map[string]string{"TULIPROX_URL": srv.URL, "TULIPROX_ALLOW_HTTP": "true"}[k]
		return v, ok
	}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewFromSettings(set, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var v any
	err = c.GetJSON(t.Context(), client.Call{Route: []string{"events", "stats"}, Needs: "the event API"}, &v)
	if !errors.Is(err, client.ErrUnsupported) || !strings.Contains(toolerr.MessageOf(err), "needs the event API") || v != nil {
		t.Fatalf("%v, %v", err, v)
	}
}

// A route found missing is answered from memory for a while (no request),
// asked again afterwards, and believed at once when it answers; a call
// without Needs always asks.
func TestAMissingRouteIsRememberedForAWhile(t *testing.T) {
	e := start(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic}, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword, "", nil)
	stats := client.Call{Route: []string{"events", "stats"}, Needs: "the event API"}
	call := func(c client.Call) error {
		var v any
		return e.c.GetJSON(t.Context(), c, &v)
	}
	asked := func() int {
		n := 0
		for _, r := range e.fake.Requests() {
			if r.Path == "/api/v1/events/stats" {
				n++
			}
		}
		return n
	}
	for range 3 {
		if err := call(stats); !errors.Is(err, client.ErrUnsupported) {
			t.Fatal(err)
		}
	}
	if n := asked(); n != 1 {
		t.Fatalf("asked %d times, want once", n)
	}
	if err := call(client.Call{Route: stats.Route}); !errors.Is(err, client.ErrUnsupported) || asked() != 2 {
		t.Fatalf("a call without Needs is not answered from memory: %v, asked %d", err, asked())
	}
	e.fake.SetRelease(faketuliprox.ReleaseSeed)
	e.clock.Advance(10 * time.Minute)
	if err := call(stats); err != nil || asked() != 3 {
		t.Fatalf("after the pause the route is asked again and answers: %v, asked %d", err, asked())
	}
	e.fake.SetRelease(faketuliprox.ReleasePublic)
	if err := call(stats); !errors.Is(err, client.ErrUnsupported) || asked() != 4 {
		t.Fatalf("a route that answered is not remembered as missing: %v, asked %d", err, asked())
	}
}

// Ready accepts a user who lacks system.read: the sign-in worked.
func TestReadyWithAMinimalUser(t *testing.T) {
	e := start(t, faketuliprox.Options{}, faketuliprox.DemoViewer, faketuliprox.DemoViewerPassword, "", nil)
	if err := e.c.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	bad := start(t, faketuliprox.Options{}, faketuliprox.DemoViewer, "wrong-password-123", "", nil)
	if err := bad.c.Ready(t.Context()); toolerr.CodeOf(err) != toolerr.AuthFailed {
		t.Fatalf("Ready with a wrong password: %v", err)
	}
}

func TestSettings(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "f")
	_ = os.WriteFile(f, []byte("x-value-123"), 0o600)
	cases := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"password without user", map[string]string{"TULIPROX_PASSWORD_FILE": f}, []string{"TULIPROX_USERNAME_FILE"}},
		{"user without password", map[string]string{"TULIPROX_USERNAME_FILE": f}, []string{"TULIPROX_PASSWORD_FILE"}},
		{"password in the environment", map[string]string{"TULIPROX_PASSWORD": "plain-pass-1", "TULIPROX_USERNAME_FILE": f}, []string{"TULIPROX_PASSWORD:"}},
		{"token TTL too short", map[string]string{"TULIPROX_TOKEN_TTL": "5s"}, []string{"TULIPROX_TOKEN_TTL"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"TULIPROX_URL": "https://tv.lan"}
			for k, v := range c.env {
				env[k] = v
			}
			_, err := client.LoadSettings(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v lacks %s", err, w)
				}
			}
			if strings.Contains(err.Error(), "plain-pass-1") || strings.Contains(err.Error(), "x-value-123") {
				t.Fatal("the error echoes a value")
			}
		})
	}
}
