package tickets_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// newClock returns a settable fake clock at a fixed start.
func newClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

var base = tickets.Binding{
	Client: "openwebui", User: "alice", Service: "homeassistant", Tool: "lock_door",
	ArgsDigest: "sha256:args", Force: false,
}

const ttl = 10 * time.Minute

func issue(t *testing.T, s *tickets.Store, kind approval.Kind) tickets.Ticket {
	t.Helper()
	tk, err := s.Issue(base, "sha256:preview", kind, ttl, json.RawMessage(`{"to":"unlocked"}`))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestIssue(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 1000, 0)
	tk := issue(t, s, approval.Model)
	if !strings.HasPrefix(tk.ID, "tkt_") || len(tk.ID) != 36 {
		t.Errorf("id = %q", tk.ID)
	}
	if tk.State != tickets.Ready || tk.Binding != base || tk.PreviewDigest != "sha256:preview" ||
		!tk.Created.Equal(c.Now()) || !tk.Expires.Equal(c.Now().Add(ttl)) || string(tk.Preview) != `{"to":"unlocked"}` {
		t.Errorf("ticket = %+v", tk)
	}
	ids := map[string]bool{tk.ID: true}
	for range 200 {
		id := issue(t, s, approval.Model).ID
		if ids[id] {
			t.Fatalf("duplicate id %s", id)
		}
		ids[id] = true
	}
}

func TestIssueStates(t *testing.T) {
	tests := []struct {
		kind approval.Kind
		want tickets.State
	}{
		{approval.Model, tickets.Ready},
		{"", tickets.Ready},
		{approval.Human, tickets.Pending},
		// A kind the store does not know fails closed: a person decides.
		{"Human", tickets.Pending},
		{"operator", tickets.Pending},
	}
	for _, tc := range tests {
		s := tickets.NewStore(newClock().Now, 10, 0)
		if got := issue(t, s, tc.kind).State; got != tc.want {
			t.Errorf("kind %q: state %s, want %s", tc.kind, got, tc.want)
		}
	}
}

func TestIssueDefaultsTTLAndCopiesPreview(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 10, 0)
	preview := []byte(`{"to":"unlocked"}`)
	tk, err := s.Issue(base, "pd", approval.Model, 0, preview)
	if err != nil {
		t.Fatal(err)
	}
	if !tk.Expires.Equal(c.Now().Add(tickets.DefaultTTL)) {
		t.Fatalf("expires %v", tk.Expires)
	}
	copy(preview, `{"to":"LOCKED!!"}`)
	if got, _ := s.Get(tk.ID); string(got.Preview) != `{"to":"unlocked"}` {
		t.Fatalf("stored preview changed with the caller's buffer: %s", got.Preview)
	}
	if _, err := s.Redeem(tk.ID, base); err != nil {
		t.Fatalf("ticket with default ttl: %v", err)
	}
}

func TestRedeemSingleUse(t *testing.T) {
	s := tickets.NewStore(newClock().Now, 10, 0)
	tk := issue(t, s, approval.Model)
	got, err := s.Redeem(tk.ID, base)
	if err != nil || got.State != tickets.Used || got.ID != tk.ID {
		t.Fatalf("first redeem: %+v, %v", got, err)
	}
	if _, err := s.Redeem(tk.ID, base); !errors.Is(err, tickets.ErrUsed) {
		t.Fatalf("second redeem: %v", err)
	}
	if _, err := s.Redeem("tkt_unknown", base); !errors.Is(err, tickets.ErrUnknown) {
		t.Fatalf("unknown: %v", err)
	}
}

func TestRedeemMismatch(t *testing.T) {
	tests := []struct {
		name   string
		change func(*tickets.Binding)
	}{
		{"client", func(b *tickets.Binding) { b.Client = "claude-desktop" }},
		{"user", func(b *tickets.Binding) { b.User = "bob" }},
		{"no user", func(b *tickets.Binding) { b.User = "" }},
		{"service", func(b *tickets.Binding) { b.Service = "unraid" }},
		{"tool", func(b *tickets.Binding) { b.Tool = "unlock_door" }},
		{"args", func(b *tickets.Binding) { b.ArgsDigest = "sha256:other" }},
		{"force", func(b *tickets.Binding) { b.Force = true }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tickets.NewStore(newClock().Now, 10, 0)
			tk := issue(t, s, approval.Model)
			other := base
			tc.change(&other)
			got, err := s.Redeem(tk.ID, other)
			if !errors.Is(err, tickets.ErrMismatch) {
				t.Fatalf("err = %v", err)
			}
			if got.ID != "" || got.Preview != nil {
				t.Fatalf("a mismatched caller learned the ticket: %+v", got)
			}
			if again, _ := s.Get(tk.ID); again.State != tickets.Ready {
				t.Fatalf("mismatch changed the state to %s", again.State)
			}
			if _, err := s.Redeem(tk.ID, base); err != nil {
				t.Fatalf("right caller after a mismatch: %v", err)
			}
		})
	}
}

