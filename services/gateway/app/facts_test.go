package app_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// switchPreview is a write's preview that reports whatever facts the test
// set.
type switchPreview struct {
	Target string `json:"target"`
	facts  approval.Facts
}

func (p switchPreview) PreviewFacts() approval.Facts { return p.facts }

type switchArgs struct {
	Name string `json:"name"`
}

// factsService is a homeassistant-like service whose writes report the
// facts in *facts (nil: none).
type factsService struct {
	mu      sync.Mutex
	facts   approval.Facts
	applied int
}

func (s *factsService) set(f approval.Facts) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.facts = f
}

func (s *factsService) tool(name string) toolkit.Tool {
	return toolkit.Tool{
		Name: name, Description: "Switch something.",
		Handler: toolkit.WriteFor(
			func(_ context.Context, in switchArgs) (switchPreview, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				return switchPreview{Target: in.Name, facts: s.facts}, nil
			},
			func(context.Context, switchArgs, switchPreview) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.applied++
				return map[string]any{"done": true}, nil
			}),
	}
}

func haFacts(domains ...string) approval.Facts {
	return approval.Facts{"kind": "intent", "domains": domains, "device_classes": []string{}, "unresolved": false, "opaque": false}
}

// The gateway gives a write's preview facts to the policy before it issues
// a ticket and keeps the stricter decision: facts raise a low-risk write
// to a ticket (a person's, for a lock), never lower what another rule
// requires; the ticket keeps the facts; a service that owes facts and
// reports none gets a person.
func TestPreviewFactsOnlyRaiseTheApproval(t *testing.T) {
	svc := &factsService{}
	g := gatewaytest.Start(t, gatewaytest.Options{
		Service: "homeassistant", AllowWrites: true,
		Tools: []toolkit.Tool{svc.tool("ha_HassTurnOn"), svc.tool("ha_HassUnlock")},
	})
	c := g.Client("openwebui", "ann@example.org")
	cases := []struct {
		name     string
		tool     string
		facts    approval.Facts
		status   string
		approval string
		reason   string
	}{
		{"lights stay low risk", "ha_HassTurnOn", haFacts("light"), "applied", "", ""},
		{"a lock needs a person", "ha_HassTurnOn", haFacts("light", "lock"), "confirmation_required", "human", "would operate a lock"},
		{"a switch needs the user", "ha_HassTurnOn", haFacts("switch"), "confirmation_required", "model", "write needs confirmation"},
		{"unresolved needs a person", "ha_HassTurnOn", approval.Facts{"domains": []string{}, "unresolved": true}, "confirmation_required", "human", "could not tell"},
		{"no facts where they are owed", "ha_HassTurnOn", nil, "confirmation_required", "human", "must report what it touches"},
		{"harmless facts never lower", "ha_HassUnlock", haFacts("light"), "confirmation_required", "human", `"ha_HassUnlock" needs human approval`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			svc.set(tc.facts)
			before := svc.applied
			got, isErr := gatewaytest.Call(t, c, tc.tool, map[string]any{"name": "x"})
			if isErr || got["status"] != tc.status {
				t.Fatalf("got %v", got)
			}
			if tc.status == "applied" {
				if svc.applied != before+1 {
					t.Fatal("not applied")
				}
				return
			}
			if got["approval"] != tc.approval || !strings.Contains(got["reason"].(string), tc.reason) || svc.applied != before {
				t.Fatalf("got %v (applied %d)", got, svc.applied-before)
			}
			tk, ok := g.App.Tickets.Get(got["ticket"].(string))
			if !ok {
				t.Fatal("no ticket stored")
			}
			if tc.facts != nil && !strings.Contains(string(tk.Facts), `"domains"`) {
				t.Errorf("the ticket does not keep the facts: %s", tk.Facts)
			}
			if string(tk.Approval) != tc.approval {
				t.Errorf("ticket approval %s, want %s", tk.Approval, tc.approval)
			}
		})
	}

	// The confirm of a ticket issued on facts is decided on the same facts
	// (a ticket for a lock stays a person's), and the service refuses an
	// apply whose recomputed facts differ from the approved ones.
	svc.set(haFacts("switch"))
	got, _ := gatewaytest.Call(t, c, "ha_HassTurnOn", map[string]any{"name": "y"})
	ticket := got["ticket"].(string)
	svc.set(haFacts("switch", "lock"))
	got, isErr := gatewaytest.Call(t, c, "ha_HassTurnOn", map[string]any{"name": "y", "confirm": true, "ticket": ticket})
	if !isErr || !strings.Contains(errMessage(got), "scope changed") || svc.applied != 1 {
		t.Fatalf("confirm with changed facts: %v (applied %d)", got, svc.applied)
	}
}

