// Package sessions bounds the MCP sessions the gateway keeps for clients
// of the older protocol revisions (2025-03-26 … 2025-11-25, initialize and
// Mcp-Session-Id): each session belongs to the client that opened it,
// every client may hold only so many and the gateway only so many in all
// (the least recently used one makes room), and each client may open only
// so many per minute. Without these bounds any token holder, even one whose
// groups allow nothing, could initialize in a loop until the gateway ran
// out of memory and its restart lost every ticket.
package sessions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"golang.org/x/time/rate"

	"github.com/toolgate/toolgate/services/gateway/auth"
)

// Defaults of Config.
const (
	DefaultPerClient         = 64
	DefaultTotal             = 2048
	DefaultInitializesPerMin = 120
	DefaultInitializeBurst   = 64
	// DefaultIdleTTL is how long an unused session lives.
	DefaultIdleTTL = 10 * time.Minute
)

// Config bounds the sessions.
type Config struct {
	// PerClient is the most sessions one client (token) holds; a new one
	// replaces that client's least recently used session.
	PerClient int
	// Total is the most sessions the gateway holds; a new one replaces the
	// least recently used session of the client that holds the most.
	Total int
	// InitializesPerMinute and InitializeBurst limit how fast one client
	// opens sessions (a token bucket per client).
	InitializesPerMinute int
	InitializeBurst      int
	// IdleTTL ends sessions unused for that long (Prune); mcp-go's idle
	// sweeper uses the same.
	IdleTTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SweeperNow is the clock of mcp-go's idle sweeper (time.Now, which
	// nil means): Direct compares the last request mcp-go handled with it.
	SweeperNow func() time.Time
}

// ErrUnknown is returned for a session id that does not exist or belongs
// to another client (the two are deliberately one answer).
var ErrUnknown = errors.New("unknown session")

// Closer ends a session's state in the MCP server of one endpoint.
type Closer func(id string)

type session struct {
	id, client, endpoint string
	lastUsed             time.Time
	// seen is when mcp-go last handled a request of the session, on the
	// sweeper's clock.
	seen time.Time
	// ready: the initialize that opened it has finished. Only ready
	// sessions make room for others: mcp-go registers a session at the end
	// of its initialize, so one ended before that would be registered again
	// afterwards and never freed.
	ready bool
	// doomed: EndClient came while it was opening; Opened ends it.
	doomed bool
}

type client struct {
	sessions map[string]*session
	limiter  *rate.Limiter
}

// Store holds the sessions of every endpoint.
type Store struct {
	cfg Config

	mu      sync.Mutex
	byID    map[string]*session
	clients map[string]*client
	closers map[string]Closer // by endpoint
	// ended ids answer "terminated" (mcp-go's word) for one idle TTL,
	// then nothing is kept of them.
	ended  map[string]time.Time
	pruned time.Time
	// Sessions ended to make room under PerClient and under Total
	// (guarded by mu, which the eviction holds anyway).
	evictedPerClient, evictedTotal uint64

	// refused counts initializes over the rate or past the in-flight cap;
	// atomic because the rate refusal is decided outside mu.
	refused atomic.Uint64
}

// Stats are the store's figures for the gateway's metrics.
type Stats struct {
	// Open is the sessions held, those whose initialize is still running
	// included (they count against the caps too).
	Open int
	// EvictedPerClient and EvictedTotal count the sessions ended to make
	// room for a new one under PerClient and under Total; sessions a
	// client ended, that went idle or whose initialize failed are not
	// counted.
	EvictedPerClient, EvictedTotal uint64
	// InitializesRefused counts the initializes AllowInitialize (over the
	// rate) and Open (past the in-flight cap) refused; the gateway answers
	// each with 429.
	InitializesRefused uint64
}

// Stats returns the store's figures at this moment.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{
		Open:               len(s.byID),
		EvictedPerClient:   s.evictedPerClient,
		EvictedTotal:       s.evictedTotal,
		InitializesRefused: s.refused.Load(),
	}
}

