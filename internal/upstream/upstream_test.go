package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// newClient builds a client for srv with plain HTTP allowed.
func newClient(t *testing.T, srv *httptest.Server, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: srv.URL, AllowHTTP: true, Name: "testapp"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// recordSleeps replaces the client's sleep with one that records the wait
// and returns at once, so retry waits are observable without spending them.
func recordSleeps(c *Client) *[]time.Duration {
	sleep, waits := sleepRecorder()
	c.sleep = sleep
	return waits
}

// sleepRecorder is a Config.Sleep that records each wait and returns at
// once.
func sleepRecorder() (func(context.Context, time.Duration) error, *[]time.Duration) {
	var mu sync.Mutex
	waits := &[]time.Duration{}
	return func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}, waits
}

// fixedNow is the injected clock of the Retry-After date cases.
var fixedNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func wantCode(t *testing.T, err error, code toolerr.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error, got nil", code)
	}
	var te *toolerr.Error
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *toolerr.Error", err)
	}
	if te.Code != code {
		t.Fatalf("code = %s (%v), want %s", te.Code, err, code)
	}
}

// blockingServer returns a server whose handler calls fn and then blocks
// until the client goes away or the test ends.
func blockingServer(t *testing.T, fn func(w http.ResponseWriter)) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fn(w)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	return srv
}

// newTLSServer is httptest.NewTLSServer without the server's log of the
// handshake failures some tests provoke on purpose.
func newTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func TestDeadline(t *testing.T) {
	tests := []struct {
		name string
		fn   func(w http.ResponseWriter)
	}{
		{"slow headers", func(w http.ResponseWriter) {}},
		{"slow body", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(`{"partial":`))
			w.(http.Flusher).Flush()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := blockingServer(t, func(w http.ResponseWriter) { hits.Add(1); tt.fn(w) })
			c := newClient(t, srv, func(cfg *Config) { cfg.Timeout = 50 * time.Millisecond })
			var out map[string]any
			err := c.GetJSON(context.Background(), "/api", nil, &out)
			wantCode(t, err, toolerr.Timeout)
			if !strings.Contains(toolerr.MessageOf(err), "did not answer within") {
				t.Errorf("message %q does not explain the deadline", toolerr.MessageOf(err))
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("timed-out GET was sent %d times, want 1 (timeouts are not retried)", n)
			}
		})
	}
}

func TestCallerContext(t *testing.T) {
	srv := blockingServer(t, func(w http.ResponseWriter) {})
	c := newClient(t, srv, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.GetJSON(ctx, "/x", nil, nil)
	wantCode(t, err, toolerr.Timeout)
	if !strings.Contains(toolerr.MessageOf(err), "deadline exceeded") {
		t.Errorf("message = %q", toolerr.MessageOf(err))
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	wantCode(t, c.GetJSON(ctx, "/x", nil, nil), toolerr.Timeout)
}

func TestBodyCap(t *testing.T) {
	const capBytes = 64 << 10
	const intended = 256 << 20 // far beyond what loopback socket buffers hold
	tests := []struct {
		name          string
		contentLength bool
	}{
		{"streamed", false},
		{"content-length", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type result struct {
				written int64
				err     error
			}
			done := make(chan result, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentLength {
					w.Header().Set("Content-Length", fmt.Sprint(intended))
				}
				chunk := bytes.Repeat([]byte("x"), 32<<10)
				var n int64
				for n < intended {
					m, err := w.Write(chunk)
					n += int64(m)
					if err != nil {
						done <- result{n, err}
						return
					}
				}
				done <- result{n, nil}
			}))
			defer srv.Close()
			c := newClient(t, srv, func(cfg *Config) { cfg.MaxBytes = capBytes })

			resp, err := c.Do(context.Background(), Request{Path: "/big"})
			wantCode(t, err, toolerr.TooLarge)
			if resp != nil {
				t.Errorf("got a response with a too-large body")
			}
			if !strings.Contains(toolerr.MessageOf(err), "64 KiB") {
				t.Errorf("message %q does not name the cap", toolerr.MessageOf(err))
			}
			r := <-done
			if r.err == nil {
				t.Fatalf("server wrote all %d bytes: the client kept reading past the cap", r.written)
			}
			if r.written >= intended {
				t.Errorf("server wrote %d bytes, want fewer than %d", r.written, intended)
			}
		})
	}
}

