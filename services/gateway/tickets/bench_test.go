package tickets_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// BenchmarkIssueAndRedeem compares a ticket's life (issue, then redeem)
// in memory with the same written through to the ticket file (two fsync'd
// bbolt transactions): the price of surviving a restart, per write.
func BenchmarkIssueAndRedeem(b *testing.B) {
	preview := json.RawMessage(`{"entity":"lock.front_door","from":"locked","to":"unlocked"}`)
	// Used tickets stay until they expire; the clock moves on and they are
	// pruned every 100 lives, so both stores stay small.
	run := func(b *testing.B, s *tickets.Store, c *fakeclock.Clock) {
		n := 0
		for b.Loop() {
			if n++; n%100 == 0 {
				c.Advance(2 * time.Minute)
				s.Prune()
			}
			t, err := s.Issue(base, "sha256:p", approval.Model, time.Minute, preview)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Redeem(t.ID, base); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) {
		c := newClock()
		run(b, tickets.NewStore(c.Now, 1_000_000, 0), c)
	})
	b.Run("file", func(b *testing.B) {
		c := newClock()
		s, err := tickets.Open(filepath.Join(b.TempDir(), "tickets.db"), c.Now, 1_000_000, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		run(b, s, c)
	})
}

// BenchmarkIssueBesideOpenTickets: a preview's ticket for a client that
// already holds 150 open ones (a client previewing without confirming; the
// per-client bound is 200), each issued ticket then used.
func BenchmarkIssueBesideOpenTickets(b *testing.B) {
	c := newClock()
	s := tickets.NewStore(c.Now, 1_000_000, 200)
	for i := range 150 {
		bd := base
		bd.ArgsDigest = fmt.Sprintf("sha256:open-%d", i)
		if _, err := s.Issue(bd, "sha256:p", approval.Model, time.Hour, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		t, err := s.Issue(base, "sha256:p", approval.Model, time.Hour, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Redeem(t.ID, base); err != nil {
			b.Fatal(err)
		}
	}
}
