package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// TokenSource gives an Authenticator the clients it accepts. A *Tokens is
// a source that never changes; a *TokenFile follows its file.
type TokenSource interface {
	// Current is the clients accepted now.
	Current() *Tokens
	// Recheck is asked when a token matched no client of Current: a source
	// that can change looks again (bounded in cost) and returns the clients
	// to check the token against; one that cannot returns nil.
	Recheck() *Tokens
}

// Current returns t itself: parsed tokens never change.
func (t *Tokens) Current() *Tokens { return t }

// Recheck returns nil: there is nothing to look at again.
func (t *Tokens) Recheck() *Tokens { return nil }

// DefaultTokenCheckInterval is how often a TokenFile reads its file.
const DefaultTokenCheckInterval = time.Second

// DefaultTokenSettle is how long a changed tokens file must stay the same
// before it is taken in.
const DefaultTokenSettle = 50 * time.Millisecond

// maxTokensFile bounds what is read of a tokens file: a line is about 100
// bytes, so this is room for some ten thousand clients.
const maxTokensFile = 1 << 20

// TokenFileOptions configure a TokenFile; every field is optional.
type TokenFileOptions struct {
	// Validate refuses tokens the gateway cannot serve as a whole (a
	// user=jwt client without the end-user token secret): such a file is
	// kept out like a malformed one.
	Validate func(*Tokens) error
	// OnChange learns of every replacement, after it took effect.
	OnChange func(old, new *Tokens)
	// Interval is how often Run reads the file (DefaultTokenCheckInterval).
	Interval time.Duration
	// Settle is how long a changed content must stay the same to be taken
	// in (DefaultTokenSettle).
	Settle time.Duration
	Logger *slog.Logger
	Now    func() time.Time
}

// TokenFile is a tokens file that takes effect when it changes, however
// it changed (edited in place, replaced by a rename, written by
// install.sh): Run reads it every Interval, and a token that matches no
// client has the file looked at again before it is refused, so a token
// minted a moment ago works at once. A file that cannot be read, is
// malformed or fails Validate changes nothing: the clients loaded before
// stay, and the problem is logged once, by line number, never with a
// line's content. A replacement is one atomic swap: every request sees
// either the old clients or the new ones.
type TokenFile struct {
	path string
	o    TokenFileOptions

	cur atomic.Pointer[Tokens]

	mu sync.Mutex // serialises the looks at the file; guards the rest
	// replace ends cur's Changed context once cur is replaced.
	replace context.CancelFunc
	// seen is the content last read, loaded or refused, and loaded the one
	// in cur (SHA-256 each); stamp is the file's size and time at
	// that read, and readAt when it happened.
	seen, loaded [sha256.Size]byte
	stamp        fileStamp
	readAt       time.Time
	// failing is the problem logged last; it is logged again only when it
	// changes, so a broken file does not fill the log every second.
	failing string
}

// fileStamp is what a stat says about a file's content without reading
// it. Two writes of the same size within the file system's time
// granularity look alike: Run's read every Interval catches those.
type fileStamp struct {
	ok    bool
	size  int64
	mtime time.Time
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{ok: true, size: fi.Size(), mtime: fi.ModTime()}
}

// OpenTokenFile reads the tokens file at path. It fails when the file
// cannot be read, parsed or validated: at start there are no earlier
// clients to keep.
func OpenTokenFile(path string, o TokenFileOptions) (*TokenFile, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultTokenCheckInterval
	}
	if o.Settle <= 0 {
		o.Settle = DefaultTokenSettle
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &TokenFile{path: path, o: o}
	data, stamp, err := f.read()
	if err != nil {
		return nil, fmt.Errorf("load tokens: %w", err)
	}
	t, err := f.parse(data)
	if err != nil {
		return nil, fmt.Errorf("load tokens %s: %w", path, err)
	}
	f.seen, f.stamp, f.readAt = sha256.Sum256(data), stamp, o.Now()
	f.loaded = f.seen
	f.install(t)
	return f, nil
}

// Path is the file's path.
func (f *TokenFile) Path() string { return f.path }

// Current returns the clients accepted now.
func (f *TokenFile) Current() *Tokens { return f.cur.Load() }

// Recheck looks at the file for a token that matched no client: a stat,
// and a read only when the file's size or time changed since the
// last read or that read is older than Interval. A flood of bad tokens
// thus costs a stat each and a read per Interval, while a token minted
// into the file a moment ago is found at once.
func (f *TokenFile) Recheck() *Tokens {
	f.mu.Lock()
	defer f.mu.Unlock()
	fi, err := os.Stat(f.path)
	var stamp fileStamp
	if err == nil {
		stamp = stampOf(fi)
	}
	if stamp == f.stamp && f.o.Now().Sub(f.readAt) < f.o.Interval {
		return f.cur.Load()
	}
	f.checkLocked()
	return f.cur.Load()
}

// Check reads the file now and takes in a changed, valid content.
func (f *TokenFile) Check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.checkLocked()
}

// Run reads the file every Interval until ctx ends.
func (f *TokenFile) Run(ctx context.Context) {
	tick := time.NewTicker(f.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f.Check()
		}
	}
}

