package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/fakeclock"
)

// minted is one client token and its tokens-file line.
type minted struct{ name, token, line string }

func mint(t *testing.T, name string, mode UserMode, groups ...string) minted {
	t.Helper()
	tok, line, err := NewToken(name, groups, mode)
	if err != nil {
		t.Fatal(err)
	}
	return minted{name, tok, line}
}

// tokenRig is a tokens file on disk, a TokenFile following it and an
// Authenticator in front of a handler that answers the client's name.
type tokenRig struct {
	path  string
	file  *TokenFile
	srv   *httptest.Server
	logs  *capture.Buffer
	clock *fakeclock.Clock
}

func newTokenRig(t *testing.T, users UserTokens, lines ...string) *tokenRig {
	t.Helper()
	r := &tokenRig{path: filepath.Join(t.TempDir(), "client_tokens"), logs: &capture.Buffer{}, clock: fakeclock.New(time.Unix(1_800_000_000, 0))}
	r.write(t, lines...)
	logger := slog.New(slog.NewJSONHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f, err := OpenTokenFile(r.path, TokenFileOptions{Validate: users.Accepts, Logger: logger, Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	r.file = f
	a, err := NewAuthenticator(f, nil, users, logger)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, _ := IdentityFrom(req.Context())
		_, _ = fmt.Fprint(w, id.Client.Name)
	})))
	t.Cleanup(r.srv.Close)
	return r
}

// write replaces the file's content in place, as install.sh does.
func (r *tokenRig) write(t *testing.T, lines ...string) {
	t.Helper()
	if err := os.WriteFile(r.path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// status is the HTTP status of a request with token, and the client name
// the handler saw.
func (r *tokenRig) status(t *testing.T, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 256))
	return res.StatusCode, string(body)
}

// A token added to the file works on its very first request, before any
// periodic read: the miss has the file looked at again.
func TestATokenAddedToTheFileWorksAtOnce(t *testing.T) {
	old, added := mint(t, "openwebui", UserNone, "users"), mint(t, "demo-admin", UserNone, "admins")
	r := newTokenRig(t, UserTokens{}, old.line)
	if code, _ := r.status(t, added.token); code != http.StatusUnauthorized {
		t.Fatalf("a token not yet in the file: HTTP %d, want 401", code)
	}
	r.write(t, old.line, added.line)
	if code, name := r.status(t, added.token); code != http.StatusOK || name != "demo-admin" {
		t.Fatalf("the token just added: HTTP %d as %q, want 200 as demo-admin", code, name)
	}
	if code, _ := r.status(t, old.token); code != http.StatusOK {
		t.Errorf("the token already there: HTTP %d after the reload", code)
	}
	if !strings.Contains(r.logs.String(), "client tokens reloaded") {
		t.Errorf("the reload was not logged:\n%s", r.logs)
	}
}