func TestBodyAtCapIsAccepted(t *testing.T) {
	body := `"` + strings.Repeat("y", 98) + `"` // exactly 100 bytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	c := newClient(t, srv, func(cfg *Config) { cfg.MaxBytes = 100 })
	var s string
	if err := c.GetJSON(context.Background(), "/", nil, &s); err != nil {
		t.Fatalf("body exactly at the cap: %v", err)
	}
	c101 := newClient(t, srv, func(cfg *Config) { cfg.MaxBytes = 99 })
	wantCode(t, c101.GetJSON(context.Background(), "/", nil, &s), toolerr.TooLarge)
}

func TestRedirectRefused(t *testing.T) {
	tests := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}
	for _, status := range tests {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			var targetHits atomic.Int32
			target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				targetHits.Add(1)
				_, _ = w.Write([]byte(`{}`))
			}))
			defer target.Close()
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+"/elsewhere", status)
			}))
			defer origin.Close()
			c := newClient(t, origin, nil)
			waits := recordSleeps(c)

			err := c.GetJSON(context.Background(), "/api", nil, &map[string]any{})
			wantCode(t, err, toolerr.UpstreamUnavailable)
			if !strings.Contains(toolerr.MessageOf(err), "answered with a redirect; set the exact base URL") {
				t.Errorf("message = %q", toolerr.MessageOf(err))
			}
			if !errors.Is(err, ErrRedirect) {
				t.Errorf("the error does not say it was a redirect: %v", err)
			}
			if n := targetHits.Load(); n != 0 {
				t.Errorf("redirect target was contacted %d times", n)
			}
			if len(*waits) != 0 {
				t.Errorf("a redirect was retried")
			}
		})
	}
}

