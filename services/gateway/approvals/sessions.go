package approvals

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// sessions are signed-in approvers, in memory: a restart signs everyone
// out. The map is keyed by a hash of the cookie value, so lookups do not
// compare secrets directly.
type sessions struct {
	ttl time.Duration
	now func() time.Time

	mu    sync.Mutex
	byKey map[[sha256.Size]byte]*session
}

type session struct {
	approver string
	csrf     string
	expires  time.Time
}

const maxSessions = 1000

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, byKey: map[[sha256.Size]byte]*session{}}
}

// start signs approver in and returns the cookie value.
func (s *sessions) start(approver string) (string, *session, error) {
	id, err := randomToken()
	if err != nil {
		return "", nil, err
	}
	csrf, err := randomToken()
	if err != nil {
		return "", nil, err
	}
	now := s.now()
	sess := &session{approver: approver, csrf: csrf, expires: now.Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.byKey {
		if !now.Before(v.expires) {
			delete(s.byKey, k)
		}
	}
	if len(s.byKey) >= maxSessions {
		// Evict the session closest to its end rather than refuse a person.
		var oldest [sha256.Size]byte
		var first *session
		for k, v := range s.byKey {
			if first == nil || v.expires.Before(first.expires) {
				oldest, first = k, v
			}
		}
		delete(s.byKey, oldest)
	}
	s.byKey[sha256.Sum256([]byte(id))] = sess
	return id, sess, nil
}

func (s *sessions) get(id string) (*session, bool) {
	if id == "" || len(id) > 128 {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sha256.Sum256([]byte(id))
	sess, ok := s.byKey[k]
	if !ok {
		return nil, false
	}
	if !s.now().Before(sess.expires) {
		delete(s.byKey, k)
		return nil, false
	}
	return sess, true
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byKey, sha256.Sum256([]byte(id)))
}

func randomToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}