// A token removed from the file is refused from the next read on, whether
// the file was rewritten in place (install.sh) or replaced by a rename (an
// editor, sed -i); the others keep working.
func TestARemovedTokenIsRefusedAfterTheNextRead(t *testing.T) {
	for _, how := range []string{"in place", "by rename"} {
		t.Run(how, func(t *testing.T) {
			kept, removed := mint(t, "openwebui", UserNone, "users"), mint(t, "demo-admin", UserNone, "admins")
			r := newTokenRig(t, UserTokens{}, kept.line, removed.line)
			if code, _ := r.status(t, removed.token); code != http.StatusOK {
				t.Fatalf("before: HTTP %d", code)
			}
			if how == "in place" {
				r.write(t, kept.line)
			} else {
				tmp := r.path + ".new"
				if err := os.WriteFile(tmp, []byte(kept.line+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, r.path); err != nil {
					t.Fatal(err)
				}
			}
			r.file.Check()
			if code, _ := r.status(t, removed.token); code != http.StatusUnauthorized {
				t.Errorf("the removed token: HTTP %d, want 401", code)
			}
			if code, name := r.status(t, kept.token); code != http.StatusOK || name != "openwebui" {
				t.Errorf("the kept token: HTTP %d as %q", code, name)
			}
		})
	}
}

// Run reads the file on its own: nothing else has to happen for a removal
// to take effect.
func TestRunTakesInAChangeByItself(t *testing.T) {
	kept, removed := mint(t, "openwebui", UserNone, "users"), mint(t, "demo-admin", UserNone, "admins")
	path := filepath.Join(t.TempDir(), "client_tokens")
	if err := os.WriteFile(path, []byte(kept.line+"\n"+removed.line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenTokenFile(path, TokenFileOptions{Interval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if err := os.WriteFile(path, []byte(kept.line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for f.Current().Len() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("Run did not take in the removal within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, ok := f.Current().Lookup(removed.token); ok {
		t.Error("the removed token is still accepted")
	}
}

// A file that cannot be served changes nothing: the clients loaded before
// keep working, nothing of the new content is accepted, and the problem is
// logged once, by line number, never with a token or a hash. Fixing the
// file takes effect.
func TestABrokenTokensFileKeepsTheOldClients(t *testing.T) {
	good, fresh, jwt := mint(t, "openwebui", UserNone, "users"), mint(t, "hermes", UserNone, "users"), mint(t, "owui", UserJWT, "users")
	cases := []struct {
		name   string
		break_ func(t *testing.T, path string)
		says   string
	}{
		{name: "a malformed line", says: "tokens line 2: hash must be 64 hex digits", break_: func(t *testing.T, path string) {
			write(t, path, fresh.line+"\nsha256:abcd broken users\n")
		}},
		{name: "a duplicate client", says: `tokens line 2: duplicate client name`, break_: func(t *testing.T, path string) {
			other := mint(t, "hermes", UserNone, "admins")
			write(t, path, fresh.line+"\n"+other.line+"\n")
		}},
		{name: "user=jwt without the secret", says: "client owui has user=jwt but no end-user token secret", break_: func(t *testing.T, path string) {
			write(t, path, fresh.line+"\n"+jwt.line+"\n")
		}},
		{name: "deleted", says: "cannot be read (no such file or directory)", break_: func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a directory", says: "cannot be read", break_: func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "too large", says: "larger than 1048576 bytes", break_: func(t *testing.T, path string) {
			write(t, path, fresh.line+"\n"+strings.Repeat("# padding\n", maxTokensFile/10+1))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTokenRig(t, UserTokens{}, good.line)
			tc.break_(t, r.path)
			for range 3 {
				r.file.Check()
				if code, _ := r.status(t, fresh.token); code != http.StatusUnauthorized {
					t.Errorf("a token of the refused content: HTTP %d, want 401", code)
				}
				if code, _ := r.status(t, good.token); code != http.StatusOK {
					t.Errorf("the token loaded before: HTTP %d, want 200", code)
				}
			}
			logs := r.logs.String()
			if n := strings.Count(logs, "client tokens file not reloaded"); n != 1 || !strings.Contains(logs, tc.says) || !strings.Contains(logs, `"level":"ERROR"`) {
				t.Errorf("want one error saying %q, got %d:\n%s", tc.says, n, logs)
			}
			for _, secret := range []string{good.token, fresh.token, jwt.token, good.line[7:], fresh.line[7:], jwt.line[7:]} {
				if strings.Contains(logs, secret) {
					t.Errorf("the log holds a token or a hash:\n%s", logs)
				}
			}
			// Fixed: the new content takes effect.
			if fi, err := os.Stat(r.path); err == nil && fi.IsDir() {
				if err := os.Remove(r.path); err != nil {
					t.Fatal(err)
				}
			}
			write(t, r.path, fresh.line+"\n")
			r.file.Check()
			if code, _ := r.status(t, fresh.token); code != http.StatusOK {
				t.Errorf("after the fix, the new token: HTTP %d", code)
			}
			if code, _ := r.status(t, good.token); code != http.StatusUnauthorized {
				t.Errorf("after the fix, the token no longer in the file: HTTP %d", code)
			}
		})
	}
}

// The same content readable again after a gap is nothing new: no reload,
// one line saying the problem is over.
func TestATokensFileReadableAgainIsNoReload(t *testing.T) {
	good := mint(t, "openwebui", UserNone, "users")
	r := newTokenRig(t, UserTokens{}, good.line)
	b, _ := os.ReadFile(r.path)
	if err := os.Remove(r.path); err != nil {
		t.Fatal(err)
	}
	r.file.Check()
	write(t, r.path, string(b))
	r.file.Check()
	logs := r.logs.String()
	if strings.Contains(logs, "client tokens reloaded") || !strings.Contains(logs, "readable again") {
		t.Errorf("want no reload and a line that the file is readable again:\n%s", logs)
	}
}

// A token that matches no client has the file looked at again only when a
// stat says it changed, or once per interval: a flood of bad tokens does
// not read the file each time. A change a stat cannot see (same size, same
// time) is found once the interval has passed.
func TestRecheckIsBoundedByTheFilesStat(t *testing.T) {
	a, b := mint(t, "aaaaaaa", UserNone, "users"), mint(t, "bbbbbbb", UserNone, "users")
	r := newTokenRig(t, UserTokens{}, a.line)
	fi, err := os.Stat(r.path)
	if err != nil {
		t.Fatal(err)
	}
	// b's line has the length of a's: same size; the time is put back.
	write(t, r.path, b.line+"\n")
	if err := os.Chtimes(r.path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if code, _ := r.status(t, b.token); code != http.StatusUnauthorized {
		t.Fatalf("a change the stat cannot see was read within the interval: HTTP %d", code)
	}
	r.clock.Advance(DefaultTokenCheckInterval)
	if code, _ := r.status(t, b.token); code != http.StatusOK {
		t.Fatalf("after the interval the change is still not seen: HTTP %d", code)
	}
}

// An open event stream (GET) ends when its token leaves the file; one
// whose token stays goes on.
func TestAnEventStreamEndsWhenItsTokenIsRemoved(t *testing.T) {
	kept, removed := mint(t, "openwebui", UserNone, "users"), mint(t, "demo-admin", UserNone, "admins")
	path := filepath.Join(t.TempDir(), "client_tokens")
	write(t, path, kept.line+"\n"+removed.line+"\n")
	f, err := OpenTokenFile(path, TokenFileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(f, nil, UserTokens{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]chan error{"openwebui": make(chan error, 1), "demo-admin": make(chan error, 1)}
	var opened sync.WaitGroup
	opened.Add(2)
	srv := httptest.NewServer(a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		id, _ := IdentityFrom(req.Context())
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		opened.Done()
		<-req.Context().Done()
		ended[id.Client.Name] <- context.Cause(req.Context())
	})))
	defer srv.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for _, tok := range []string{kept.token, removed.token} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		go func() {
			if res, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}()
	}
	opened.Wait()

	// First a change that keeps both: the streams stay open.
	other := mint(t, "hermes", UserNone, "users")
	write(t, path, kept.line+"\n"+removed.line+"\n"+other.line+"\n")
	f.Check()
	write(t, path, kept.line+"\n"+other.line+"\n")
	f.Check()
	select {
	case err := <-ended["demo-admin"]:
		if !errors.Is(err, ErrTokenRemoved) {
			t.Errorf("the removed token's stream ended with %v, want ErrTokenRemoved", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the removed token's stream is still open")
	}
	select {
	case err := <-ended["openwebui"]:
		t.Fatalf("the kept token's stream ended too: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
}

// Requests authenticate while the file flips between two contents: each
// is decided by one whole version, never a mix (run with -race).
func TestTokensReloadAtomicallyUnderLoad(t *testing.T) {
	a, b := mint(t, "alpha", UserNone, "users"), mint(t, "beta", UserNone, "admins")
	path := filepath.Join(t.TempDir(), "client_tokens")
	write(t, path, a.line+"\n")
	f, err := OpenTokenFile(path, TokenFileOptions{Settle: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				write(t, path, b.line+"\n")
			} else {
				write(t, path, a.line+"\n")
			}
			f.Check()
			flips.Add(1)
		}
	})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for flips.Load() < 20 {
				cur := f.Current()
				ca, okA := cur.Lookup(a.token)
				cb, okB := cur.Lookup(b.token)
				if okA == okB || (okA && ca.Name != "alpha") || (okB && (cb.Name != "beta" || cb.Groups[0] != "admins")) || cur.Len() != 1 {
					t.Errorf("a mixed or empty version: alpha %v %v, beta %v %v, %d clients", okA, ca, okB, cb, cur.Len())
					return
				}
			}
		})
	}
	readers.Wait()
	close(stop)
	wg.Wait()
}

// Gone names the clients whose token went or changed, so their sessions
// can be ended.
func TestGoneNamesRemovedAndChangedClients(t *testing.T) {
	a, b, c := mint(t, "a", UserNone, "users"), mint(t, "b", UserNone, "users"), mint(t, "c", UserNone, "users")
	bAdmin := strings.Replace(b.line, " users", " admins", 1)
	parse := func(lines ...string) *Tokens {
		tk, err := ParseTokens(strings.NewReader(strings.Join(lines, "\n")))
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	got := Gone(parse(a.line, b.line, c.line), parse(a.line, bAdmin))
	if strings.Join(got, ",") != "b,c" {
		t.Errorf("Gone = %v, want b (groups changed) and c (removed)", got)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