// scripted answers each request with the next status from script (the last
// one repeats) and counts requests.
type scripted struct {
	mu         sync.Mutex
	script     []int
	retryAfter string
	hits       int
	dropFirst  bool // close the connection without answering on the first request
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := s.hits
	s.hits++
	s.mu.Unlock()
	if s.dropFirst && i == 0 {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	status := s.script[min(i, len(s.script)-1)]
	if s.retryAfter != "" && status != http.StatusOK {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"ok":true}`))
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name       string
		req        Request
		script     []int
		retryAfter string
		dropFirst  bool
		cfg        func(*Config)
		ctxTimeout time.Duration
		wantHits   int
		wantCode   toolerr.Code // "" means success
		check      func(t *testing.T, waits []time.Duration)
	}{
		{name: "GET 503,503,200 succeeds", script: []int{503, 503, 200}, wantHits: 3,
			check: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 2 {
					t.Fatalf("waits = %v, want 2", waits)
				}
				for i, w := range waits {
					if w < 0 || w >= backoffBase<<i {
						t.Errorf("wait %d = %v outside the jitter window [0,%v)", i, w, backoffBase<<i)
					}
				}
			}},
		{name: "retries bounded at 2", script: []int{503}, wantHits: 3, wantCode: toolerr.UpstreamUnavailable},
		{name: "Retries above 2 clamped", script: []int{500}, cfg: func(c *Config) { c.Retries = 10 }, wantHits: 3, wantCode: toolerr.UpstreamUnavailable},
		{name: "Retries 1", script: []int{502}, cfg: func(c *Config) { c.Retries = 1 }, wantHits: 2, wantCode: toolerr.UpstreamUnavailable},
		{name: "negative Retries disables", script: []int{503, 200}, cfg: func(c *Config) { c.Retries = -1 }, wantHits: 1, wantCode: toolerr.UpstreamUnavailable},
		{name: "408 retried", script: []int{408, 200}, wantHits: 2},
		{name: "POST not retried", req: Request{Method: http.MethodPost, Body: []byte(`{}`)}, script: []int{503, 200}, wantHits: 1, wantCode: toolerr.UpstreamUnavailable},
		{name: "POST marked idempotent retried", req: Request{Method: http.MethodPost, Body: []byte(`{}`), Idempotent: true}, script: []int{503, 200}, wantHits: 2},
		{name: "404 not retried", script: []int{404, 200}, wantHits: 1, wantCode: toolerr.NotFound},
		{name: "401 not retried", script: []int{401, 200}, wantHits: 1, wantCode: toolerr.AuthFailed},
		{name: "429 Retry-After 1 honoured", script: []int{429, 200}, retryAfter: "1", wantHits: 2,
			check: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 1 || waits[0] != time.Second {
					t.Errorf("waits = %v, want [1s]", waits)
				}
			}},
		{name: "429 Retry-After 3600 not waited", script: []int{429, 200}, retryAfter: "3600", wantHits: 1, wantCode: toolerr.Busy,
			check: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 0 {
					t.Errorf("waited %v for a Retry-After beyond MaxRetryAfter", waits)
				}
			}},
		{name: "503 Retry-After HTTP-date honoured", script: []int{503, 200},
			retryAfter: time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat), wantHits: 2,
			check: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 1 || waits[0] <= 0 || waits[0] > 3*time.Second {
					t.Errorf("waits = %v, want one in (0,3s]", waits)
				}
			}},
		{name: "Retry-After HTTP-date read against the injected clock", script: []int{503, 200},
			retryAfter: fixedNow.Add(4 * time.Second).Format(http.TimeFormat), wantHits: 2,
			cfg: func(c *Config) { c.Now = func() time.Time { return fixedNow } },
			check: func(t *testing.T, waits []time.Duration) {
				if len(waits) != 1 || waits[0] != 4*time.Second {
					t.Errorf("waits = %v, want exactly [4s]", waits)
				}
			}},
		{name: "GET with NoRetry sent once", req: Request{NoRetry: true}, script: []int{503, 200}, wantHits: 1, wantCode: toolerr.UpstreamUnavailable},
		{name: "negative MaxRetryAfter refuses any Retry-After", script: []int{503, 200}, retryAfter: "0",
			cfg: func(c *Config) { c.MaxRetryAfter = -1 }, wantHits: 1, wantCode: toolerr.UpstreamUnavailable},
		{name: "Retry-After past caller deadline not waited", script: []int{429, 200}, retryAfter: "4",
			ctxTimeout: 2 * time.Second, wantHits: 1, wantCode: toolerr.Busy},
		{name: "dropped connection retried", dropFirst: true, script: []int{200}, wantHits: 2},
		{name: "dropped connection on POST not retried", dropFirst: true, req: Request{Method: http.MethodPost}, script: []int{200}, wantHits: 1, wantCode: toolerr.UpstreamUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{script: tt.script, retryAfter: tt.retryAfter, dropFirst: tt.dropFirst}
			srv := httptest.NewServer(s)
			defer srv.Close()
			sleep, waits := sleepRecorder()
			c := newClient(t, srv, func(c *Config) {
				c.Sleep = sleep
				if tt.cfg != nil {
					tt.cfg(c)
				}
			})

			ctx := context.Background()
			if tt.ctxTimeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.ctxTimeout)
				defer cancel()
			}
			req := tt.req
			req.Path = "/api/thing"
			resp, err := c.Do(ctx, req)
			if err == nil {
				err = resp.Err()
			}
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("Do: %v", err)
				}
				if resp.Attempts != tt.wantHits {
					t.Errorf("Attempts = %d, want %d", resp.Attempts, tt.wantHits)
				}
			} else {
				wantCode(t, err, tt.wantCode)
			}
			if got := s.count(); got != tt.wantHits {
				t.Errorf("server saw %d requests, want %d", got, tt.wantHits)
			}
			if tt.check != nil {
				tt.check(t, *waits)
			}
		})
	}
}

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		status int
		code   toolerr.Code
		hint   string
	}{
		{400, toolerr.InvalidArgument, "HTTP 400"},
		{401, toolerr.AuthFailed, "check the configured API key, token or password"},
		{403, toolerr.AuthFailed, "is allowed to do this"},
		{404, toolerr.NotFound, "HTTP 404"},
		{409, toolerr.InvalidArgument, "HTTP 409"},
		{422, toolerr.InvalidArgument, "HTTP 422"},
		{429, toolerr.Busy, "HTTP 429"},
		{500, toolerr.UpstreamUnavailable, "HTTP 500 after 3 attempt(s)"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			const reason = "UPSTREAM-REASON"
			body := fmt.Sprintf(`{"message":%q,"description":"UPSTREAM-STACK"}`, reason)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, body)
			}))
			defer srv.Close()
			c := newClient(t, srv, nil)
			recordSleeps(c)
			for name, err := range map[string]error{
				"GetJSON":  c.GetJSON(context.Background(), "/x", nil, &map[string]any{}),
				"PostJSON": c.PostJSON(context.Background(), "/x", map[string]int{"a": 1}, &map[string]any{}),
			} {
				if name == "PostJSON" && tt.status == 500 {
					continue // a POST is sent once; covered in TestRetries
				}
				wantCode(t, err, tt.code)
				if !strings.Contains(err.Error(), tt.hint) {
					t.Errorf("%s: %q lacks %q", name, err, tt.hint)
				}
				// The application's reason, framed; never the body.
				if !strings.HasSuffix(toolerr.MessageOf(err), `. testapp said: "`+reason+`"`) {
					t.Errorf("%s: %q does not end with the framed reason", name, err)
				}
				if strings.Contains(err.Error(), body) || strings.Contains(err.Error(), "UPSTREAM-STACK") {
					t.Errorf("%s: upstream body echoed: %q", name, err)
				}
				var se *StatusError
				if !errors.As(err, &se) || se.Status != tt.status || se.Reason != reason {
					t.Errorf("%s: StatusError cause missing or wrong: %+v", name, se)
				}
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	type item struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/echo":
			if ct := r.Header.Get("Content-Type"); ct != "application/json" {
				http.Error(w, "bad content type", http.StatusUnsupportedMediaType)
				return
			}
			var in item
			if err := jsonDecode(r, &in); err != nil {
				http.Error(w, "bad json", http.StatusBadRequest)
				return
			}
			in.ID++
			jsonWrite(w, in)
		case r.URL.Path == "/empty":
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Path == "/html":
			_, _ = w.Write([]byte("<html>login</html>"))
		default:
			jsonWrite(w, item{ID: 7, Name: r.URL.Query().Get("name")})
		}
	}))
	defer srv.Close()
	c := newClient(t, srv, nil)
	ctx := context.Background()

	var got item
	if err := c.GetJSON(ctx, "/item", url.Values{"name": {"a b&c"}}, &got); err != nil || got != (item{7, "a b&c"}) {
		t.Fatalf("GetJSON = %+v, %v", got, err)
	}
	if err := c.PostJSON(ctx, "/echo", item{1, "x"}, &got); err != nil || got != (item{2, "x"}) {
		t.Fatalf("PostJSON = %+v, %v", got, err)
	}
	if err := c.GetJSON(ctx, "/empty", nil, &got); err != nil {
		t.Fatalf("204: %v", err)
	}
	wantCode(t, c.GetJSON(ctx, "/html", nil, &got), toolerr.UpstreamUnavailable)
}

func TestBusy(t *testing.T) {
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			entered <- struct{}{}
			<-release
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := newClient(t, srv, func(cfg *Config) { cfg.MaxConcurrent = 1 })

	first := make(chan error, 1)
	go func() { first <- c.GetJSON(context.Background(), "/block", nil, nil) }()
	<-entered

	// The first call is parked in the handler until release, so this call
	// returning at all proves it did not queue behind it.
	err := c.GetJSON(context.Background(), "/fast", nil, nil)
	wantCode(t, err, toolerr.Busy)

	close(release)
	if err := <-first; err != nil {
		t.Fatalf("first call: %v", err)
	}
	if err := c.GetJSON(context.Background(), "/fast", nil, nil); err != nil {
		t.Fatalf("slot not released: %v", err)
	}
}

func TestNewValidation(t *testing.T) {
	const secret = "HEADER-SECRET-VALUE"
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     Config
		mention string
	}{
		{"empty base", Config{}, "BaseURL"},
		{"http without opt-in", Config{BaseURL: "http://sonarr.lan:8989"}, "AllowHTTP"},
		{"ftp", Config{BaseURL: "ftp://sonarr.lan"}, "BaseURL"},
		{"no host", Config{BaseURL: "https:///path"}, "BaseURL"},
		{"fragment", Config{BaseURL: "https://sonarr.lan/#x"}, "BaseURL"},
		{"unparsable with userinfo", Config{BaseURL: "https://user:" + secret + "@host:notaport/"}, "BaseURL"},
		{"header CR LF", Config{BaseURL: "https://sonarr.lan", Header: http.Header{"X-Api-Key": {secret + "\r\nX-Evil: 1"}}}, "X-Api-Key"},
		{"header NUL", Config{BaseURL: "https://sonarr.lan", Header: http.Header{"X-Api-Key": {secret + "\x00"}}}, "X-Api-Key"},
		{"header LF", Config{BaseURL: "https://sonarr.lan", Header: http.Header{"Authorization": {"Bearer " + secret + "\n"}}}, "Authorization"},
		{"bad header name", Config{BaseURL: "https://sonarr.lan", Header: http.Header{"X Api": {secret}}}, "Header"},
		{"user agent CR", Config{BaseURL: "https://sonarr.lan", UserAgent: "a\rb"}, "UserAgent"},
		{"negative timeout", Config{BaseURL: "https://sonarr.lan", Timeout: -1}, "Timeout"},
		{"negative max bytes", Config{BaseURL: "https://sonarr.lan", MaxBytes: -1}, "MaxBytes"},
		{"negative concurrency", Config{BaseURL: "https://sonarr.lan", MaxConcurrent: -1}, "MaxConcurrent"},
		{"missing CA file", Config{BaseURL: "https://sonarr.lan", CAFile: filepath.Join(dir, "nope.pem")}, "CAFile"},
		{"garbage CA file", Config{BaseURL: "https://sonarr.lan", CAFile: garbage}, "CAFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if c != nil || err == nil {
				t.Fatalf("New accepted an invalid config")
			}
			wantCode(t, err, toolerr.InvalidArgument)
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not name %s", err, tt.mention)
			}
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), secret) {
					t.Errorf("error chain leaks the secret: %q", e)
				}
			}
		})
	}
}

func TestHTTPOptIn(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	if _, err := New(Config{BaseURL: srv.URL}); err == nil {
		t.Fatal("plain http accepted without AllowHTTP")
	}
	c := newClient(t, srv, nil) // AllowHTTP: true
	if err := c.GetJSON(context.Background(), "/", nil, nil); err != nil {
		t.Fatalf("with AllowHTTP: %v", err)
	}
}

func TestCAFile(t *testing.T) {
	srv := newTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"tls":true}`))
	}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		caFile  string
		wantErr string
	}{
		{"with CA file", caFile, ""},
		{"without CA file", "", "certificate not trusted; set the CA file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(Config{BaseURL: srv.URL, CAFile: tt.caFile})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer c.CloseIdleConnections()
			waits := recordSleeps(c)
			var out struct{ TLS bool }
			err = c.GetJSON(context.Background(), "/", nil, &out)
			if tt.wantErr == "" {
				if err != nil || !out.TLS {
					t.Fatalf("GetJSON = %+v, %v", out, err)
				}
				return
			}
			wantCode(t, err, toolerr.UpstreamUnavailable)
			if !strings.Contains(toolerr.MessageOf(err), tt.wantErr) {
				t.Errorf("message %q lacks %q", toolerr.MessageOf(err), tt.wantErr)
			}
			if len(*waits) != 0 {
				t.Errorf("a TLS verification failure was retried")
			}
		})
	}
}

