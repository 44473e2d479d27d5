package tickets_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

func openFile(t *testing.T, path string, c *fakeclock.Clock) *tickets.Store {
	t.Helper()
	s, err := tickets.Open(path, c.Now, 100, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// reopen closes s and opens its file again, as a gateway restart does.
func reopen(t *testing.T, s *tickets.Store, path string, c *fakeclock.Clock) *tickets.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openFile(t, path, c)
	t.Cleanup(func() { s2.Close() })
	return s2
}

func TestTicketsSurviveReopen(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, c)
	ready := issue(t, s, approval.Model)
	pending, err := s.Issue(base, "sha256:preview", approval.Human, ttl, json.RawMessage(`{"to":"unlocked"}`), tickets.WithReason("destructive write needs human approval"))
	if err != nil {
		t.Fatal(err)
	}
	// A preview that is not JSON comes back byte for byte too.
	odd, err := s.Issue(base, "sha256:p2", approval.Model, ttl, json.RawMessage("not json \xff"))
	if err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, path, c)
	for _, want := range []tickets.Ticket{ready, pending, odd} {
		got, ok := s.Get(want.ID)
		if !ok {
			t.Fatalf("ticket %s lost across reopen", want.ID)
		}
		if got.Binding != want.Binding || got.State != want.State || got.PreviewDigest != want.PreviewDigest ||
			got.Approval != want.Approval || string(got.Preview) != string(want.Preview) || got.Reason != want.Reason ||
			!got.Created.Equal(want.Created) || !got.Expires.Equal(want.Expires) {
			t.Errorf("reopened ticket\n got %+v\nwant %+v", got, want)
		}
	}
	if _, err := s.Redeem(ready.ID, base); err != nil {
		t.Errorf("fresh preview not confirmable after reopen: %v", err)
	}
}

func TestUsedTicketStaysUsedAcrossReopen(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, c)
	tk := issue(t, s, approval.Model)
	if _, err := s.Redeem(tk.ID, base); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, path, c)
	if _, err := s.Redeem(tk.ID, base); !errors.Is(err, tickets.ErrUsed) {
		t.Fatalf("replay after reopen: %v, want ErrUsed", err)
	}
}

func TestDecisionsSurviveReopen(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, c)
	approvedBefore := issue(t, s, approval.Human)
	approvedAfter := issue(t, s, approval.Human)
	denied := issue(t, s, approval.Human)
	if _, err := s.Approve(approvedBefore.ID, "ann"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Deny(denied.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, path, c)
	if got, _ := s.Get(approvedBefore.ID); got.State != tickets.Ready || got.DecidedBy != "ann" {
		t.Errorf("approved ticket after reopen: %+v", got)
	}
	if _, err := s.Approve(approvedAfter.ID, "ann"); err != nil {
		t.Fatalf("pending ticket cannot be approved after reopen: %v", err)
	}
	for _, id := range []string{approvedBefore.ID, approvedAfter.ID} {
		if _, err := s.Redeem(id, base); err != nil {
			t.Errorf("approved ticket %s: %v", id, err)
		}
	}
	if _, err := s.Redeem(denied.ID, base); !errors.Is(err, tickets.ErrDenied) {
		t.Errorf("denied ticket after reopen: %v", err)
	}
}

func TestExpiredTicketsArePrunedFromTheFile(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, c)
	short, err := s.Issue(base, "sha256:p", approval.Model, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	long := issue(t, s, approval.Model)
	c.Advance(2 * time.Minute)
	if n := s.Prune(); n != 1 {
		t.Fatalf("pruned %d, want 1", n)
	}
	s.Close()
	if ids := storedIDs(t, path); len(ids) != 1 || ids[0] != long.ID {
		t.Errorf("file holds %v, want only %s", ids, long.ID)
	}
	// One that expired while the gateway was down goes at the next start.
	c.Advance(ttl)
	s = openFile(t, path, c)
	s.Close()
	if ids := storedIDs(t, path); len(ids) != 0 {
		t.Errorf("expired tickets kept: %v", ids)
	}
	_ = short
}

func TestTicketFileIsPrivate(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	loose := filepath.Join(dir, "loose.db")
	s := openFile(t, loose, newClock())
	s.Close()
	if err := os.Chmod(loose, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, loose} {
		s := openFile(t, path, newClock())
		s.Close()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", filepath.Base(path), fi.Mode().Perm())
		}
	}
}

