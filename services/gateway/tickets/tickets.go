// Package tickets keeps the gateway's write tickets: random, single-use,
// short-lived permissions to apply one previewed write, bound to who asked
// and exactly what they asked for.
package tickets

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
)

// Store holds tickets in memory and, when opened with Open, writes them
// to a file, so a restart keeps pending approvals and fresh previews and a
// used ticket stays used. Every change that grants or withdraws something
// (a redeem, a person's decision, a ticket that waits for a person) is on
// disk before it takes effect. A ready ticket from a preview is written
// behind, within moments and before any later change of it: a crash in
// between loses that ticket, and its write then needs a new preview (the
// lost ticket is unknown, never usable). NewStore gives a store without a
// file: a restart drops its tickets.
type Store struct {
	now       func() time.Time
	max       int
	perClient int

	mu      sync.Mutex
	tickets map[string]*Ticket
	// byClient indexes each client's tickets that were open (ready or
	// pending) when last seen, so Issue counts one client's open tickets
	// without a look at everyone's. A ticket leaves it when it is used,
	// denied or dropped; states never go back to open.
	byClient map[string]map[string]*Ticket
	file     *boltFile // nil: memory only
	// behind holds the ids of issued tickets not yet in the file; the
	// writer goroutine (writeBehind) writes them. behindErr is its last
	// write's failure, and Issue refuses while it stands.
	behind    map[string]struct{}
	behindErr error
	closed    bool
	kick      chan struct{}
	stop      chan struct{}
	stopOnce  sync.Once
	done      chan struct{}
}

// NewStore returns a store that holds at most max live tickets, and at most
// perClient open (ready or pending) ones per client; perClient <= 0 means
// no per-client bound.
func NewStore(now func() time.Time, max, perClient int) *Store {
	if now == nil {
		now = time.Now
	}
	if max <= 0 {
		max = 10_000
	}
	return &Store{now: now, max: max, perClient: perClient, tickets: map[string]*Ticket{}, byClient: map[string]map[string]*Ticket{}}
}

// IssueOption adds an optional detail to a ticket being issued.
type IssueOption func(*Ticket)

// WithReason records why the policy asked for consent (shown to the
// person who approves).
func WithReason(reason string) IssueOption { return func(t *Ticket) { t.Reason = reason } }

// WithFacts records the preview's facts the policy decided on (JSON).
func WithFacts(facts json.RawMessage) IssueOption {
	return func(t *Ticket) { t.Facts = bytes.Clone(facts) }
}

