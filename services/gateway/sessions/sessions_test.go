package sessions_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/sessions"
)

// closed records the sessions the store ended in the MCP server.
type closed struct {
	mu  sync.Mutex
	ids []string
}

func (c *closed) close(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ids = append(c.ids, id)
}

func (c *closed) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

// endpoint is the session manager resolver of one endpoint, which
// remembers its store and endpoint so that a test's initialize opens its
// session there first, as the gateway's handler does.
type endpoint struct {
	server.SessionIdManagerResolver
	store *sessions.Store
	name  string
}

func resolve(s *sessions.Store, name string, closer sessions.Closer) endpoint {
	return endpoint{SessionIdManagerResolver: s.Resolver(name, closer), store: s, name: name}
}

// managerFor is the session manager mcp-go gets for a request of client
// other than initialize.
func managerFor(t *testing.T, r server.SessionIdManagerResolver, client string) server.SessionIdManager {
	t.Helper()
	return manager(t, r, client, nil)
}

func manager(t *testing.T, r server.SessionIdManagerResolver, client string, o *sessions.Opening) server.SessionIdManager {
	t.Helper()
	ctx := auth.WithIdentity(context.Background(), auth.Identity{Client: auth.Client{Name: client}})
	if o != nil {
		ctx = sessions.WithOpening(ctx, o)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	return r.ResolveSessionIdManager(req)
}

// opening is the session manager mcp-go gets for an initialize of client,
// after the gateway's handler opened its session (Open; an empty id when
// the store refused), and what the handler learns.
func opening(t *testing.T, r server.SessionIdManagerResolver, client string) (server.SessionIdManager, *sessions.Opening) {
	t.Helper()
	ep, ok := r.(endpoint)
	if !ok {
		t.Fatalf("resolver %T not made by resolve", r)
	}
	o := &sessions.Opening{}
	o.ID, _ = ep.store.Open(client, ep.name)
	return manager(t, r, client, o), o
}

// open runs one successful initialize of client and returns its session.
func open(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, client string) string {
	t.Helper()
	m, o := opening(t, r, client)
	id := m.Generate()
	if id == "" || o.ID != id {
		t.Fatalf("no session opened: %q %q", id, o.ID)
	}
	s.Opened(id, true)
	return id
}

func TestEachClientHoldsAtMostItsCapOldestGoesFirst(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_800_000_000, 0))
	s := sessions.New(sessions.Config{PerClient: 3, Total: 100, Now: clock.Now})
	var c closed
	r := resolve(s, "", c.close)
	flood := managerFor(t, r, "flooder")
	var ids []string
	for range 3 {
		ids = append(ids, open(t, s, r, "flooder"))
		clock.Advance(time.Second)
	}
	// The first session is used again, so the second is now the oldest.
	if _, err := flood.Validate(ids[0]); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	fourth := open(t, s, r, "flooder")
	if n := s.CountFor("flooder"); n != 3 {
		t.Fatalf("flooder holds %d sessions, want 3", n)
	}
	if got := c.list(); !slices.Equal(got, []string{ids[1]}) {
		t.Fatalf("ended %v, want the least recently used %s", got, ids[1])
	}
	if term, err := flood.Validate(ids[1]); !term && err == nil {
		t.Fatal("an evicted session is still valid")
	}
	for _, id := range []string{ids[0], ids[2], fourth} {
		if _, err := flood.Validate(id); err != nil {
			t.Fatalf("session %s lost: %v", id, err)
		}
	}
}