func TestExpiry(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 10, 0)
	early := issue(t, s, approval.Model)
	late := issue(t, s, approval.Model)
	c.Advance(ttl - time.Nanosecond)
	if _, err := s.Redeem(early.ID, base); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	c.Advance(time.Nanosecond)
	if _, err := s.Redeem(late.ID, base); !errors.Is(err, tickets.ErrExpired) {
		t.Fatalf("at expiry: %v", err)
	}
	// Mismatch still wins over expiry, so a stranger learns nothing.
	other := base
	other.User = "mallory"
	if _, err := s.Redeem(late.ID, other); !errors.Is(err, tickets.ErrMismatch) {
		t.Fatalf("expired, wrong caller: %v", err)
	}
}

func TestHumanApproval(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 10, 0)
	tk := issue(t, s, approval.Human)
	if tk.State != tickets.Pending {
		t.Fatalf("state %s", tk.State)
	}
	for range 3 {
		if _, err := s.Redeem(tk.ID, base); !errors.Is(err, tickets.ErrPending) {
			t.Fatalf("redeem before approval: %v", err)
		}
	}
	got, err := s.Approve(tk.ID, "alice")
	if err != nil || got.State != tickets.Ready || got.DecidedBy != "alice" {
		t.Fatalf("approve: %+v, %v", got, err)
	}
	if _, err := s.Approve(tk.ID, "bob"); !errors.Is(err, tickets.ErrDecided) {
		t.Fatalf("second approve: %v", err)
	}
	if _, err := s.Deny(tk.ID, "bob"); !errors.Is(err, tickets.ErrDecided) {
		t.Fatalf("deny after approve: %v", err)
	}
	if got, err := s.Redeem(tk.ID, base); err != nil || got.DecidedBy != "alice" {
		t.Fatalf("redeem after approval: %+v, %v", got, err)
	}
	if _, err := s.Redeem(tk.ID, base); !errors.Is(err, tickets.ErrUsed) {
		t.Fatalf("second redeem: %v", err)
	}
}

func TestDenyIsForever(t *testing.T) {
	s := tickets.NewStore(newClock().Now, 10, 0)
	tk := issue(t, s, approval.Human)
	got, err := s.Deny(tk.ID, "bob")
	if err != nil || got.State != tickets.Denied || got.DecidedBy != "bob" {
		t.Fatalf("deny: %+v, %v", got, err)
	}
	if _, err := s.Approve(tk.ID, "alice"); !errors.Is(err, tickets.ErrDecided) {
		t.Fatalf("approve after deny: %v", err)
	}
	if _, err := s.Deny(tk.ID, "carol"); !errors.Is(err, tickets.ErrDecided) {
		t.Fatalf("second deny: %v", err)
	}
	for range 3 {
		if _, err := s.Redeem(tk.ID, base); !errors.Is(err, tickets.ErrDenied) {
			t.Fatalf("redeem after deny: %v", err)
		}
	}
	if got, _ := s.Get(tk.ID); got.State != tickets.Denied || got.DecidedBy != "bob" {
		t.Fatalf("after all attempts: %+v", got)
	}
}

