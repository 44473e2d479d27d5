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

type boltFile struct {
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

func openFile(path string, now time.Time) (*boltFile, []*Ticket, error) {
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
	return &boltFile{db: db, path: path}, loaded, nil
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
func (f *boltFile) put(t *Ticket) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.putAllLocked([]*Ticket{t})
}

// putAllLocked writes ts in one transaction; f.mu is held.
func (f *boltFile) putAllLocked(ts []*Ticket) error {
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

func (f *boltFile) delete(ids []string) error {
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