func TestTheHeaviestClientMakesRoomWhenTheGatewayIsFull(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_800_000_000, 0))
	s := sessions.New(sessions.Config{PerClient: 10, Total: 12, Now: clock.Now})
	var c closed
	r := resolve(s, "demo", c.close)
	quiet := managerFor(t, r, "quiet")
	var quietIDs []string
	for range 4 {
		quietIDs = append(quietIDs, open(t, s, r, "quiet"))
		clock.Advance(time.Second)
	}
	for range 1000 {
		open(t, s, r, "flooder")
		clock.Advance(time.Millisecond)
	}
	if n, f := s.Count(), s.CountFor("flooder"); n != 12 || f != 8 {
		t.Fatalf("%d sessions, %d of the flooder; want 12 and 8", n, f)
	}
	// The quiet client's sessions are older than every flood session, yet
	// none was taken.
	for _, id := range quietIDs {
		if _, err := quiet.Validate(id); err != nil {
			t.Fatalf("the flood pushed out another client's session %s", id)
		}
	}
	if len(c.list()) != 1000-8 {
		t.Fatalf("%d sessions ended in the MCP server, want %d", len(c.list()), 1000-8)
	}
}

func TestASessionIsOnlyItsClients(t *testing.T) {
	s := sessions.New(sessions.Config{})
	var c closed
	r := resolve(s, "", c.close)
	owner, other := managerFor(t, r, "owner"), managerFor(t, r, "other")
	id := open(t, s, r, "owner")
	if _, err := other.Validate(id); err == nil {
		t.Fatal("another client may use the session")
	}
	if notAllowed, _ := other.Terminate(id); !notAllowed {
		t.Fatal("another client may end the session")
	}
	if _, err := owner.Validate(id); err != nil {
		t.Fatalf("the owner lost its session: %v", err)
	}
	if _, err := owner.Validate("mcp-session-forged"); err == nil {
		t.Fatal("a forged id is valid")
	}
	// On another endpoint the id means nothing either.
	if _, err := managerFor(t, resolve(s, "web", c.close), "owner").Validate(id); err == nil {
		t.Fatal("a session is valid on another endpoint")
	}
	if notAllowed, err := owner.Terminate(id); notAllowed || err != nil || s.Count() != 0 {
		t.Fatalf("the owner cannot end its session: %v %v, %d left", notAllowed, err, s.Count())
	}
	// mcp-go's idle sweeper resolves with no request and may end any.
	id = open(t, s, r, "owner")
	if notAllowed, err := r.ResolveSessionIdManager(nil).Terminate(id); notAllowed || err != nil || s.Count() != 0 {
		t.Fatal("the sweeper cannot end a session")
	}
	// Without a client nothing is opened.
	if id := r.ResolveSessionIdManager(&http.Request{}).Generate(); id != "" || s.Count() != 0 {
		t.Fatalf("a session was opened without a client: %q", id)
	}
}

func TestInitializeRateIsPerClient(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_800_000_000, 0))
	s := sessions.New(sessions.Config{InitializesPerMinute: 30, InitializeBurst: 5, Now: clock.Now})
	for i := range 5 {
		if ok, _ := s.AllowInitialize("flooder"); !ok {
			t.Fatalf("initialize %d of the burst refused", i+1)
		}
	}
	ok, wait := s.AllowInitialize("flooder")
	if ok || wait != 2*time.Second {
		t.Fatalf("over the burst: allowed=%v, wait %v (want 2s at 30 per minute)", ok, wait)
	}
	// A refusal costs nothing: after the wait one more is allowed.
	if ok, _ := s.AllowInitialize("other"); !ok {
		t.Fatal("another client is limited by the flooder")
	}
	clock.Advance(wait)
	if ok, _ := s.AllowInitialize("flooder"); !ok {
		t.Fatal("still refused after the wait")
	}
	if ok, _ := s.AllowInitialize("flooder"); ok {
		t.Fatal("allowed twice after one wait")
	}
}