// Facts of the wrong shape are refused at the gateway: no ticket, nothing
// applied, whatever the service claims.
func TestMalformedPreviewFactsAreRefused(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "homeassistant", AllowWrites: true})
	for _, facts := range []any{
		map[string]any{"domains": 3},
		map[string]any{"Domains": []any{"lock"}},
		map[string]any{"domains": []any{strings.Repeat("x", 200)}},
		[]any{"lock"},
		"lock",
	} {
		applied := 0
		s := server.NewMCPServer("rogue", "1", server.WithToolCapabilities(true))
		tool := mcp.NewTool("ha_HassTurnOn", mcp.WithDescription("Rogue."), mcp.WithString("name"))
		tool.Annotations = mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(false)}
		tool.Meta = &mcp.Meta{AdditionalFields: map[string]any{approval.MetaWrite: true}}
		s.AddTool(tool, func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.AdditionalFields[approval.MetaApproval] != nil {
				applied++
			}
			res := mcp.NewToolResultStructured(map[string]any{"status": "preview", "preview": map[string]any{}}, "{}")
			res.Meta = &mcp.Meta{AdditionalFields: map[string]any{approval.MetaPreviewDigest: "d1", approval.MetaPreviewFacts: facts}}
			return res, nil
		})
		srv := httptest.NewServer(server.NewStreamableHTTPServer(s, server.WithStateLess(true), server.WithDisableLocalhostProtection(true)))
		t.Cleanup(srv.Close)
		g.SetService(srv.Config.Handler)
		g.App.Router.RefreshAll(t.Context())
		c := g.Client("openwebui", "ann@example.org")
		got, isErr := gatewaytest.Call(t, c, "ha_HassTurnOn", map[string]any{"name": "x"})
		if !isErr || gatewaytest.ErrorCode(got) != "upstream_unavailable" || !strings.Contains(errMessage(got), "malformed preview facts") || applied != 0 {
			t.Fatalf("facts %v: %v (applied %d)", facts, got, applied)
		}
		if n := len(g.App.Tickets.List("")); n != 0 {
			t.Fatalf("facts %v: %d tickets issued", facts, n)
		}
	}
}

// A write called by name through the discovery endpoint is decided on its
// preview facts exactly as on /mcp: facts raise the approval, the answer
// shows them, the ticket keeps them, and a confirm whose recomputed facts
// differ applies nothing.
func TestPreviewFactsRaiseTheApprovalThroughDiscovery(t *testing.T) {
	svc := &factsService{}
	g := gatewaytest.Start(t, gatewaytest.Options{
		Service: "homeassistant", AllowWrites: true,
		Tools: []toolkit.Tool{svc.tool("ha_HassTurnOn")},
	})
	d := g.ClientAt("openwebui", "ann@example.org", "/mcp/discover")
	via := func(args map[string]any) (map[string]any, bool) {
		return gatewaytest.Call(t, d, "toolgate_call_tool", map[string]any{"name": "ha_HassTurnOn", "arguments": args})
	}

	svc.set(haFacts("light"))
	if got, isErr := via(map[string]any{"name": "kitchen"}); isErr || got["status"] != "applied" || svc.applied != 1 {
		t.Fatalf("lights: %v (applied %d)", got, svc.applied)
	}

	svc.set(haFacts("light", "lock"))
	got, isErr := via(map[string]any{"name": "front door"})
	if isErr || got["status"] != "confirmation_required" || got["approval"] != "human" ||
		!strings.Contains(got["reason"].(string), "would operate a lock") || svc.applied != 1 {
		t.Fatalf("a lock through discovery: %v (applied %d)", got, svc.applied)
	}
	if facts, _ := got["facts"].(map[string]any); facts == nil || !strings.Contains(strings.Join(toStrings(facts["domains"]), ","), "lock") {
		t.Errorf("the preview does not show its facts: %v", got["facts"])
	}
	tk, ok := g.App.Tickets.Get(got["ticket"].(string))
	if !ok || !strings.Contains(string(tk.Facts), `"lock"`) || string(tk.Approval) != "human" {
		t.Fatalf("ticket %+v (stored %v)", tk, ok)
	}

	svc.set(haFacts("switch"))
	got, _ = via(map[string]any{"name": "porch"})
	ticket := got["ticket"].(string)
	svc.set(haFacts("switch", "lock"))
	got, isErr = via(map[string]any{"name": "porch", "confirm": true, "ticket": ticket})
	if !isErr || !strings.Contains(errMessage(got), "scope changed") || svc.applied != 1 {
		t.Fatalf("confirm with changed facts through discovery: %v (applied %d)", got, svc.applied)
	}
}

func toStrings(v any) []string {
	var out []string
	if list, ok := v.([]any); ok {
		for _, x := range list {
			s, _ := x.(string)
			out = append(out, s)
		}
	}
	return out
}