func TestDecideErrors(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 10, 0)
	model := issue(t, s, approval.Model)
	if _, err := s.Approve(model.ID, "alice"); !errors.Is(err, tickets.ErrDecided) {
		t.Fatalf("approve a model ticket: %v", err)
	}
	if _, err := s.Approve("tkt_unknown", "alice"); !errors.Is(err, tickets.ErrUnknown) {
		t.Fatalf("approve unknown: %v", err)
	}
	if _, err := s.Deny("tkt_unknown", "alice"); !errors.Is(err, tickets.ErrUnknown) {
		t.Fatalf("deny unknown: %v", err)
	}
	human := issue(t, s, approval.Human)
	c.Advance(ttl)
	if _, err := s.Approve(human.ID, "alice"); !errors.Is(err, tickets.ErrExpired) {
		t.Fatalf("approve after expiry: %v", err)
	}
	if _, err := s.Deny(human.ID, "alice"); !errors.Is(err, tickets.ErrExpired) {
		t.Fatalf("deny after expiry: %v", err)
	}
	if got, _ := s.Get(human.ID); got.State != tickets.Pending || got.DecidedBy != "" {
		t.Fatalf("expired ticket changed: %+v", got)
	}
	if _, err := s.Redeem(human.ID, base); !errors.Is(err, tickets.ErrExpired) {
		t.Fatalf("redeem expired: %v", err)
	}
}

func TestFullAndPrune(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 3, 0)
	used := issue(t, s, approval.Model)
	if _, err := s.Redeem(used.ID, base); err != nil {
		t.Fatal(err)
	}
	denied := issue(t, s, approval.Human)
	if _, err := s.Deny(denied.ID, "bob"); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	pending := issue(t, s, approval.Human)
	if _, err := s.Issue(base, "pd", approval.Model, ttl, nil); !errors.Is(err, tickets.ErrFull) {
		t.Fatalf("issue at capacity: %v", err)
	}
	// Nothing has expired yet, so pruning frees nothing.
	if n := s.Prune(); n != 0 {
		t.Fatalf("Prune = %d", n)
	}
	if _, err := s.Issue(base, "pd", approval.Model, ttl, nil); !errors.Is(err, tickets.ErrFull) {
		t.Fatalf("issue at capacity after a no-op prune: %v", err)
	}

	// The first two expire; only unused ones count as expired unused.
	c.Advance(ttl - time.Minute)
	if n := s.Prune(); n != 0 {
		t.Fatalf("Prune of a used and a denied ticket = %d, want 0", n)
	}
	if _, ok := s.Get(used.ID); ok {
		t.Fatal("pruned ticket still there")
	}
	if _, ok := s.Get(pending.ID); !ok {
		t.Fatal("live ticket was pruned")
	}
	a := issue(t, s, approval.Model)
	issue(t, s, approval.Model)
	if _, err := s.Issue(base, "pd", approval.Model, ttl, nil); !errors.Is(err, tickets.ErrFull) {
		t.Fatalf("full again: %v", err)
	}

	// Issue prunes by itself when full and something has expired.
	c.Advance(time.Minute)
	if _, err := s.Issue(base, "pd", approval.Model, ttl, nil); err != nil {
		t.Fatalf("issue after pending expired: %v", err)
	}
	if _, ok := s.Get(pending.ID); ok {
		t.Fatal("expired pending ticket not pruned by Issue")
	}
	c.Advance(ttl)
	if n := s.Prune(); n != 3 {
		t.Fatalf("Prune = %d, want 3 expired unused", n)
	}
	if _, ok := s.Get(a.ID); ok || len(s.List("")) != 0 {
		t.Fatal("store not empty after pruning everything")
	}
}

