package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// fakeBackend offers read-only tools that answer their own name.
type fakeBackend struct {
	name  string
	tools []string
	calls []string
}

func (b *fakeBackend) Name() string { return b.name }

func (b *fakeBackend) ListTools(context.Context) ([]mcp.Tool, error) {
	var out []mcp.Tool
	for _, n := range b.tools {
		t := mcp.NewToolWithRawSchema(n, "Read "+n+".", json.RawMessage(`{"type":"object"}`))
		ro, destructive := true, false
		t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint = &ro, &destructive
		out = append(out, t)
	}
	return out, nil
}

func (b *fakeBackend) Call(_ context.Context, tool string, _ any, _ map[string]any, _ bool) (*mcp.CallToolResult, error) {
	b.calls = append(b.calls, tool)
	return toolkit.Success(map[string]any{"tool": tool}, 0)
}

// A tool is callable only through the endpoint that offers it and only by
// a caller who may see it; everything else is the same ErrNoSuchTool.
func TestCallToolStaysInsideItsEndpoint(t *testing.T) {
	ctx := context.Background()
	engine, err := policy.NewEmbedded(ctx, policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := approval.NewSigner([]byte("direct-test-approval-key-0123456789abcdef"))
	pinStore, _ := pins.Load("")
	demo := &fakeBackend{name: "demo", tools: []string{"demo_echo", "demo_counter_get"}}
	web := &fakeBackend{name: "web", tools: []string{"web_search"}}
	r, err := New(Config{}, Deps{Policy: engine, Tickets: tickets.NewStore(nil, 100, 10), Pins: pinStore, Signer: signer, Backends: []Backend{web, demo}})
	if err != nil {
		t.Fatal(err)
	}
	r.RefreshAll(ctx)
	user := auth.WithIdentity(ctx, auth.Identity{Client: auth.Client{Name: "openwebui", Groups: []string{"users"}}})
	nobody := auth.WithIdentity(ctx, auth.Identity{Client: auth.Client{Name: "stranger", Groups: []string{"nobody"}}})

	if got := r.Endpoints(); len(got) != 2 || got[0] != "demo" || got[1] != "web" {
		t.Fatalf("endpoints %v", got)
	}
	tools, ok := r.VisibleTools(user, "demo")
	if !ok || len(tools) != 2 || tools[0].Def.Name != "demo_counter_get" || tools[1].Def.Name != "demo_echo" || tools[0].Write {
		t.Fatalf("demo tools: %v %+v", ok, tools)
	}
	if tools, ok := r.VisibleTools(nobody, "demo"); !ok || len(tools) != 0 {
		t.Fatalf("a client without rights sees %+v", tools)
	}
	if _, ok := r.VisibleTools(user, "nosuch"); ok {
		t.Fatal("an unknown endpoint exists")
	}

	cases := []struct {
		name     string
		ctx      context.Context
		endpoint string
		tool     string
		ok       bool
		// refused: answered as a tool failure with this code instead of
		// ErrNoSuchTool.
		refused toolerr.Code
	}{
		{"own endpoint", user, "demo", "demo_echo", true, ""},
		{"another service's endpoint", user, "web", "demo_echo", false, ""},
		{"unknown tool", user, "demo", "demo_nosuch", false, ""},
		{"unknown endpoint", user, "nosuch", "demo_echo", false, ""},
		{"caller may not see it", nobody, "demo", "demo_echo", false, ""},
		{"no identity at all", ctx, "demo", "demo_echo", false, toolerr.AuthFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(demo.calls) + len(web.calls)
			res, err := r.CallTool(tc.ctx, tc.endpoint, tc.tool, json.RawMessage(`{}`))
			after := len(demo.calls) + len(web.calls)
			if tc.refused != "" {
				if err != nil || res == nil || !res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), string(tc.refused)) || after != before {
					t.Fatalf("got %v %+v, %d backend calls", err, res, after-before)
				}
				return
			}
			if !tc.ok {
				if !errors.Is(err, ErrNoSuchTool) || after != before {
					t.Fatalf("got %v, %d backend calls", err, after-before)
				}
				return
			}
			if err != nil || res.IsError || after != before+1 {
				t.Fatalf("got %v %+v", err, res)
			}
		})
	}
}