func (f *TokenFile) checkLocked() {
	f.readAt = f.o.Now()
	data, stamp, err := f.read()
	f.stamp = stamp
	old := f.cur.Load()
	if err != nil {
		// Forgotten, so the same content readable again is looked at.
		f.seen = [sha256.Size]byte{}
		f.fail(fmt.Sprintf("cannot be read (%s)", readProblem(err)), old)
		return
	}
	sum := sha256.Sum256(data)
	if sum == f.seen {
		return
	}
	// A file rewritten in place is empty or half written for a moment, and
	// half a line can still parse (a user=jwt client without its mode):
	// new content counts once a second read a moment later agrees.
	for settled := false; !settled; {
		time.Sleep(f.o.Settle)
		again, stamp2, err := f.read()
		if err != nil {
			f.seen = [sha256.Size]byte{}
			f.fail(fmt.Sprintf("cannot be read (%s)", readProblem(err)), old)
			return
		}
		sum2 := sha256.Sum256(again)
		settled = sum2 == sum
		data, sum, f.stamp = again, sum2, stamp2
	}
	f.seen = sum
	if sum == f.loaded {
		// What is loaded already, readable again.
		if f.failing != "" {
			f.o.Logger.Info("client tokens file readable again, unchanged", "path", f.path, "clients", old.Len())
			f.failing = ""
		}
		return
	}
	t, err := f.parse(data)
	if err != nil {
		f.fail(err.Error(), old)
		return
	}
	f.failing, f.loaded = "", sum
	f.install(t)
	f.o.Logger.Info("client tokens reloaded", "path", f.path, "clients", t.Len(), "before", old.Len())
	if f.o.OnChange != nil {
		f.o.OnChange(old, t)
	}
}

// fail logs why the file was not taken in, once per distinct problem.
func (f *TokenFile) fail(problem string, kept *Tokens) {
	if problem == f.failing {
		return
	}
	f.failing = problem
	f.o.Logger.Error("client tokens file not reloaded: "+problem+"; the clients loaded before stay until it is fixed",
		"path", f.path, "clients", kept.Len())
}

// install makes t the current clients and ends the Changed context of the
// ones it replaces (after the swap, so whoever wakes sees t).
func (f *TokenFile) install(t *Tokens) {
	ctx, cancel := context.WithCancel(context.Background())
	t.changed = ctx
	f.cur.Store(t)
	if f.replace != nil {
		f.replace()
	}
	f.replace = cancel
}

func (f *TokenFile) read() ([]byte, fileStamp, error) {
	file, err := os.Open(f.path)
	if err != nil {
		return nil, fileStamp{}, err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, fileStamp{}, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fileStamp{}, errors.New("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(file, maxTokensFile+1))
	if err != nil {
		return nil, fileStamp{}, err
	}
	if len(data) > maxTokensFile {
		return nil, fileStamp{}, fmt.Errorf("larger than %d bytes", maxTokensFile)
	}
	return data, stampOf(fi), nil
}

func (f *TokenFile) parse(data []byte) (*Tokens, error) {
	t, err := ParseTokens(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if f.o.Validate != nil {
		if err := f.o.Validate(t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// readProblem names why a file could not be read without the path, which
// the log line carries on its own.
func readProblem(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return err.Error()
}

// Gone lists the clients of old that new no longer has as they were: their
// token removed or given to another name, their groups or end-user mode
// changed. Their sessions belong to a token that is no longer there.
func Gone(old, new *Tokens) []string {
	if old == nil {
		return nil
	}
	var out []string
	for h, e := range old.byHash {
		if n, ok := new.byHash[h]; !ok || !sameClient(n.client, e.client) {
			out = append(out, e.client.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func sameClient(a, b Client) bool {
	return a.Name == b.Name && a.UserMode == b.UserMode && slices.Equal(a.Groups, b.Groups)
}

// ErrTokenRemoved ends the context of a request whose token left the
// tokens file while it ran.
var ErrTokenRemoved = errors.New("the client token was removed from the tokens file")

// whileValid returns ctx, cancelled with ErrTokenRemoved once tokens are
// replaced by ones without token's client as it was; stop releases it.
// Until a replacement it costs one registration on tokens' changed
// context, no goroutine.
func (a *Authenticator) whileValid(ctx context.Context, tokens *Tokens, token string, c Client) (context.Context, func()) {
	if tokens.changed == nil {
		return ctx, func() {}
	}
	sum := sha256.Sum256([]byte(token))
	ctx, cancel := context.WithCancelCause(ctx)
	var (
		mu    sync.Mutex
		done  bool
		unreg func() bool
	)
	var watch func(t *Tokens)
	watch = func(t *Tokens) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		unreg = context.AfterFunc(t.changed, func() {
			now := a.tokens.Current()
			if e, ok := now.byHash[sum]; ok && sameClient(e.client, c) {
				watch(now)
				return
			}
			cancel(ErrTokenRemoved)
		})
	}
	watch(tokens)
	return ctx, func() {
		mu.Lock()
		done = true
		if unreg != nil {
			unreg()
		}
		mu.Unlock()
		cancel(nil)
	}
}