func TestList(t *testing.T) {
	c := newClock()
	s := tickets.NewStore(c.Now, 100, 0)
	var want []string
	first := issue(t, s, approval.Human)
	c.Advance(time.Second)
	// Two at the same instant: ordered by id.
	x, y := issue(t, s, approval.Model), issue(t, s, approval.Human)
	if y.ID < x.ID {
		x, y = y, x
	}
	c.Advance(time.Second)
	last := issue(t, s, approval.Human)
	want = []string{first.ID, x.ID, y.ID, last.ID}

	ids := func(list []tickets.Ticket) []string {
		var out []string
		for _, t := range list {
			out = append(out, t.ID)
		}
		return out
	}
	for range 5 { // map iteration order varies; the list order must not
		if got := ids(s.List("")); !slices.Equal(got, want) {
			t.Fatalf("List() = %v, want %v", got, want)
		}
	}
	if _, err := s.Approve(last.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	var wantPending []string
	for _, tk := range s.List("") {
		if tk.State == tickets.Pending {
			wantPending = append(wantPending, tk.ID)
		}
	}
	if len(wantPending) != 2 {
		t.Fatalf("setup: %d pending", len(wantPending))
	}
	if got := ids(s.List(tickets.Pending)); !slices.Equal(got, wantPending) {
		t.Fatalf("List(pending) = %v, want %v", got, wantPending)
	}
	for _, tk := range s.List(tickets.Ready) {
		if tk.State != tickets.Ready {
			t.Fatalf("List(ready) has %s", tk.State)
		}
	}
	if n := len(s.List(tickets.Ready)); n != 2 {
		t.Fatalf("List(ready) has %d, want 2", n)
	}
	if n := len(s.List(tickets.Used)); n != 0 {
		t.Fatalf("List(used) has %d", n)
	}
	// Expired tickets are not listed, even before a prune.
	c.Advance(ttl - time.Second)
	if got := ids(s.List("")); !slices.Equal(got, []string{last.ID}) {
		t.Fatalf("after expiry List() = %v", got)
	}
}

func TestConcurrentRedeem(t *testing.T) {
	s := tickets.NewStore(nil, 10, 0)
	tk := issue(t, s, approval.Model)
	const n = 50
	errs := make([]error, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			_, errs[i] = s.Redeem(tk.ID, base)
		}()
	}
	start.Done()
	done.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, tickets.ErrUsed):
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d redeems succeeded, want exactly 1", ok)
	}
}

func TestOneClientCannotTakeAllTickets(t *testing.T) {
	s := tickets.NewStore(nil, 20, 2)
	for i := range 2 {
		if _, err := s.Issue(tickets.Binding{Client: "loop", ArgsDigest: string(rune('a' + i))}, "p", approval.Model, time.Minute, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Issue(tickets.Binding{Client: "loop"}, "p", approval.Model, time.Minute, nil); !errors.Is(err, tickets.ErrFull) {
		t.Fatalf("a third open ticket for one client: %v", err)
	}
	if _, err := s.Issue(tickets.Binding{Client: "other"}, "p", approval.Model, time.Minute, nil); err != nil {
		t.Fatalf("another client was crowded out: %v", err)
	}
}

// TestOpenTicketsPerClient: the per-client bound counts exactly a client's
// ready and pending unexpired tickets, through every change of state, an
// expiry and a restart from the ticket file.
func TestOpenTicketsPerClient(t *testing.T) {
	for _, withFile := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "file"}[withFile], func(t *testing.T) {
			c := newClock()
			path := filepath.Join(t.TempDir(), "tickets.db")
			open := func() *tickets.Store {
				if !withFile {
					return tickets.NewStore(c.Now, 100, 2)
				}
				s, err := tickets.Open(path, c.Now, 100, 2)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				return s
			}
			s := open()
			n := 0
			issue := func(client string, kind approval.Kind, ttl time.Duration) (tickets.Ticket, error) {
				n++
				b := base
				b.Client, b.ArgsDigest = client, "sha256:"+strconv.Itoa(n)
				return s.Issue(b, "p", kind, ttl, nil)
			}
			must := func(tk tickets.Ticket, err error) tickets.Ticket {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
				return tk
			}
			full := func(step string) {
				t.Helper()
				if _, err := issue("a", approval.Model, time.Minute); !errors.Is(err, tickets.ErrFull) {
					t.Fatalf("%s: a third open ticket: %v", step, err)
				}
			}
			ready := must(issue("a", approval.Model, time.Minute))
			pending := must(issue("a", approval.Human, time.Minute))
			full("one ready, one pending")
			must(issue("b", approval.Model, time.Minute))
			// Approved, the pending ticket is ready: still open.
			must(s.Approve(pending.ID, "admin"))
			full("approved")
			// Used, a ticket no longer counts.
			must(s.Redeem(ready.ID, ready.Binding))
			denied := must(issue("a", approval.Human, time.Minute))
			full("used one, issued another")
			// Denied, neither.
			must(s.Deny(denied.ID, "admin"))
			must(issue("a", approval.Model, 10*time.Second))
			full("denied one, issued another")
			// Expired (not yet pruned), neither.
			c.Advance(20 * time.Second)
			must(issue("a", approval.Model, time.Minute))
			full("one expired, issued another")
			if withFile {
				// After a restart the open tickets still count.
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				s = open()
				full("reopened")
			}
			s.Prune()
			full("pruned")
		})
	}
}
