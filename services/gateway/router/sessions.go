package router

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"
)

// sessions is the MCP session id manager of one endpoint, in the place of
// mcp-go's stateful one and with the same answers: ids are random, an id
// the endpoint never issued is refused, and an ended one answers
// "terminated". On top of that it knows when mcp-go last saw a session, so
// the direct tools/call path (direct.go) can serve a live session without
// mcp-go only while mcp-go's idle sweeper still counts it as active, and
// it forgets ended ids after a while instead of keeping every one forever.
type sessions struct {
	now func() time.Time
	// seenWithin is how recently mcp-go must have handled a request of a
	// session for the direct path to serve it.
	seenWithin time.Duration
	// keepEnded is how long an ended id still answers "terminated".
	keepEnded time.Duration

	mu     sync.Mutex
	live   map[string]time.Time // id -> when mcp-go last validated it
	ended  map[string]time.Time // id -> when it ended
	pruned time.Time
}

// newSessions takes the clock mcp-go's sweeper uses (time.Now) and its
// idle timeout.
func newSessions(now func() time.Time, idleTTL time.Duration) *sessions {
	return &sessions{
		now: now, seenWithin: idleTTL / 2, keepEnded: idleTTL,
		live: map[string]time.Time{}, ended: map[string]time.Time{},
	}
}

// sessionPrefix is mcp-go's prefix for session ids; clients see the same
// shape as before.
const sessionPrefix = "mcp-session-"

var errUnknownSession = errors.New("unknown session id")

// Generate issues a new id (mcp-go, at initialize).
func (s *sessions) Generate() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := sessionPrefix + hex.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = s.now()
	return id
}

// Validate is mcp-go's check of every request's session id; that mcp-go
// handles the request also counts as activity (its sweeper's clock).
func (s *sessions) Validate(id string) (terminated bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[id]; ok {
		s.live[id] = s.now()
		return false, nil
	}
	if _, ok := s.ended[id]; ok {
		return true, nil
	}
	return false, errUnknownSession
}

// Terminate ends a session (DELETE, or mcp-go's idle sweeper).
func (s *sessions) Terminate(id string) (notAllowed bool, err error) {
	if !strings.HasPrefix(id, sessionPrefix) {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[id]; !ok {
		return false, nil
	}
	delete(s.live, id)
	now := s.now()
	s.ended[id] = now
	if now.Sub(s.pruned) > time.Minute {
		s.pruned = now
		for old, at := range s.ended {
			if now.Sub(at) > s.keepEnded {
				delete(s.ended, old)
			}
		}
	}
	return false, nil
}

// direct reports whether the direct path may serve a request of session
// id: the session is live and mcp-go handled one of its requests recently
// enough that its sweeper will not end the session in the meantime. A
// false answer sends the request through mcp-go, which then counts it.
func (s *sessions) direct(id string) bool {
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, ok := s.live[id]
	return ok && s.now().Sub(seen) < s.seenWithin
}