// Issue creates a ticket. Kind approval.Human starts it Pending; so does
// any kind other than approval.Model or empty, so a misspelt policy answer
// fails closed. A ttl <= 0 means DefaultTTL (a zero ttl would issue a dead
// ticket).
func (s *Store) Issue(b Binding, previewDigest string, approvalKind approval.Kind, ttl time.Duration, preview json.RawMessage, opts ...IssueOption) (Ticket, error) {
	id, err := newID()
	if err != nil {
		return Ticket{}, err
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	now := s.now()
	t := &Ticket{
		ID: id, Binding: b, PreviewDigest: previewDigest, Approval: approvalKind,
		// Cloned so the caller reusing its buffer cannot change what a
		// person is shown and approves.
		State: Ready, Preview: bytes.Clone(preview), Created: now, Expires: now.Add(ttl),
	}
	if approvalKind != approval.Model && approvalKind != "" {
		t.State = Pending
	}
	for _, o := range opts {
		o(t)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.behindErr != nil {
		return Ticket{}, fmt.Errorf("%w: %v", ErrStore, s.behindErr)
	}
	if len(s.tickets) >= s.max {
		s.pruneLocked(now)
		if len(s.tickets) >= s.max {
			return Ticket{}, ErrFull
		}
	}
	// One client looping over previews must not crowd out the others. Its
	// index holds every open ticket (and some no longer open, until a count
	// drops them), so below the bound there is nothing to count: a client
	// with many open tickets is not walked over on every preview.
	if s.perClient > 0 && len(s.byClient[b.Client]) >= s.perClient && s.openLocked(b.Client, now) >= s.perClient {
		return Ticket{}, ErrFull
	}
	if s.file != nil && t.State == Ready {
		// The preview's answer does not wait for the disk (an fsync costs
		// milliseconds); writeBehind writes it.
		s.addLocked(t)
		s.behind[id] = struct{}{}
		select {
		case s.kick <- struct{}{}:
		default: // a write is already due and will take this one too
		}
		return *t, nil
	}
	if err := s.file.put(t); err != nil {
		return Ticket{}, err
	}
	s.addLocked(t)
	return *t, nil
}

// addLocked keeps t and indexes it under its client.
func (s *Store) addLocked(t *Ticket) {
	s.tickets[t.ID] = t
	if t.State != Ready && t.State != Pending {
		return
	}
	m := s.byClient[t.Client]
	if m == nil {
		m = map[string]*Ticket{}
		s.byClient[t.Client] = m
	}
	m[t.ID] = t
}

// openLocked counts client's open (ready or pending, unexpired) tickets,
// and drops from its index those that can never be open again.
func (s *Store) openLocked(client string, now time.Time) int {
	m := s.byClient[client]
	n := 0
	for id, t := range m {
		if s.tickets[id] != t || (t.State != Ready && t.State != Pending) {
			delete(m, id)
			continue
		}
		if now.Before(t.Expires) {
			n++
		}
	}
	if m != nil && len(m) == 0 {
		delete(s.byClient, client)
	}
	return n
}

// Redeem consumes a ticket for the call described by b. It fails without
// consuming the ticket when the call does not match, so another client
// cannot burn a ticket it does not own.
func (s *Store) Redeem(id string, b Binding) (Ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return Ticket{}, ErrUnknown
	}
	if t.Binding != b {
		return Ticket{}, ErrMismatch
	}
	if !s.now().Before(t.Expires) {
		return *t, ErrExpired
	}
	switch t.State {
	case Used:
		return *t, ErrUsed
	case Denied:
		return *t, ErrDenied
	case Pending:
		return *t, ErrPending
	}
	// Used is on disk before anyone applies, so a restart cannot bring
	// the ticket back.
	used := *t
	used.State = Used
	if err := s.file.put(&used); err != nil {
		return *t, err
	}
	delete(s.behind, id)
	*t = used
	return *t, nil
}

// Approve moves a pending ticket to Ready.
func (s *Store) Approve(id, by string) (Ticket, error) { return s.decide(id, by, Ready) }

// Deny kills a pending ticket.
func (s *Store) Deny(id, by string) (Ticket, error) { return s.decide(id, by, Denied) }

func (s *Store) decide(id, by string, to State) (Ticket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return Ticket{}, ErrUnknown
	}
	if !s.now().Before(t.Expires) {
		return *t, ErrExpired
	}
	if t.State != Pending {
		return *t, ErrDecided
	}
	decided := *t
	decided.State, decided.DecidedBy = to, by
	if err := s.file.put(&decided); err != nil {
		return *t, err
	}
	delete(s.behind, id)
	*t = decided
	return *t, nil
}

// Get returns a ticket by id.
func (s *Store) Get(id string) (Ticket, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tickets[id]
	if !ok {
		return Ticket{}, false
	}
	return *t, true
}

