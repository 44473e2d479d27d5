package router

import (
	"context"
	"encoding/json"
	"errors"
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
// is still starting while the gateway restarts.
type slowBackend struct {
	fakeBackend
	entered, release chan struct{}
}

func (b *slowBackend) ListTools(ctx context.Context) ([]mcp.Tool, error) {
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
