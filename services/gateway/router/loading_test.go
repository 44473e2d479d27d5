package router

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// slowBackend answers tools/list only when released, as a service does that
// is still starting while the gateway restarts; or not at all (down).
type slowBackend struct {
	fakeBackend
	entered, release chan struct{}
	down             bool
}

func (b *slowBackend) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	if b.down {
		return nil, errors.New("connection refused")
	}
	close(b.entered)
	<-b.release
	return b.fakeBackend.ListTools(ctx)
}

func newLoadingRouter(t *testing.T, backends ...Backend) *Router {
	t.Helper()
	engine, err := policy.NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := approval.NewSigner([]byte("loading-test-approval-key-0123456789abcdef"))
	pinStore, _ := pins.Load("")
	r, err := New(Config{}, Deps{Policy: engine, Tickets: tickets.NewStore(nil, 100, 10), Pins: pinStore, Signer: signer, Backends: backends})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// After a gateway (re)start a client reconnects at once. Its first
// tools/list and tools/call must see the services' tools, not an empty
// catalog and "tool not found" because the first load had not finished.
func TestFirstRequestsWaitForTheCatalog(t *testing.T) {
	demo := &slowBackend{fakeBackend: fakeBackend{name: "demo", tools: []string{"demo_echo"}},
		entered: make(chan struct{}), release: make(chan struct{})}
	web := &fakeBackend{name: "web", tools: []string{"web_search"}}
	r := newLoadingRouter(t, demo, web)
	user := auth.WithIdentity(t.Context(), auth.Identity{Client: auth.Client{Name: "openwebui", Groups: []string{"users"}}})

	refreshed := make(chan struct{})
	go func() { r.RefreshAll(t.Context()); close(refreshed) }()
	<-demo.entered // web may have answered; demo has not

	listed := make(chan []OfferedTool, 1)
	called := make(chan error, 1)
	go func() { tools, _ := r.VisibleTools(user, "demo"); listed <- tools }()
	go func() {
		res, err := r.CallTool(user, "demo", "demo_echo", json.RawMessage(`{}`))
		if err == nil && res.IsError {
			err = errors.New("error result")
		}
		called <- err
	}()
	select {
	case <-r.Loaded():
		t.Fatal("loaded before every service was asked")
	case tools := <-listed:
		t.Fatalf("tools/list answered before demo's tools were loaded: %+v", tools)
	case err := <-called:
		t.Fatalf("tools/call answered before demo's tools were loaded: %v", err)
	case <-time.After(200 * time.Millisecond):
		// Still waiting, as they should: now let demo answer.
	}
	close(demo.release)
	if tools := <-listed; len(tools) != 1 || tools[0].Def.Name != "demo_echo" {
		t.Fatalf("tools/list after the load: %+v", tools)
	}
	if err := <-called; err != nil {
		t.Fatalf("tools/call after the load: %v", err)
	}
	<-refreshed
}

// A service that is down must not keep the gateway closed: asked once,
// answered or not, counts.
func TestAServiceThatIsDownDoesNotHoldTheLoad(t *testing.T) {
	cases := []struct {
		name     string
		backends []Backend
	}{
		{"no services", nil},
		{"one down", []Backend{&slowBackend{fakeBackend: fakeBackend{name: "demo"}, down: true}}},
		{"one down, one up", []Backend{&slowBackend{fakeBackend: fakeBackend{name: "demo"}, down: true}, &fakeBackend{name: "web", tools: []string{"web_search"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newLoadingRouter(t, tc.backends...)
			r.RefreshAll(t.Context())
			select {
			case <-r.Loaded():
			default:
				t.Fatal("not loaded after every service was asked")
			}
			if err := r.awaitLoaded(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// startingBackend is down for its first few tools/list, as a service that
// starts beside the gateway and is not listening yet.
type startingBackend struct {
	fakeBackend
	refusals atomic.Int32
}

func (b *startingBackend) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	if b.refusals.Add(-1) >= 0 {
		return nil, errors.New("connection refused")
	}
	return b.fakeBackend.ListTools(ctx)
}

// A service that was not up at the gateway's first refresh is in the
// catalog within seconds, not after the whole refresh interval (an hour
// here); one that was up is not asked again before the interval.
func TestAServiceThatStartsLateIsAskedAgainSoon(t *testing.T) {
	late := &startingBackend{fakeBackend: fakeBackend{name: "demo", tools: []string{"demo_echo"}}}
	late.refusals.Store(2)
	up := &countingBackend{fakeBackend: fakeBackend{name: "web", tools: []string{"web_search"}}}
	r := newLoadingRouter(t, late, up)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx, time.Hour); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(30 * time.Second)
	for r.lookup("demo_echo") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the late service's tools never appeared")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := r.downServices(); len(got) != 0 {
		t.Errorf("still down: %v", got)
	}
	if n := up.lists.Load(); n != 1 {
		t.Errorf("the service that was up was asked %d times, want once", n)
	}
}

type countingBackend struct {
	fakeBackend
	lists atomic.Int32
}

func (b *countingBackend) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	b.lists.Add(1)
	return b.fakeBackend.ListTools(ctx)
}