func TestUnreadableTicketFileIsRefused(t *testing.T) {
	good := func(t *testing.T, path string) {
		s := openFile(t, path, newClock())
		issue(t, s, approval.Model)
		s.Close()
	}
	rewrite := func(f func(b *bolt.Bucket, meta *bolt.Bucket) error) func(*testing.T, string) {
		return func(t *testing.T, path string) {
			good(t, path)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Update(func(tx *bolt.Tx) error {
				return f(tx.Bucket([]byte("tickets")), tx.Bucket([]byte("meta")))
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	firstKey := func(b *bolt.Bucket) []byte { k, _ := b.Cursor().First(); return append([]byte(nil), k...) }
	tests := []struct {
		name string
		make func(*testing.T, string)
	}{
		{"not a database", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(strings.Repeat("garbage ", 2048)), 0o600)
		}},
		{"cut short", func(t *testing.T, path string) {
			good(t, path)
			data, _ := os.ReadFile(path)
			os.WriteFile(path, data[:len(data)/3], 0o600)
		}},
		{"damaged page", func(t *testing.T, path string) {
			good(t, path)
			data, _ := os.ReadFile(path)
			for i := 2 * 4096; i < len(data); i++ {
				data[i] ^= 0x5a
			}
			os.WriteFile(path, data, 0o600)
		}},
		{"record not JSON", rewrite(func(b, _ *bolt.Bucket) error { return b.Put(firstKey(b), []byte("{nope")) })},
		{"record under another id", rewrite(func(b, _ *bolt.Bucket) error {
			v := b.Get(firstKey(b))
			return b.Put([]byte("tkt_other"), append([]byte(nil), v...))
		})},
		{"unknown state", rewrite(func(b, _ *bolt.Bucket) error {
			k := firstKey(b)
			v := strings.Replace(string(b.Get(k)), `"state":"ready"`, `"state":"approved-ish"`, 1)
			return b.Put(k, []byte(v))
		})},
		{"binding missing", rewrite(func(b, _ *bolt.Bucket) error {
			k := firstKey(b)
			v := strings.Replace(string(b.Get(k)), `"args_digest":"sha256:args"`, `"args_digest":""`, 1)
			return b.Put(k, []byte(v))
		})},
		{"newer format", rewrite(func(_, meta *bolt.Bucket) error { return meta.Put([]byte("format"), []byte("2")) })},
		{"format marker missing", rewrite(func(_, meta *bolt.Bucket) error { return meta.Delete([]byte("format")) })},
		{"a directory", func(t *testing.T, path string) { os.Mkdir(path, 0o700) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tickets.db")
			tc.make(t, path)
			s, err := tickets.Open(path, newClock().Now, 100, 0)
			if err == nil {
				s.Close()
				t.Fatal("opened an unreadable ticket file")
			}
			t.Log(err)
			if !errors.Is(err, tickets.ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q: want ErrCorrupt naming the file", err)
			}
			if strings.Contains(err.Error(), "unlocked") {
				t.Errorf("error shows a preview: %q", err)
			}
		})
	}
}

func TestSecondGatewayCannotShareTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, newClock())
	defer s.Close()
	if s2, err := tickets.Open(path, newClock().Now, 100, 0); err == nil {
		s2.Close()
		t.Fatal("a second store opened a file in use")
	} else if !strings.Contains(err.Error(), "locked") {
		t.Errorf("error %q does not say the file is locked", err)
	}
}

func TestWriteFailureChangesNothing(t *testing.T) {
	c := newClock()
	s := openFile(t, filepath.Join(t.TempDir(), "tickets.db"), c)
	ready := issue(t, s, approval.Model)
	pending := issue(t, s, approval.Human)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := tickets.BreakFile(s); err != nil {
		t.Fatal(err)
	}
	// A ticket that waits for a person is on disk before it is issued.
	if _, err := s.Issue(base, "sha256:p", approval.Human, ttl, nil); !errors.Is(err, tickets.ErrStore) {
		t.Errorf("human issue with a broken file: %v, want ErrStore", err)
	}
	// A ready one is written behind; once that write failed, no more are
	// issued.
	behind, err := s.Issue(base, "sha256:p", approval.Model, ttl, nil)
	if err != nil {
		t.Fatalf("model issue: %v", err)
	}
	if err := s.Flush(); !errors.Is(err, tickets.ErrStore) {
		t.Errorf("flush with a broken file: %v, want ErrStore", err)
	}
	if _, err := s.Issue(base, "sha256:p", approval.Model, ttl, nil); !errors.Is(err, tickets.ErrStore) {
		t.Errorf("issue after a failed write: %v, want ErrStore", err)
	}
	if _, err := s.Redeem(ready.ID, base); !errors.Is(err, tickets.ErrStore) {
		t.Errorf("redeem with a broken file: %v, want ErrStore", err)
	}
	if _, err := s.Approve(pending.ID, "ann"); !errors.Is(err, tickets.ErrStore) {
		t.Errorf("approve with a broken file: %v, want ErrStore", err)
	}
	if got, _ := s.Get(ready.ID); got.State != tickets.Ready {
		t.Errorf("ready ticket is %s after a failed redeem", got.State)
	}
	if got, _ := s.Get(pending.ID); got.State != tickets.Pending {
		t.Errorf("pending ticket is %s after a failed approve", got.State)
	}
	if n := len(s.List("")); n != 3 {
		t.Errorf("%d tickets after failed issues, want 3 (ready, pending, %s)", n, behind.ID)
	}
}

