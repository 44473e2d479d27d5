package tickets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// The ticket file is one bbolt database: a bucket of tickets keyed by id
// (one JSON record each) and a format marker. bbolt writes each change in
// a transaction that is on disk (fsync) before Update returns, so a ticket
// marked used is used after any crash, and it locks the file so two
// gateways cannot share one.
const (
	bucketTickets = "tickets"
	bucketMeta    = "meta"
	keyFormat     = "format"
	formatV1      = "1"
	lockTimeout   = 2 * time.Second
)

type file struct {
	db   *bolt.DB
	path string
	// mu orders the writes: it is taken with the store's lock held (lock
	// order: Store.mu, then file.mu), so a record taken from memory
	// reaches the file before any later change of the same ticket.
	mu sync.Mutex
}

// record is a ticket as stored. The preview is kept as bytes: it is
// whatever the service returned and must come back unchanged.
type record struct {
	Ticket
	Preview []byte `json:"preview,omitempty"`
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

func openFile(path string, now time.Time) (*file, []*Ticket, error) {
	if path == "" {
		return nil, nil, errors.New("ticket file: no path")
	}
	db, err := openDB(path)
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, nil, fmt.Errorf("ticket file %s is locked by another process (a second gateway on the same data volume?)", path)
		}
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	// bolt applies the mode only when it creates the file.
	if err := os.Chmod(path, 0o600); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("ticket file %s: %w", path, err)
	}
	loaded, err := load(db, now)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	return &file{db: db, path: path}, loaded, nil
}

// openDB opens the bolt file. bolt maps the file into memory and trusts
// its page headers: a file cut short faults (SIGBUS) on a page past its
// end. The fault becomes a panic on this goroutine and then an error; the
// half-opened file is left to the process, which stops anyway.
func openDB(path string) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			db, err = nil, fmt.Errorf("damaged database: %v", p)
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{Timeout: lockTimeout})
}

// load checks the whole file, reads every ticket and deletes expired ones.
// bbolt may panic on a damaged page; that is a corrupt file too.
func load(db *bolt.DB, now time.Time) (out []*Ticket, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("damaged database: %v", p)
		}
	}()
	err = db.Update(func(tx *bolt.Tx) error {
		for cerr := range tx.Check() {
			return fmt.Errorf("consistency check: %w", cerr)
		}
		meta, err := tx.CreateBucketIfNotExists([]byte(bucketMeta))
		if err != nil {
			return err
		}
		switch v := meta.Get([]byte(keyFormat)); {
		case v == nil:
			if tx.Bucket([]byte(bucketTickets)) != nil {
				return errors.New("tickets without a format marker")
			}
			if err := meta.Put([]byte(keyFormat), []byte(formatV1)); err != nil {
				return err
			}
		case string(v) != formatV1:
			return fmt.Errorf("unknown format %.16q (written by a newer gateway?)", v)
		}
		b, err := tx.CreateBucketIfNotExists([]byte(bucketTickets))
		if err != nil {
			return err
		}
		var expired [][]byte
		err = b.ForEach(func(k, v []byte) error {
			t, err := decode(k, v)
			if err != nil {
				return err
			}
			if !now.Before(t.Expires) {
				expired = append(expired, bytes.Clone(k))
				return nil
			}
			out = append(out, t)
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// decode reads one record and checks it is a whole ticket under its own
// key; the error names the problem, never the content.
func decode(key, value []byte) (*Ticket, error) {
	var r record
	if err := json.Unmarshal(value, &r); err != nil {
		return nil, errors.New("a ticket record is not valid JSON")
	}
	t := r.Ticket
	t.Preview = r.Preview
	switch {
	case t.ID == "" || t.ID != string(key):
		return nil, errors.New("a ticket record is stored under another id")
	case t.State != Pending && t.State != Ready && t.State != Used && t.State != Denied:
		return nil, fmt.Errorf("ticket %s has an unknown state", t.ID)
	case t.Created.IsZero() || t.Expires.IsZero():
		return nil, fmt.Errorf("ticket %s has no times", t.ID)
	case t.Client == "" || t.Service == "" || t.Tool == "" || t.ArgsDigest == "" || t.PreviewDigest == "":
		return nil, fmt.Errorf("ticket %s is missing its binding", t.ID)
	}
	return &t, nil
}

// put writes t through; nil f (memory only) writes nothing.
func (f *file) put(t *Ticket) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.putAllLocked([]*Ticket{t})
}

// putAllLocked writes ts in one transaction; f.mu is held.
func (f *file) putAllLocked(ts []*Ticket) error {
	if len(ts) == 0 {
		return nil
	}
	data := make([][]byte, len(ts))
	for i, t := range ts {
		b, err := json.Marshal(record{Ticket: *t, Preview: t.Preview})
		if err != nil {
			return fmt.Errorf("%w: %v", ErrStore, err)
		}
		data[i] = b
	}
	err := f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketTickets))
		for i, t := range ts {
			if err := b.Put([]byte(t.ID), data[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStore, err)
	}
	return nil
}

func (f *file) delete(ids []string) error {
	if f == nil || len(ids) == 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketTickets))
		for _, id := range ids {
			if err := b.Delete([]byte(id)); err != nil {
				return err
			}
		}
		return nil
	})
}