// List returns the live tickets in state (all states when empty), oldest
// first; tickets created at the same instant are ordered by id so the order
// is stable.
func (s *Store) List(state State) []Ticket {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var out []Ticket
	for _, t := range s.tickets {
		if now.Before(t.Expires) && (state == "" || t.State == state) {
			out = append(out, *t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Prune drops expired tickets and reports how many expired unused.
func (s *Store) Prune() (expiredUnused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pruneLocked(s.now())
}

// pruneLocked forgets expired tickets. Deleting them from the file is
// best effort: an expired ticket is refused wherever it is, and Open drops
// the ones a failed delete left behind.
func (s *Store) pruneLocked(now time.Time) int {
	n := 0
	var gone []string
	for id, t := range s.tickets {
		if !now.Before(t.Expires) {
			if t.State != Used && t.State != Denied {
				n++
			}
			delete(s.tickets, id)
			delete(s.behind, id)
			if m := s.byClient[t.Client]; m != nil {
				delete(m, id)
				if len(m) == 0 {
					delete(s.byClient, t.Client)
				}
			}
			gone = append(gone, id)
		}
	}
	_ = s.file.delete(gone)
	return n
}

func newID() (string, error) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "tkt_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])), nil
}

// Open returns a store kept in the file at path, created with mode 0600
// when missing. It loads the live tickets, drops expired ones, and refuses
// (ErrCorrupt) a file it cannot read completely: a ticket whose state
// cannot be read could not be proven unused.
func Open(path string, now func() time.Time, max, perClient int) (*Store, error) {
	s := NewStore(now, max, perClient)
	f, loaded, err := openFile(path, s.now())
	if err != nil {
		return nil, err
	}
	s.file = f
	for _, t := range loaded {
		s.addLocked(t)
	}
	s.behind = map[string]struct{}{}
	s.kick, s.stop, s.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.writeBehind()
	return s, nil
}

// behindRetry is how soon a failed write of issued tickets is tried again.
const behindRetry = time.Second

// behindGather is how long the writer waits after a ticket was issued for
// more to share its transaction: each costs a bolt commit and an fdatasync,
// which a steady stream of previews would otherwise pay one by one.
const behindGather = 20 * time.Millisecond

// writeBehind writes issued tickets to the file until Close: behindGather
// after one is issued (tickets issued meanwhile share the transaction), and
// again after a failure.
func (s *Store) writeBehind() {
	defer close(s.done)
	var retry <-chan time.Time
	for {
		select {
		case <-s.kick:
			select {
			case <-time.After(behindGather):
			case <-s.stop:
				return // Close writes them
			}
		case <-retry:
		case <-s.stop:
			return
		}
		retry = nil
		if s.Flush() != nil {
			retry = time.After(behindRetry)
		}
	}
}

// Flush writes the issued tickets that are not in the file yet and
// returns the write's error (ErrStore); a memory-only store has nothing to
// write. After a failure Issue refuses until a flush succeeds.
func (s *Store) Flush() error {
	s.mu.Lock()
	if s.file == nil || len(s.behind) == 0 {
		// Whatever failed was written since by a redeem or a decision,
		// or expired.
		if s.file != nil && !s.closed {
			s.behindErr = nil
		}
		s.mu.Unlock()
		return nil
	}
	ids := s.behind
	s.behind = map[string]struct{}{}
	recs := make([]*Ticket, 0, len(ids))
	for id := range ids {
		if t, ok := s.tickets[id]; ok {
			c := *t
			recs = append(recs, &c)
		}
	}
	// Taken before the store's lock is let go: a later change of these
	// tickets (a redeem) is written after this, never overwritten by it.
	s.file.mu.Lock()
	s.mu.Unlock()
	err := s.file.putAllLocked(recs)
	s.file.mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		for id := range ids {
			if _, ok := s.tickets[id]; ok {
				s.behind[id] = struct{}{}
			}
		}
	}
	s.behindErr = err
	return err
}

// Close writes the issued tickets not yet in the file and closes it; a
// memory-only store has nothing to close.
func (s *Store) Close() error {
	if s.file == nil {
		return nil
	}
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	err := s.Flush()
	s.mu.Lock()
	defer s.mu.Unlock()
	// A ticket issued now could never be written: refuse it.
	s.closed, s.behindErr = true, errors.New("the ticket file is closed")
	return errors.Join(err, s.file.db.Close())
}
