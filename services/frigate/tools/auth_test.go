package tools

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/frigate/client"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

func TestAuthentication(t *testing.T) {
	// revokeOnce revokes every session just before the first events read.
	revokeOnce := func(h *harness, next http.Handler) http.Handler {
		var once sync.Once
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/events" {
				once.Do(h.fake.Revoke)
			}
			next.ServeHTTP(w, r)
		})
	}
	// revokeAlways rejects every events read as Frigate does a revoked JWT.
	revokeAlways := func(_ *harness, next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/events" {
				http.Error(w, `{"message":"Frigate's reason","trace":"`+errorBody+`"}`, http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	tests := []struct {
		name     string
		opts     harnessOpts
		calls    int
		wantCode string // "" means success
		logins   int
		// eventsReads is how many /api/events requests reached Frigate.
		eventsReads int
	}{
		{name: "managed login once for several reads", calls: 3, logins: 1, eventsReads: 3},
		{name: "revoked session re-login once then success", opts: harnessOpts{front: revokeOnce}, calls: 1, logins: 2, eventsReads: 2},
		{name: "revoked again after re-login is reported", opts: harnessOpts{front: revokeAlways}, calls: 1, wantCode: "auth_failed", logins: 2},
		{name: "each read gets its own single re-login", opts: harnessOpts{front: revokeAlways}, calls: 2, wantCode: "auth_failed", logins: 3},
		{name: "bad password fails once and is never retried",
			opts:  harnessOpts{settings: func(s *Settings) { s.Password = []byte("wrong-password-123") }},
			calls: 3, wantCode: "auth_failed", logins: 1},
		{name: "bearer token accepted without login",
			opts:  harnessOpts{settings: func(s *Settings) { s.Auth, s.Username, s.Password, s.Token = client.Bearer, "", nil, []byte(testToken) }},
			calls: 2, logins: 0, eventsReads: 2},
		{name: "bearer token never refreshed",
			opts: harnessOpts{settings: func(s *Settings) { s.Auth, s.Username, s.Password, s.Token = client.Bearer, "", nil, []byte(testToken) },
				front: revokeOnce},
			calls: 2, wantCode: "auth_failed", logins: 0},
		{name: "unauthenticated against an open Frigate",
			opts: harnessOpts{settings: func(s *Settings) { s.Auth, s.Username, s.Password = client.Unauthenticated, "", nil },
				fake: func(o *fakefrigate.Options) { o.Unauthenticated = true }},
			calls: 1, logins: 0, eventsReads: 1},
		{name: "unauthenticated against the authenticated port",
			opts:  harnessOpts{settings: func(s *Settings) { s.Auth, s.Username, s.Password = client.Unauthenticated, "", nil }},
			calls: 1, wantCode: "auth_failed", logins: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.opts)
			for i := 0; i < tc.calls; i++ {
				out, isErr := h.call(t, "frigate_list_events", window())
				if tc.wantCode == "" && isErr {
					t.Fatalf("call %d failed: %v", i, out)
				}
				if tc.wantCode != "" && (!isErr || errCode(out) != tc.wantCode) {
					t.Fatalf("call %d: want %s, got %v", i, tc.wantCode, out)
				}
			}
			if got := h.fake.Logins(); got != tc.logins {
				t.Errorf("logins = %d, want %d", got, tc.logins)
			}
			if tc.eventsReads > 0 {
				if got := len(h.requests("GET /api/events?")); got != tc.eventsReads {
					t.Errorf("events reads = %d, want %d", got, tc.eventsReads)
				}
			}
			assertNoSecrets(t, h)
		})
	}
}

// Concurrent reads share one login instead of stampeding /api/login.
func TestConcurrentReadsShareOneLogin(t *testing.T) {
	h := newHarness(t, harnessOpts{limits: func(l *toolkit.Limits) { l.MaxConcurrent = 8 }})
	var wg sync.WaitGroup
	var failures atomic.Int64
	for i := 0; i < 6; i++ {
		wg.Go(func() {
			if _, isErr := h.call(t, "frigate_list_cameras", nil); isErr {
				failures.Add(1)
			}
		})
	}
	wg.Wait()
	if failures.Load() != 0 {
		t.Fatalf("%d concurrent reads failed", failures.Load())
	}
	if got := h.fake.Logins(); got != 1 {
		t.Fatalf("logins = %d, want 1", got)
	}
}

func TestBadCredentialsMessageIsActionable(t *testing.T) {
	h := newHarness(t, harnessOpts{settings: func(s *Settings) { s.Password = []byte("wrong-password-123") }})
	msg := h.mustFail(t, "frigate_list_cameras", nil, "auth_failed")
	if !strings.Contains(msg, "restart") {
		t.Errorf("message does not say how to recover: %q", msg)
	}
}