func TestTLSHostnameMismatch(t *testing.T) {
	srv := newTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	// The httptest certificate names 127.0.0.1 and example.com, not localhost.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c, err := New(Config{BaseURL: "https://localhost:" + port, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	err = c.GetJSON(context.Background(), "/", nil, nil)
	wantCode(t, err, toolerr.UpstreamUnavailable)
	if !strings.Contains(toolerr.MessageOf(err), "does not match the host") {
		t.Errorf("message = %q", toolerr.MessageOf(err))
	}
}

func TestPlainHTTPOnTLSBase(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c, err := New(Config{BaseURL: strings.Replace(srv.URL, "http://", "https://", 1)})
	if err != nil {
		t.Fatal(err)
	}
	recordSleeps(c)
	err = c.GetJSON(context.Background(), "/", nil, nil)
	wantCode(t, err, toolerr.UpstreamUnavailable)
	if !strings.Contains(toolerr.MessageOf(err), "did not answer with TLS") {
		t.Errorf("message = %q", toolerr.MessageOf(err))
	}
}

func TestPath(t *testing.T) {
	tests := []struct {
		segs    []string
		want    string
		wantErr bool
	}{
		{[]string{"api", "v3", "series", "12"}, "/api/v3/series/12", false},
		{[]string{"a/b"}, "/a%2Fb", false},
		{[]string{"a b", "c?d", "e#f", "%2e%2e"}, "/a%20b/c%3Fd/e%23f/%252e%252e", false},
		{[]string{"..."}, "/...", false},
		{[]string{".."}, "", true},
		{[]string{"api", "."}, "", true},
		{[]string{"api", ""}, "", true},
		{[]string{}, "", true},
		{[]string{"a\rb"}, "", true},
		{[]string{"a\nb"}, "", true},
		{[]string{"a\x00b"}, "", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.segs), func(t *testing.T) {
			got, err := Path(tt.segs...)
			if tt.wantErr {
				wantCode(t, err, toolerr.InvalidArgument)
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Path = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestHeaderValue(t *testing.T) {
	tests := []struct {
		v  string
		ok bool
	}{
		{"abc-123", true},
		{"Bearer x.y.z", true},
		{"tab\tok", true},
		{"", true},
		{"a\rb", false},
		{"a\nb", false},
		{"a\x00b", false},
		{"a\x7fb", false},
	}
	for _, tt := range tests {
		if err := HeaderValue(tt.v); (err == nil) != tt.ok {
			t.Errorf("HeaderValue(%q) = %v, want ok=%v", tt.v, err, tt.ok)
		}
	}
}

func TestRequestURL(t *testing.T) {
	seen := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	p, err := Path("api", "v3", "series", "a/b")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		base    string
		path    string
		query   url.Values
		wantURI string
	}{
		{"prefix with slash", srv.URL + "/sonarr/", "/api/v3/series", nil, "/sonarr/api/v3/series"},
		{"prefix without slash", srv.URL + "/sonarr", "api/v3/series", nil, "/sonarr/api/v3/series"},
		{"root", srv.URL, "/api/v3/series", url.Values{"page": {"2"}}, "/api/v3/series?page=2"},
		{"escaped segment", srv.URL + "/p/", p, nil, "/p/api/v3/series/a%2Fb"},
		{"trailing slash kept", srv.URL, "/api/", nil, "/api/"},
		{"base query merged", srv.URL + "/?apikey=k", "/x", url.Values{"q": {"1"}}, "/x?apikey=k&q=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(Config{BaseURL: tt.base, AllowHTTP: true, UserAgent: "toolgate-test",
				Header: http.Header{"x-api-key": {"k1"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseIdleConnections()
			_, err = c.Do(context.Background(), Request{Path: tt.path, Query: tt.query,
				Header: http.Header{"X-Api-Key": {"override-attempt"}, "X-Trace": {"t1"}}})
			if err != nil {
				t.Fatal(err)
			}
			r := <-seen
			if r.RequestURI != tt.wantURI {
				t.Errorf("RequestURI = %q, want %q", r.RequestURI, tt.wantURI)
			}
			if got := r.Header.Values("X-Api-Key"); len(got) != 1 || got[0] != "k1" {
				t.Errorf("X-Api-Key = %q, want the static value only", got)
			}
			if r.Header.Get("X-Trace") != "t1" || r.UserAgent() != "toolgate-test" || r.Header.Get("Accept") != "application/json" {
				t.Errorf("headers = %v", r.Header)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	c := newClient(t, srv, nil)
	tests := []struct {
		name string
		req  Request
	}{
		{"dot-dot", Request{Path: "/api/../admin"}},
		{"encoded dot-dot", Request{Path: "/api/%2e%2E/admin"}},
		{"dot", Request{Path: "/./api"}},
		{"empty segment", Request{Path: "/api//x"}},
		{"query in path", Request{Path: "/api?x=1"}},
		{"fragment in path", Request{Path: "/api#x"}},
		{"bad escape", Request{Path: "/api/%zz"}},
		{"encoded CRLF", Request{Path: "/api/a%0d%0ab"}},
		{"header CRLF", Request{Path: "/api", Header: http.Header{"X-A": {"v\r\nX-B: 1"}}}},
		{"header name", Request{Path: "/api", Header: http.Header{"X A": {"v"}}}},
		{"method", Request{Method: "GET /x", Path: "/api"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Do(context.Background(), tt.req)
			wantCode(t, err, toolerr.InvalidArgument)
		})
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("invalid requests reached the server %d times", n)
	}
}

// TestNoSecretLeaks injects known secrets into the API key header, the URL
// userinfo and the URL query, drives every failure path, and scans each
// error (with its whole cause chain) and every log line for them.
func TestNoSecretLeaks(t *testing.T) {
	const (
		apiKey   = "APIKEY-0123456789abcdef"
		password = "PASSWORD-s3cr3t"
		querySec = "QUERYTOKEN-42"
	)
	secrets := []string{apiKey, password, querySec}

	mux := http.NewServeMux()
	mux.HandleFunc("/prefix/echo400", func(w http.ResponseWriter, r *http.Request) {
		// A hostile upstream echoing everything it got.
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"message":"bad key %s %s %s"}`, r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"), r.URL.RawQuery)
	})
	mux.HandleFunc("/prefix/echo500", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, "%s %s", r.Header.Get("X-Api-Key"), r.URL.RawQuery)
	})
	mux.HandleFunc("/prefix/401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	mux.HandleFunc("/prefix/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/prefix/elsewhere?"+r.URL.RawQuery, http.StatusFound)
	})
	mux.HandleFunc("/prefix/big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte(apiKey), 100))
	})
	mux.HandleFunc("/prefix/badjson", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"key":"` + apiKey + `"`))
	})
	mux.HandleFunc("/prefix/drop", func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		_ = conn.Close()
	})
	mux.HandleFunc("/prefix/slow", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// A port with nothing listening, for connection refused.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	_ = ln.Close()

	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mk := func(hostport string) *Client {
		c, err := New(Config{
			BaseURL:   "http://admin:" + password + "@" + hostport + "/prefix/?token=" + querySec,
			AllowHTTP: true,
			Timeout:   200 * time.Millisecond,
			MaxBytes:  100,
			Header:    http.Header{"X-Api-Key": {apiKey}},
			Logger:    logger,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.CloseIdleConnections)
		recordSleeps(c)
		return c
	}
	live := mk(strings.TrimPrefix(srv.URL, "http://"))
	dead := mk(deadAddr)

	ctx := context.Background()
	q := url.Values{"apikey": {querySec}}
	cases := []struct {
		name string
		err  error
		code toolerr.Code
	}{
		{"400 echoing secrets", live.GetJSON(ctx, "/echo400", q, nil), toolerr.InvalidArgument},
		{"500 echoing secrets", live.GetJSON(ctx, "/echo500", q, nil), toolerr.UpstreamUnavailable},
		{"401", live.GetJSON(ctx, "/401", q, nil), toolerr.AuthFailed},
		{"redirect", live.GetJSON(ctx, "/redirect", q, nil), toolerr.UpstreamUnavailable},
		{"too large", live.GetJSON(ctx, "/big", q, nil), toolerr.TooLarge},
		{"bad json", live.GetJSON(ctx, "/badjson", q, &map[string]any{}), toolerr.UpstreamUnavailable},
		{"dropped connection", live.GetJSON(ctx, "/drop", q, nil), toolerr.UpstreamUnavailable},
		{"timeout", live.GetJSON(ctx, "/slow", q, nil), toolerr.Timeout},
		{"POST 400", live.PostJSON(ctx, "/echo400", map[string]string{"k": apiKey}, nil), toolerr.InvalidArgument},
		{"connection refused", dead.GetJSON(ctx, "/x", q, nil), toolerr.UpstreamUnavailable},
	}
	for _, tc := range cases {
		wantCode(t, tc.err, tc.code)
		for e := tc.err; e != nil; e = errors.Unwrap(e) {
			text := fmt.Sprintf("%v %+v", e, e)
			for _, s := range secrets {
				if strings.Contains(text, s) {
					t.Errorf("%s: error chain leaks %q: %s", tc.name, s, text)
				}
			}
		}
	}
	if logs.Len() == 0 {
		t.Error("no retry was logged; the log scan proves nothing")
	}
	for _, s := range secrets {
		if strings.Contains(logs.String(), s) {
			t.Errorf("log leaks %q", s)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"1", time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"99999999999999999999", 0, false},
		{"9999999999", 24 * time.Hour, true},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.v, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

func BenchmarkGetJSON(b *testing.B) {
	payload := []byte(`{"id":1,"title":"Some Show","monitored":true,"seasons":[1,2,3,4,5]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(payload)
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL, AllowHTTP: true, Header: http.Header{"X-Api-Key": {"k"}}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ctx := context.Background()
	var out struct {
		ID      int    `json:"id"`
		Title   string `json:"title"`
		Seasons []int  `json:"seasons"`
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.GetJSON(ctx, "/api/v3/series/1", nil, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }

func jsonWrite(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// A request's own Timeout replaces the client's deadline for that request
// only: a slow search on a client whose other requests are quick.
func TestRequestTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(300 * time.Millisecond):
			case <-r.Context().Done():
			}
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer slow.Close()
	tests := []struct {
		name     string
		client   time.Duration
		req      Request
		wantCode toolerr.Code
		wantText string
	}{
		{name: "client deadline applies", client: 50 * time.Millisecond, req: Request{Path: "/slow"}, wantCode: toolerr.Timeout, wantText: "50ms"},
		{name: "longer request deadline wins", client: 50 * time.Millisecond, req: Request{Path: "/slow", Timeout: 5 * time.Second}},
		{name: "shorter request deadline wins", client: 5 * time.Second, req: Request{Path: "/slow", Timeout: 60 * time.Millisecond}, wantCode: toolerr.Timeout, wantText: "60ms"},
		{name: "other requests keep the client deadline", client: 50 * time.Millisecond, req: Request{Path: "/quick"}},
		{name: "negative request deadline refused", client: time.Second, req: Request{Path: "/quick", Timeout: -1}, wantCode: toolerr.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, slow, func(c *Config) { c.Timeout, c.Retries = tt.client, -1 })
			var out map[string]any
			err := c.DoJSON(t.Context(), tt.req, &out)
			if tt.wantCode == "" {
				if err != nil || out["ok"] != true {
					t.Fatalf("DoJSON: %v, %v", err, out)
				}
				return
			}
			wantCode(t, err, tt.wantCode)
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("message %q does not name the deadline %s", err, tt.wantText)
			}
		})
	}
}

// An unreachable upstream's message names its host and the setting to fix
// (what /readyz and install.sh print), and nothing else of the URL.
func TestUnreachableNamesHostAndSetting(t *testing.T) {
	t.Parallel()
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close() // nothing listens there any more
	cases := []struct {
		name, url, setting string
		want               []string
	}{
		{"unresolvable host", "http://sonarr.invalid:8989/sonarr?apikey=SECRET-Q", "SONARR_URL",
			[]string{"Sonarr host sonarr.invalid cannot be resolved", "SONARR_URL"}},
		{"connection refused", refusedURL + "/?token=SECRET-Q", "SONARR_URL",
			[]string{"Sonarr at 127.0.0.1 refused the connection", "SONARR_URL"}},
		{"no setting named", "http://sonarr.invalid:8989/", "",
			[]string{"Sonarr host sonarr.invalid cannot be resolved", "the base URL"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(Config{Name: "Sonarr", Setting: tc.setting, BaseURL: tc.url, AllowHTTP: true, Retries: -1})
			if err != nil {
				t.Fatal(err)
			}
			err = c.GetJSON(context.Background(), "/api/v3/system/status", nil, &map[string]any{})
			wantCode(t, err, toolerr.UpstreamUnavailable)
			msg := toolerr.MessageOf(err)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, leak := range []string{"SECRET-Q", "/sonarr", "8989", "http://"} {
				if strings.Contains(msg, leak) {
					t.Errorf("message %q shows more of the URL than its host: %q", msg, leak)
				}
			}
		})
	}
}
