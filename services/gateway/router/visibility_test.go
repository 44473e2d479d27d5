package router

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/services/gateway/auth"
)

// The tool filter's remembered answers are about one service's tool: when
// a tool name moves to another service (one restarted without it, a
// compromised neighbour offering it next), the caller's right to the
// first says nothing about the second. (Before, the answer was remembered by tool name alone, so
// for up to ten seconds a service the caller may not use listed the tool
// and the admission step let its call through to the policy.)
func TestAVisibilityAnswerDoesNotFollowAToolNameToAnotherService(t *testing.T) {
	demo := &fakeBackend{name: "demo", tools: []string{"demo_moving"}}
	unraid := &fakeBackend{name: "unraid"}
	r := newLoadingRouter(t, demo, unraid)
	r.RefreshAll(t.Context())
	user := auth.WithIdentity(t.Context(), auth.Identity{Client: auth.Client{Name: "openwebui", Groups: []string{"users"}}})
	if tools, _ := r.VisibleTools(user, "demo"); len(tools) != 1 {
		t.Fatalf("demo's tool is not visible to its users: %v", tools)
	}

	demo.tools, unraid.tools = nil, []string{"demo_moving"}
	if err := r.Refresh(t.Context(), "demo"); err != nil {
		t.Fatal(err)
	}
	if err := r.Refresh(t.Context(), "unraid"); err != nil {
		t.Fatal(err)
	}
	if tools, _ := r.VisibleTools(user, "unraid"); len(tools) != 0 {
		t.Errorf("a service the group may not use lists %v", tools)
	}
	if _, err := r.CallTool(user, "unraid", "demo_moving", json.RawMessage(`{}`)); !errors.Is(err, ErrNoSuchTool) {
		t.Errorf("call of the moved tool: %v, want ErrNoSuchTool", err)
	}
	if len(unraid.calls) != 0 {
		t.Fatal("the service was called")
	}
}
