// Package pins protects clients against tool "rug pulls": the gateway
// records a hash of every tool definition and of every service's
// instructions it has seen, and a definition that changes later is withheld
// until an operator accepts exactly the new hash after reviewing the change.
package pins

import (
	"bytes"
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

// Instructions is the name under which a service's instructions are
// pinned, in the place of a tool name. It cannot be an MCP tool name (those
// are letters, digits, '_', '-' and '.'), so it never collides with one.
const Instructions = "@instructions"

// Change is a definition that differs from its pin and is withheld.
type Change struct {
	Service string `json:"service"`
	// Tool is the tool's name, or Instructions.
	Tool    string `json:"tool"`
	Pinned  string `json:"pinned"`
	Current string `json:"current"`
	// PinnedDefinition is the accepted definition (canonical JSON); empty
	// when the pin was written by a gateway that kept only hashes.
	PinnedDefinition json.RawMessage `json:"pinned_definition,omitempty"`
	// CurrentDefinition is the withheld definition (canonical JSON).
	CurrentDefinition json.RawMessage `json:"current_definition"`
	// Rejected: an operator reviewed this very definition and rejected
	// it. It stays withheld, as every pending change does, but no longer
	// asks for a review; a further change asks again.
	Rejected bool `json:"rejected,omitempty"`
}

// Errors of Accept; check them with errors.Is.
var (
	// ErrNoChange: nothing waits for acceptance.
	ErrNoChange = errors.New("no pending change for that tool")
	// ErrHashMismatch: the pending definition is not the one the operator
	// reviewed (it changed since), so nothing was accepted.
	ErrHashMismatch = errors.New("the pending definition has a different hash")
)

// pin is one accepted definition.
type pin struct {
	Hash       string          `json:"hash"`
	Definition json.RawMessage `json:"definition,omitempty"`
	// Rejected is the hash of a changed definition an operator rejected.
	Rejected string `json:"rejected,omitempty"`
}

// UnmarshalJSON also reads the older file format, a bare hash.
func (p *pin) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		p.Definition = nil
		return json.Unmarshal(b, &p.Hash)
	}
	type fields pin // without this method
	return json.Unmarshal(b, (*fields)(p))
}

// Store holds the pins, persisted as JSON at path (empty path: memory only).
// Unknown definitions are pinned on first sight (trust on first use).
type Store struct {
	path string

	mu      sync.Mutex
	pins    map[string]pin // "service/tool" -> accepted definition
	pending map[string]Change
}

// Load reads the pins file; a missing file is an empty store.
func Load(path string) (*Store, error) {
	s := &Store{path: path, pins: map[string]pin{}, pending: map[string]Change{}}
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
		return nil, fmt.Errorf("pins file %s is not a JSON object of pins: %w", path, err)
	}
	if s.pins == nil {
		// A file holding "null" decodes to a nil map, which Check would
		// panic on.
		s.pins = map[string]pin{}
	}
	return s, nil
}

// Definition returns the canonical JSON of a definition (a tool, or the
// text of instructions) and its pin hash.
func Definition(v any) (json.RawMessage, string, error) {
	c, err := approval.Canonical(v)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(c)
	return c, "sha256:" + hex.EncodeToString(sum[:]), nil
}

// Hash is the pin of a definition.
func Hash(v any) (string, error) {
	_, h, err := Definition(v)
	return h, err
}

// Check reports whether the definition with hash may be offered. A
// definition seen for the first time is pinned; a changed one is recorded
// as pending, with the definition itself so an operator can review it.
func (s *Store) Check(service, tool, hash string, definition json.RawMessage) (bool, error) {
	key := service + "/" + tool
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pins[key]
	switch {
	case !ok:
		s.pins[key] = pin{Hash: hash, Definition: bytes.Clone(definition)}
		delete(s.pending, key)
		return true, s.saveLocked()
	case p.Hash == hash:
		delete(s.pending, key)
		if len(p.Definition) == 0 && len(definition) > 0 {
			// A pin from a hash-only file learns the definition it already
			// trusts, so a later change can be shown as a diff.
			s.pins[key] = pin{Hash: hash, Definition: bytes.Clone(definition)}
			return true, s.saveLocked()
		}
		return true, nil
	default:
		s.pending[key] = Change{
			Service: service, Tool: tool, Pinned: p.Hash, Current: hash,
			PinnedDefinition: p.Definition, CurrentDefinition: bytes.Clone(definition),
			Rejected: p.Rejected == hash,
		}
		return false, nil
	}
}

// Reject records that the operator reviewed the pending definition of a
// tool, if its hash is hash, and does not want it: it stays withheld (the
// accepted definition is no longer what the service offers, so neither
// is offered) and stops asking for a review until it changes again. Accept
// still takes it later.
func (s *Store) Reject(service, tool, hash string) error {
	key := service + "/" + tool
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.pending[key]
	if !ok {
		return ErrNoChange
	}
	if c.Current != hash {
		return fmt.Errorf("%w: %s is pending", ErrHashMismatch, c.Current)
	}
	old := s.pins[key]
	p := old
	p.Rejected = hash
	s.pins[key] = p
	if err := s.saveLocked(); err != nil {
		s.pins[key] = old
		return err
	}
	c.Rejected = true
	s.pending[key] = c
	return nil
}

// Accept pins the pending definition of a tool, if its hash is hash: the
// operator accepts what they reviewed, never what a service swapped in
// since.
func (s *Store) Accept(service, tool, hash string) error {
	key := service + "/" + tool
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.pending[key]
	if !ok {
		return ErrNoChange
	}
	if c.Current != hash {
		return fmt.Errorf("%w: %s is pending", ErrHashMismatch, c.Current)
	}
	old, had := s.pins[key]
	s.pins[key] = pin{Hash: c.Current, Definition: c.CurrentDefinition}
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

// PendingChange returns the withheld change of one tool.
func (s *Store) PendingChange(service, tool string) (Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.pending[service+"/"+tool]
	return c, ok
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
