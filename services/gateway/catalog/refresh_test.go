package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// lister is a service offering read-only tools: down for its first
// refusals tools/list (as a service that starts beside the gateway and is
// not listening yet), or always when down is set.
type lister struct {
	name     string
	tools    []string
	down     bool
	refusals atomic.Int32
	lists    atomic.Int32
}

func (b *lister) Name() string { return b.name }

func (b *lister) ListTools(context.Context) ([]mcp.Tool, error) {
	b.lists.Add(1)
	if b.down || b.refusals.Add(-1) >= 0 {
		return nil, errors.New("connection refused")
	}
	var out []mcp.Tool
	for _, n := range b.tools {
		t := mcp.NewToolWithRawSchema(n, "Read "+n+".", json.RawMessage(`{"type":"object"}`))
		ro, destructive := true, false
		t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint = &ro, &destructive
		out = append(out, t)
	}
	return out, nil
}

func newTestCatalog(t *testing.T, backends ...Backend) *Catalog {
	t.Helper()
	engine, err := policy.NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	pinStore, _ := pins.Load("")
	c, err := New(Config{Backends: backends, Pins: pinStore, Policy: engine})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A service that is down must not keep the gateway closed: asked once,
// answered or not, counts.
func TestAServiceThatIsDownDoesNotHoldTheLoad(t *testing.T) {
	cases := []struct {
		name     string
		backends []Backend
	}{
		{"no services", nil},
		{"one down", []Backend{&lister{name: "demo", down: true}}},
		{"one down, one up", []Backend{&lister{name: "demo", down: true}, &lister{name: "web", tools: []string{"web_search"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCatalog(t, tc.backends...)
			c.RefreshAll(t.Context())
			select {
			case <-c.Loaded():
			default:
				t.Fatal("not loaded after every service was asked")
			}
			if err := c.AwaitLoaded(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A service that was not up at the gateway's first refresh is in the
// catalog within seconds, not after the whole refresh interval (an hour
// here); one that was up is not asked again before the interval.
func TestAServiceThatStartsLateIsAskedAgainSoon(t *testing.T) {
	late := &lister{name: "demo", tools: []string{"demo_echo"}}
	late.refusals.Store(2)
	up := &lister{name: "web", tools: []string{"web_search"}}
	c := newTestCatalog(t, late, up)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { c.Run(ctx, time.Hour); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(30 * time.Second)
	for c.Lookup("demo_echo") == nil {
		if time.Now().After(deadline) {
			t.Fatal("the late service's tools never appeared")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := c.downServices(); len(got) != 0 {
		t.Errorf("still down: %v", got)
	}
	if n := up.lists.Load(); n != 1 {
		t.Errorf("the service that was up was asked %d times, want once", n)
	}
}