func TestIdleSessionsArePruned(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_800_000_000, 0))
	s := sessions.New(sessions.Config{IdleTTL: time.Minute, Now: clock.Now})
	var c closed
	r := resolve(s, "", c.close)
	m := managerFor(t, r, "client")
	idle, busy := open(t, s, r, "client"), open(t, s, r, "client")
	clock.Advance(45 * time.Second)
	m.Validate(busy)
	clock.Advance(30 * time.Second)
	if n := s.Prune(); n != 1 || s.Count() != 1 {
		t.Fatalf("pruned %d, %d left", n, s.Count())
	}
	if got := c.list(); !slices.Equal(got, []string{idle}) {
		t.Fatalf("ended %v, want %s", got, idle)
	}
}

// TestASessionStillOpeningIsNotEnded: a session is ended only after the
// initialize that opened it finished (mcp-go registers it at the very end
// of that request, so ending it earlier would leak it), and a client cannot
// have more initializes in flight than sessions.
func TestASessionStillOpeningIsNotEnded(t *testing.T) {
	clock := fakeclock.New(time.Unix(1_800_000_000, 0))
	s := sessions.New(sessions.Config{PerClient: 2, Now: clock.Now})
	var c closed
	r := resolve(s, "", c.close)
	slowManager, slow := opening(t, r, "flooder")
	slowID := slowManager.Generate() // its initialize is still running
	clock.Advance(time.Second)
	open(t, s, r, "flooder")
	clock.Advance(time.Second)
	open(t, s, r, "flooder")
	for _, id := range c.list() {
		if id == slowID {
			t.Fatal("a session was ended while its initialize was running")
		}
	}
	// In flight: the slow one; ready: two. One more in flight is allowed,
	// then the client has as many in flight as it may hold.
	if m, _ := opening(t, r, "flooder"); m.Generate() == "" {
		t.Fatal("a second initialize in flight was refused")
	}
	if m, _ := opening(t, r, "flooder"); m.Generate() != "" {
		t.Fatal("more initializes in flight than sessions allowed")
	}
	// The slow initialize ends; its session is the newest, the caps hold.
	s.Opened(slow.ID, true)
	if m := managerFor(t, r, "flooder"); func() error { _, err := m.Validate(slowID); return err }() != nil {
		t.Fatal("the slow session was dropped when it finished opening")
	}
	// An initialize the client did not get (it failed) ends its session.
	m, o := opening(t, r, "other")
	id := m.Generate()
	s.Opened(o.ID, false)
	if term, err := managerFor(t, r, "other").Validate(id); (!term && err == nil) || !slices.Contains(c.list(), id) {
		t.Fatal("a failed initialize left its session")
	}
}