// New returns an empty store; zero settings take the defaults.
func New(cfg Config) *Store {
	if cfg.PerClient <= 0 {
		cfg.PerClient = DefaultPerClient
	}
	if cfg.Total <= 0 {
		cfg.Total = DefaultTotal
	}
	if cfg.InitializesPerMinute <= 0 {
		cfg.InitializesPerMinute = DefaultInitializesPerMin
	}
	if cfg.InitializeBurst <= 0 {
		cfg.InitializeBurst = DefaultInitializeBurst
	}
	if cfg.IdleTTL <= 0 {
		cfg.IdleTTL = DefaultIdleTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SweeperNow == nil {
		cfg.SweeperNow = time.Now
	}
	return &Store{cfg: cfg, byID: map[string]*session{}, clients: map[string]*client{}, closers: map[string]Closer{}, ended: map[string]time.Time{}}
}

// Config returns the store's settings (defaults filled in).
func (s *Store) Config() Config { return s.cfg }

// AllowInitialize takes one initialize from name's budget. When the budget
// is spent it returns false and how long until the next one is allowed;
// nothing is taken then. Each refusal is counted (Stats).
func (s *Store) AllowInitialize(name string) (bool, time.Duration) {
	now := s.cfg.Now()
	s.mu.Lock()
	c := s.clientLocked(name)
	s.mu.Unlock()
	r := c.limiter.ReserveN(now, 1)
	if !r.OK() {
		s.refused.Add(1)
		return false, time.Minute
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		s.refused.Add(1)
		return false, d
	}
	return true, 0
}

func (s *Store) clientLocked(name string) *client {
	c, ok := s.clients[name]
	if !ok {
		// Clients come from the tokens file, so this map stays as small as
		// that file.
		c = &client{
			sessions: map[string]*session{},
			limiter:  rate.NewLimiter(rate.Limit(float64(s.cfg.InitializesPerMinute)/60), s.cfg.InitializeBurst),
		}
		s.clients[name] = c
	}
	return c
}

// Count is the number of sessions held.
func (s *Store) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// CountFor is the number of sessions client name holds.
func (s *Store) CountFor(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[name]; ok {
		return len(c.sessions)
	}
	return 0
}

// Owns reports whether session id exists on endpoint and belongs to name;
// it counts as a use of the session.
func (s *Store) Owns(name, endpoint, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.byID[id]
	if !ok || se.client != name || se.endpoint != endpoint {
		return false
	}
	se.lastUsed = s.cfg.Now()
	return true
}

// Direct reports whether the gateway may serve a request of session id
// itself, without mcp-go (the direct tools/call path): the session is
// name's on endpoint, its initialize finished, and mcp-go handled one of
// its requests recently enough that mcp-go's idle sweeper will not end it
// in the meantime. A false answer sends the request through mcp-go, which
// then counts it.
func (s *Store) Direct(name, endpoint, id string) bool {
	if id == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.byID[id]
	if !ok || !se.ready || se.client != name || se.endpoint != endpoint ||
		s.cfg.SweeperNow().Sub(se.seen) >= s.cfg.IdleTTL/2 {
		return false
	}
	se.lastUsed = s.cfg.Now()
	return true
}

// Open records a new session of name on endpoint, not yet ready, for an
// initialize about to run (the session manager hands its id to mcp-go).
// It returns false, opening nothing, when the client already has as many
// initializes in flight as it may hold sessions: the gateway then answers
// 429 itself, because mcp-go, given no id, would answer a 200 without a
// session that every later request of the client fails on. Each refusal
// is counted (Stats).
func (s *Store) Open(name, endpoint string) (string, bool) {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clientLocked(name)
	opening := 0
	for _, se := range c.sessions {
		if !se.ready {
			opening++
		}
	}
	if opening >= s.cfg.PerClient {
		s.refused.Add(1)
		return "", false
	}
	se := &session{id: newID(), client: name, endpoint: endpoint, lastUsed: now, seen: s.cfg.SweeperNow()}
	s.byID[se.id] = se
	c.sessions[se.id] = se
	return se.id, true
}

// Opened ends the initialize that opened session id: ok says whether the
// client got the session. A session the client got is ready and the caps
// are enforced (the least recently used ready sessions of the client, and
// if the gateway is full those of the client holding the most, are ended);
// one it did not get is ended at once.
func (s *Store) Opened(id string, ok bool) {
	if id == "" {
		return
	}
	s.mu.Lock()
	se, found := s.byID[id]
	if !found {
		s.mu.Unlock()
		return
	}
	var dropped []*session
	if !ok || se.doomed {
		dropped = append(dropped, s.removeLocked(se))
	} else {
		// Just used: the newest, never the one to make room.
		se.ready, se.lastUsed = true, s.cfg.Now()
		c := s.clients[se.client]
		for len(c.sessions) > s.cfg.PerClient {
			victim := oldest(c)
			if victim == nil {
				break // the rest are still opening
			}
			dropped = append(dropped, s.removeLocked(victim))
			s.evictedPerClient++
		}
		for len(s.byID) > s.cfg.Total {
			// The client holding the most gives way, so a flood from one
			// token never pushes out the sessions of the others.
			var victim *session
			most := 0
			for _, o := range s.clients {
				if v := oldest(o); v != nil && len(o.sessions) > most {
					victim, most = v, len(o.sessions)
				}
			}
			if victim == nil {
				break
			}
			dropped = append(dropped, s.removeLocked(victim))
			s.evictedTotal++
		}
	}
	s.mu.Unlock()
	s.close(dropped)
}

// oldest is the least recently used ready session of c, or nil.
func oldest(c *client) *session {
	var o *session
	for _, se := range c.sessions {
		if se.ready && (o == nil || se.lastUsed.Before(o.lastUsed)) {
			o = se
		}
	}
	return o
}

func (s *Store) removeLocked(se *session) *session {
	delete(s.byID, se.id)
	if c, ok := s.clients[se.client]; ok {
		delete(c.sessions, se.id)
	}
	now := s.cfg.Now()
	s.ended[se.id] = now
	if now.Sub(s.pruned) > time.Minute || len(s.ended) > 4*s.cfg.Total {
		s.pruned = now
		for id, at := range s.ended {
			if now.Sub(at) > s.cfg.IdleTTL || len(s.ended) > 4*s.cfg.Total {
				delete(s.ended, id)
			}
		}
	}
	return se
}

// close ends the MCP server state of sessions that the store dropped. It
// runs without the store's lock: the closer calls back into the store.
func (s *Store) close(dropped []*session) {
	for _, se := range dropped {
		s.mu.Lock()
		closer := s.closers[se.endpoint]
		s.mu.Unlock()
		if closer != nil {
			closer(se.id)
		}
	}
}

// EndClient ends every session of client name (its token left the tokens
// file, or changed) and returns how many; they then answer as ended. A
// session whose initialize is still running is ended when it finishes
// (Opened), since mcp-go registers it only then.
func (s *Store) EndClient(name string) int {
	s.mu.Lock()
	var dropped []*session
	if c, ok := s.clients[name]; ok {
		for _, se := range c.sessions {
			if !se.ready {
				se.doomed = true
				continue
			}
			dropped = append(dropped, s.removeLocked(se))
		}
	}
	s.mu.Unlock()
	s.close(dropped)
	return len(dropped)
}

// Prune ends the sessions unused for longer than the idle TTL and returns
// how many.
func (s *Store) Prune() int {
	limit := s.cfg.Now().Add(-s.cfg.IdleTTL)
	s.mu.Lock()
	var dropped []*session
	for _, se := range s.byID {
		if se.lastUsed.Before(limit) {
			dropped = append(dropped, s.removeLocked(se))
		}
	}
	s.mu.Unlock()
	s.close(dropped)
	return len(dropped)
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "mcp-session-" + hex.EncodeToString(b[:])
}

// Resolver is the session manager of one endpoint's MCP server: sessions
// are opened for, and only usable by, the client in the request's context.
// closer ends a session's state in that server when the store drops it.
func (s *Store) Resolver(endpoint string, closer Closer) server.SessionIdManagerResolver {
	s.mu.Lock()
	s.closers[endpoint] = closer
	s.mu.Unlock()
	return resolver{store: s, endpoint: endpoint}
}

type resolver struct {
	store    *Store
	endpoint string
}

type systemKey struct{}

// System marks ctx as the gateway's own request (ending a session it
// dropped), which may end any session.
func System(ctx context.Context) context.Context { return context.WithValue(ctx, systemKey{}, true) }

// Opening carries the id of the session an initialize opens (Open), from
// the handler that sends the initialize to the MCP server (which then calls
// Opened) to the session manager, which hands it to mcp-go.
type Opening struct{ ID string }

type openingKey struct{}

// WithOpening returns ctx carrying o for the session manager.
func WithOpening(ctx context.Context, o *Opening) context.Context {
	return context.WithValue(ctx, openingKey{}, o)
}

func (r resolver) ResolveSessionIdManager(req *http.Request) server.SessionIdManager {
	m := &manager{resolver: r}
	switch {
	case req == nil:
		// mcp-go's idle sweeper.
		m.system = true
	case req.Context().Value(systemKey{}) != nil:
		m.system = true
	default:
		if id, ok := auth.IdentityFrom(req.Context()); ok {
			m.client = id.Client.Name
		}
		m.opening, _ = req.Context().Value(openingKey{}).(*Opening)
	}
	return m
}

// manager implements server.SessionIdManager for one request.
type manager struct {
	resolver
	client  string
	system  bool
	opening *Opening
}

// Generate hands mcp-go the session the gateway opened (Open) for this
// initialize, which counts once Opened says the client got it. Without a
// client (which the authentication in front of the MCP server rules out)
// or without a session opened by the handler waiting for the outcome, it
// returns "" and no session exists.
func (m *manager) Generate() string {
	if m.client == "" || m.opening == nil {
		return ""
	}
	return m.opening.ID
}

// Validate is mcp-go's check of every request's session id; that mcp-go
// handles the request also counts as activity on its sweeper's clock.
func (m *manager) Validate(id string) (bool, error) {
	if m.system {
		return false, nil
	}
	s := m.store
	s.mu.Lock()
	defer s.mu.Unlock()
	se, ok := s.byID[id]
	switch {
	case ok && se.client == m.client && se.endpoint == m.endpoint:
		se.lastUsed, se.seen = s.cfg.Now(), s.cfg.SweeperNow()
		return false, nil
	case !ok:
		if _, ended := s.ended[id]; ended {
			return true, nil
		}
	}
	return false, ErrUnknown
}

// Terminate ends a session; a client may end only its own.
func (m *manager) Terminate(id string) (bool, error) {
	m.store.mu.Lock()
	se, ok := m.store.byID[id]
	switch {
	case !ok:
		m.store.mu.Unlock()
		return false, nil
	case !m.system && (se.client != m.client || se.endpoint != m.endpoint):
		m.store.mu.Unlock()
		// mcp-go then leaves the session alone (405).
		return true, nil
	}
	m.store.removeLocked(se)
	m.store.mu.Unlock()
	return false, nil
}