// A crash loses at most ready tickets not yet written behind (unknown
// afterwards, so their writes need a new preview); a redeemed ticket is
// used after it, however soon after its issue it was redeemed, and a
// ticket waiting for a person is kept.
func TestCrashKeepsRedeemsAndPendingTickets(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s, err := tickets.Open(path, c.Now, 10_000, 0)
	if err != nil {
		t.Fatal(err)
	}
	const workers, per = 8, 40
	var mu sync.Mutex
	var redeemed, issued, pending []string
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range per {
				tk, err := s.Issue(base, "sha256:p", approval.Model, ttl, nil)
				if err != nil {
					t.Error(err)
					return
				}
				switch {
				case i%4 == 3 && w%2 == 0:
					p, err := s.Issue(base, "sha256:p", approval.Human, ttl, nil)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					pending = append(pending, p.ID)
					mu.Unlock()
				case i%2 == 0:
					if _, err := s.Redeem(tk.ID, base); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					redeemed = append(redeemed, tk.ID)
					mu.Unlock()
					continue
				}
				mu.Lock()
				issued = append(issued, tk.ID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := tickets.Crash(s); err != nil {
		t.Fatal(err)
	}
	s = openFile(t, path, c)
	defer s.Close()
	for _, id := range redeemed {
		if _, err := s.Redeem(id, base); !errors.Is(err, tickets.ErrUsed) {
			t.Errorf("ticket %s redeemed before the crash: %v after it, want ErrUsed", id, err)
		}
	}
	for _, id := range pending {
		if got, ok := s.Get(id); !ok || got.State != tickets.Pending {
			t.Errorf("pending ticket %s after the crash: %+v %v", id, got, ok)
		}
	}
	for _, id := range issued {
		if got, ok := s.Get(id); ok && got.State != tickets.Ready {
			t.Errorf("issued ticket %s is %s after the crash, want ready or lost", id, got.State)
		}
	}
}

func TestFlushWritesIssuedTickets(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, c)
	tk := issue(t, s, approval.Model)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := tickets.Crash(s); err != nil {
		t.Fatal(err)
	}
	s = openFile(t, path, c)
	defer s.Close()
	if _, err := s.Redeem(tk.ID, base); err != nil {
		t.Errorf("flushed ticket after a crash: %v", err)
	}
}

func TestClosedStoreIssuesNothing(t *testing.T) {
	s := openFile(t, filepath.Join(t.TempDir(), "tickets.db"), newClock())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []approval.Kind{approval.Model, approval.Human} {
		if _, err := s.Issue(base, "sha256:p", k, ttl, nil); !errors.Is(err, tickets.ErrStore) {
			t.Errorf("%s issue after close: %v, want ErrStore", k, err)
		}
	}
}

func storedIDs(t *testing.T, path string) []string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("tickets")).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	return ids
}

// TestIssuedTicketsAreWrittenBehind: without a Flush, the writer puts
// issued tickets into the file on its own (several in one transaction), so
// a crash after that keeps them.
func TestIssuedTicketsAreWrittenBehind(t *testing.T) {
	c := newClock()
	path := filepath.Join(t.TempDir(), "tickets.db")
	s := openFile(t, path, c)
	var ids []string
	for range 5 {
		ids = append(ids, issue(t, s, approval.Model).ID)
	}
	// No timing is asserted: wait (generously) until nothing is behind.
	for deadline := time.Now().Add(30 * time.Second); tickets.Behind(s) > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d tickets still not written", tickets.Behind(s))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := tickets.Crash(s); err != nil {
		t.Fatal(err)
	}
	s = openFile(t, path, c)
	defer s.Close()
	for _, id := range ids {
		if _, ok := s.Get(id); !ok {
			t.Errorf("ticket %s lost in a crash after it was written behind", id)
		}
	}
}