// TestDirectOnlyWhileMCPGoCountsTheSession: the direct tools/call path may
// serve a session without mcp-go only while mcp-go's idle sweeper (on its
// own clock) still counts the session as active, only for the client and
// endpoint that own it, and never once it ended; ended ids answer
// "terminated" for a while and are then forgotten.
func TestDirectOnlyWhileMCPGoCountsTheSession(t *testing.T) {
	sweeper := fakeclock.New(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	s := sessions.New(sessions.Config{IdleTTL: 10 * time.Minute, Now: sweeper.Now, SweeperNow: sweeper.Now})
	var c closed
	r := resolve(s, "demo", c.close)
	m, o := opening(t, r, "owner")
	id := m.Generate()
	if !strings.HasPrefix(id, "mcp-session-") || len(id) != len("mcp-session-")+32 {
		t.Fatalf("id %q", id)
	}
	if s.Direct("owner", "demo", id) {
		t.Fatal("served directly before its initialize finished")
	}
	s.Opened(o.ID, true)
	if !s.Direct("owner", "demo", id) {
		t.Fatal("a new session is not served directly")
	}
	if s.Direct("other", "demo", id) || s.Direct("owner", "", id) {
		t.Fatal("served directly for another client or endpoint")
	}
	sweeper.Advance(6 * time.Minute)
	if s.Direct("owner", "demo", id) {
		t.Fatal("served directly although mcp-go has not seen it for 6 of its 10 idle minutes")
	}
	if term, err := m.Validate(id); term || err != nil {
		t.Fatalf("Validate: %v %v", term, err)
	}
	if !s.Direct("owner", "demo", id) {
		t.Fatal("not direct right after mcp-go saw it")
	}
	if s.Direct("owner", "demo", "") || s.Direct("owner", "demo", "mcp-session-forged") {
		t.Fatal("direct for an id never issued")
	}
	_, _ = m.Terminate(id)
	if term, _ := m.Validate(id); !term || s.Direct("owner", "demo", id) {
		t.Fatal("an ended session still counts")
	}
	// Ended ids are forgotten after a while, not kept forever.
	for range 3 {
		sweeper.Advance(11 * time.Minute)
		_, _ = m.Terminate(open(t, s, r, "owner"))
	}
	if term, err := m.Validate(id); term || err == nil {
		t.Error("an id ended half an hour ago is still known")
	}
	if s.Count() != 0 {
		t.Errorf("%d live after all ended", s.Count())
	}
}

// TestStatsCountOpenEvictedAndRefused: Stats counts the sessions held
// (dropping as they end for any reason), only the sessions ended to make
// room as evicted, by the cap that made room, and every initialize the
// rate limit refused.
func TestStatsCountOpenEvictedAndRefused(t *testing.T) {
	tests := []struct {
		name string
		cfg  sessions.Config
		run  func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, clock *fakeclock.Clock)
		want sessions.Stats
	}{
		{
			name: "opened sessions are open",
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				open(t, s, r, "a")
				open(t, s, r, "a")
				open(t, s, r, "b")
			},
			want: sessions.Stats{Open: 3},
		},
		{
			name: "a session still initializing is open",
			run: func(t *testing.T, _ *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				if m, _ := opening(t, r, "a"); m.Generate() == "" {
					t.Fatal("no session opened")
				}
			},
			want: sessions.Stats{Open: 1},
		},
		{
			name: "a session its client ended is no longer open",
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				id := open(t, s, r, "a")
				open(t, s, r, "a")
				if _, err := managerFor(t, r, "a").Terminate(id); err != nil {
					t.Fatal(err)
				}
			},
			want: sessions.Stats{Open: 1},
		},
		{
			name: "a session mcp-go's idle sweeper ended is no longer open",
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				if _, err := r.ResolveSessionIdManager(nil).Terminate(open(t, s, r, "a")); err != nil {
					t.Fatal(err)
				}
			},
			want: sessions.Stats{},
		},
		{
			name: "an idle session pruned is no longer open and not evicted",
			cfg:  sessions.Config{IdleTTL: time.Minute},
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, clock *fakeclock.Clock) {
				open(t, s, r, "a")
				clock.Advance(2 * time.Minute)
				open(t, s, r, "a")
				if n := s.Prune(); n != 1 {
					t.Fatalf("pruned %d", n)
				}
			},
			want: sessions.Stats{Open: 1},
		},
		{
			name: "a failed initialize is neither open nor evicted",
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				m, o := opening(t, r, "a")
				m.Generate()
				s.Opened(o.ID, false)
			},
			want: sessions.Stats{},
		},
		{
			name: "a client over its cap evicts its own session",
			cfg:  sessions.Config{PerClient: 2},
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, clock *fakeclock.Clock) {
				for range 5 {
					open(t, s, r, "a")
					clock.Advance(time.Second)
				}
			},
			want: sessions.Stats{Open: 2, EvictedPerClient: 3},
		},
		{
			name: "a full gateway evicts a session",
			cfg:  sessions.Config{PerClient: 10, Total: 3},
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, clock *fakeclock.Clock) {
				for _, c := range []string{"a", "a", "b", "b"} {
					open(t, s, r, c)
					clock.Advance(time.Second)
				}
			},
			want: sessions.Stats{Open: 3, EvictedTotal: 1},
		},
		{
			name: "initializes over the rate are refused and counted",
			cfg:  sessions.Config{InitializesPerMinute: 1, InitializeBurst: 2},
			run: func(t *testing.T, s *sessions.Store, _ server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				for range 5 {
					s.AllowInitialize("a")
				}
				if ok, _ := s.AllowInitialize("b"); !ok {
					t.Fatal("another client was refused")
				}
			},
			want: sessions.Stats{InitializesRefused: 3},
		},
		{
			name: "initializes past the in-flight cap open nothing and are counted",
			cfg:  sessions.Config{PerClient: 2},
			run: func(t *testing.T, s *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				opening(t, r, "a")
				opening(t, r, "a")
				for range 3 {
					if m, o := opening(t, r, "a"); o.ID != "" || m.Generate() != "" {
						t.Fatal("an initialize past the in-flight cap opened a session")
					}
				}
				if _, ok := s.Open("b", "demo"); !ok {
					t.Fatal("another client was refused")
				}
			},
			want: sessions.Stats{Open: 3, InitializesRefused: 3},
		},
		{
			name: "an initialize the handler opened nothing for gets no session from mcp-go",
			run: func(t *testing.T, _ *sessions.Store, r server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				if id := manager(t, r, "a", &sessions.Opening{}).Generate(); id != "" {
					t.Fatalf("mcp-go was given session %q that the store never opened", id)
				}
			},
			want: sessions.Stats{},
		},
		{
			name: "initializes within the rate are not refused",
			run: func(t *testing.T, s *sessions.Store, _ server.SessionIdManagerResolver, _ *fakeclock.Clock) {
				for range sessions.DefaultInitializeBurst {
					if ok, _ := s.AllowInitialize("a"); !ok {
						t.Fatal("refused within the burst")
					}
				}
			},
			want: sessions.Stats{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := fakeclock.New(time.Unix(1_800_000_000, 0))
			cfg := tc.cfg
			cfg.Now = clock.Now
			s := sessions.New(cfg)
			var c closed
			r := resolve(s, "demo", c.close)
			if got := s.Stats(); got != (sessions.Stats{}) {
				t.Fatalf("a new store: %+v", got)
			}
			tc.run(t, s, r, clock)
			if got := s.Stats(); got != tc.want {
				t.Fatalf("Stats() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// EndClient ends every session of one client (its token was removed) and
// no other's; one still opening is ended once its initialize finished, so
// mcp-go, which registers it only then, lets go of it too.
func TestEndClientEndsOnlyThatClientsSessions(t *testing.T) {
	s := sessions.New(sessions.Config{})
	var c closed
	r := resolve(s, "", c.close)
	gone1, gone2, kept := open(t, s, r, "demo-admin"), open(t, s, r, "demo-admin"), open(t, s, r, "openwebui")
	m, o := opening(t, r, "demo-admin")
	still := m.Generate()
	if n := s.EndClient("demo-admin"); n != 2 {
		t.Fatalf("EndClient ended %d sessions, want the 2 ready ones", n)
	}
	if got := c.list(); !slices.Contains(got, gone1) || !slices.Contains(got, gone2) || slices.Contains(got, still) || len(got) != 2 {
		t.Fatalf("closed %v, want %s and %s only (the opening one later)", got, gone1, gone2)
	}
	for _, id := range []string{gone1, gone2} {
		if term, err := managerFor(t, r, "demo-admin").Validate(id); !term && err == nil {
			t.Errorf("session %s of the removed client is still valid", id)
		}
	}
	if _, err := managerFor(t, r, "openwebui").Validate(kept); err != nil {
		t.Errorf("another client's session was ended: %v", err)
	}
	s.Opened(o.ID, true)
	if got := c.list(); !slices.Contains(got, still) || s.CountFor("demo-admin") != 0 {
		t.Errorf("the session that was opening survived EndClient: closed %v, demo-admin holds %d", got, s.CountFor("demo-admin"))
	}
}
