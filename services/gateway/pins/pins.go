// Package pins protects clients against tool "rug pulls": the gateway
// records a hash of every tool definition it has seen, and a definition that
// changes later is withheld until an operator accepts the change.
package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/toolgate/toolgate/internal/approval"
)

// Change is a tool whose definition differs from its pin.
type Change struct {
	Service string `json:"service"`
	Tool    string `json:"tool"`
	Pinned  string `json:"pinned"`
	Current string `json:"current"`
}

// ErrNoChange is returned by Accept when nothing waits for acceptance.
var ErrNoChange = errors.New("no pending change for that tool")

// Store holds the pins, persisted as JSON at path (empty path: memory only).
// Unknown tools are pinned on first sight (trust on first use).
type Store struct {
	path string

	mu      sync.Mutex
	pins    map[string]string // "service/tool" -> hash
	pending map[string]Change
}

// Load reads the pins file; a missing file is an empty store.
func Load(path string) (*Store, error) {
	s := &Store{path: path, pins: map[string]string{}, pending: map[string]Change{}}
	if path == "" {
		return s, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read pins file: %w", err)
	}
	if err := json.Unmarshal(data, &s.pins); err != nil {
		return nil, fmt.Errorf("pins file %s is not a JSON object of hashes: %w", path, err)
	}
	if s.pins == nil {
		// A file holding "null" decodes to a nil map, which Check would
		// panic on.
		s.pins = map[string]string{}
	}
	return s, nil
}

// Hash is the pin of a tool definition (its canonical JSON).
func Hash(definition any) (string, error) {
	c, err := approval.Canonical(definition)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Check reports whether the definition with hash may be offered. A tool seen
// for the first time is pinned; a changed one is recorded as pending.
func (s *Store) Check(service, tool, hash string) (bool, error) {
	key := service + "/" + tool
	s.mu.Lock()
	defer s.mu.Unlock()
	pinned, ok := s.pins[key]
	switch {
	case !ok:
		s.pins[key] = hash
		delete(s.pending, key)
		return true, s.saveLocked()
	case pinned == hash:
		delete(s.pending, key)
		return true, nil
	default:
		s.pending[key] = Change{Service: service, Tool: tool, Pinned: pinned, Current: hash}
		return false, nil
	}
}

// Accept pins the pending definition of a tool.
func (s *Store) Accept(service, tool string) error {
	key := service + "/" + tool
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.pending[key]
	if !ok {
		return ErrNoChange
	}
	old, had := s.pins[key]
	s.pins[key] = c.Current
	delete(s.pending, key)
	if err := s.saveLocked(); err != nil {
		// Not persisted: keep withholding the change, so the operator's
		// error means "nothing was accepted".
		if had {
			s.pins[key] = old
		} else {
			delete(s.pins, key)
		}
		s.pending[key] = c
		return err
	}
	return nil
}

// Pending lists the withheld changes.
func (s *Store) Pending() []Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Change, 0, len(s.pending))
	for _, c := range s.pending {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Service != out[j].Service {
			return out[i].Service < out[j].Service
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

func (s *Store) saveLocked() error {
	if s.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(s.pins, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".pins-*")
	if err != nil {
		return fmt.Errorf("save pins: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("save pins: %w", err)
	}
	// Flush before the rename: after a crash an empty pins file would stop
	// the gateway from starting (Load rejects it).
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save pins: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save pins: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("save pins: %w", err)
	}
	return nil
}
