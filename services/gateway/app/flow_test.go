package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

func TestWriteFlowEndToEnd(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "alice@example.org", "/mcp")

	// A read is allowed.
	got, isErr := call(t, c, "demo_echo", map[string]any{"text": "hi"})
	if isErr || got["text"] != "hi" {
		t.Fatalf("read: %v", got)
	}

	// A write without a ticket returns a preview and a ticket and changes nothing.
	prev, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 5})
	if isErr || prev["status"] != "confirmation_required" {
		t.Fatalf("preview: %v", prev)
	}
	ticket, _ := prev["ticket"].(string)
	if !strings.HasPrefix(ticket, "tkt_") || prev["approval"] != "model" {
		t.Fatalf("preview lacks a model ticket: %v", prev)
	}
	p, _ := prev["preview"].(map[string]any)
	if p["current"] != float64(0) || p["new"] != float64(5) {
		t.Fatalf("preview does not show the change: %v", prev)
	}
	if !strings.Contains(prev["next"].(string), "confirm") {
		t.Fatalf("preview does not say what to do next: %v", prev)
	}
	if h.demo.counter.Load() != 0 || h.demo.applied.Load() != 0 {
		t.Fatal("the preview changed something")
	}

	// Refusals, each changing nothing and leaving the ticket usable.
	other := h.client("hermes", "alice@example.org", "/mcp")
	otherUser := h.client("openwebui", "bob@example.org", "/mcp")
	refusals := []struct {
		name string
		c    *client.Client
		args map[string]any
		code toolerr.Code
		msg  string
	}{
		{"changed arguments", c, map[string]any{"amount": 6, "confirm": true, "ticket": ticket}, toolerr.Forbidden, "exact call"},
		{"another client", other, map[string]any{"amount": 5, "confirm": true, "ticket": ticket}, toolerr.Forbidden, "exact call"},
		{"another user", otherUser, map[string]any{"amount": 5, "confirm": true, "ticket": ticket}, toolerr.Forbidden, "exact call"},
		{"unknown ticket", c, map[string]any{"amount": 5, "confirm": true, "ticket": "tkt_nope"}, toolerr.Forbidden, "unknown ticket"},
		{"ticket without confirm", c, map[string]any{"amount": 5, "ticket": ticket}, toolerr.InvalidArgument, "confirm: true"},
		{"confirm without ticket", c, map[string]any{"amount": 5, "confirm": true}, toolerr.InvalidArgument, "needs the ticket"},
		{"confirm not a boolean", c, map[string]any{"amount": 5, "confirm": "yes", "ticket": ticket}, toolerr.InvalidArgument, "boolean"},
	}
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			got, isErr := call(t, r.c, "demo_counter_add", r.args)
			if !isErr || errCode(got) != r.code || !strings.Contains(errMessage(got), r.msg) {
				t.Fatalf("want %s containing %q, got %v", r.code, r.msg, got)
			}
			if h.demo.counter.Load() != 0 || h.demo.applied.Load() != 0 {
				t.Fatal("a refused call changed something")
			}
		})
	}

	// The right confirm applies exactly once.
	done, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 5, "confirm": true, "ticket": ticket})
	if isErr || done["status"] != "applied" {
		t.Fatalf("confirm: %v", done)
	}
	if h.demo.counter.Load() != 5 || h.demo.applied.Load() != 1 {
		t.Fatalf("counter %d after %d applies, want 5 after 1", h.demo.counter.Load(), h.demo.applied.Load())
	}

	// A replay is refused.
	again, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 5, "confirm": true, "ticket": ticket})
	if !isErr || errCode(again) != toolerr.Forbidden || !strings.Contains(errMessage(again), "already used") {
		t.Fatalf("replay: %v", again)
	}
	if h.demo.counter.Load() != 5 || h.demo.applied.Load() != 1 {
		t.Fatal("the replay changed something")
	}

	// An expired ticket is refused.
	prev, _ = call(t, c, "demo_counter_add", map[string]any{"amount": 1})
	h.clock.Advance(11 * time.Minute)
	expired, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 1, "confirm": true, "ticket": prev["ticket"]})
	if !isErr || errCode(expired) != toolerr.Forbidden || !strings.Contains(errMessage(expired), "expired") {
		t.Fatalf("expired: %v", expired)
	}
	if h.demo.counter.Load() != 5 {
		t.Fatal("an expired ticket changed something")
	}
}

func TestScopeChangeBetweenPreviewAndConfirm(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "", "/mcp")
	prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 2})
	h.demo.counter.Store(40) // the upstream changed after the user saw the preview
	got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 2, "confirm": true, "ticket": prev["ticket"]})
	if !isErr || errCode(got) != toolerr.Forbidden || !strings.Contains(errMessage(got), "scope changed") {
		t.Fatalf("want scope change refusal, got %v", got)
	}
	if h.demo.counter.Load() != 40 || h.demo.applied.Load() != 0 {
		t.Fatal("a stale ticket applied")
	}
}

func TestHumanApproval(t *testing.T) {
	h := newHarness(t)
	h.demo.counter.Store(7)
	c := h.client("openwebui", "alice@example.org", "/mcp")

	prev, isErr := call(t, c, "demo_counter_reset", map[string]any{})
	if isErr || prev["approval"] != "human" {
		t.Fatalf("destructive write must need a person: %v", prev)
	}
	ticket := prev["ticket"].(string)
	pending, isErr := call(t, c, "demo_counter_reset", map[string]any{"confirm": true, "ticket": ticket})
	if isErr || pending["status"] != "pending" || pending["applied"] != false {
		t.Fatalf("confirm before approval: %v", pending)
	}
	if h.demo.counter.Load() != 7 {
		t.Fatal("a pending ticket applied")
	}
	if code := h.AdminPost("/admin/tickets/" + ticket + "/approve"); code != 200 {
		t.Fatalf("approve: HTTP %d", code)
	}
	done, isErr := call(t, c, "demo_counter_reset", map[string]any{"confirm": true, "ticket": ticket})
	if isErr || done["status"] != "applied" || h.demo.counter.Load() != 0 {
		t.Fatalf("confirm after approval: %v (counter %d)", done, h.demo.counter.Load())
	}
	// The person's decision is in the audit log next to the calls.
	for _, want := range []string{`"event":"ticket","client":"openwebui"`, `"ticket_id":"` + ticket + `"`, `"outcome":"approved"`, `"reason":"decided by gatewaytest"`} {
		if !strings.Contains(h.audit.String(), want) {
			t.Errorf("audit log lacks %s", want)
		}
	}

	// A denied ticket is dead, even if someone tries to approve it later.
	h.demo.counter.Store(3)
	prev, _ = call(t, c, "demo_counter_reset", map[string]any{})
	ticket = prev["ticket"].(string)
	if code := h.AdminPost("/admin/tickets/" + ticket + "/deny"); code != 200 {
		t.Fatalf("deny: HTTP %d", code)
	}
	if code := h.AdminPost("/admin/tickets/" + ticket + "/approve"); code == 200 {
		t.Fatal("a denied ticket was approved")
	}
	dead, isErr := call(t, c, "demo_counter_reset", map[string]any{"confirm": true, "ticket": ticket})
	if !isErr || errCode(dead) != toolerr.Forbidden || !strings.Contains(errMessage(dead), "denied") {
		t.Fatalf("denied ticket: %v", dead)
	}
	if h.demo.counter.Load() != 3 {
		t.Fatal("a denied ticket applied")
	}
}

// TestServiceRefusesWithoutGateway calls the service directly: without the
// gateway's token nothing answers, and with it (a stolen token) a write can
// only preview: forged, altered and replayed approvals are refused.
func TestServiceRefusesWithoutGateway(t *testing.T) {
	h := newHarness(t)

	// No token at all.
	tr, err := transport.NewStreamableHTTP(h.ServiceURL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	anon := client.NewClient(tr)
	if err := anon.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := anon.Initialize(t.Context(), mcp.InitializeRequest{}); err == nil {
		t.Fatal("the service accepted a client without the gateway token")
	}

	tr, err = transport.NewStreamableHTTP(h.ServiceURL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + serviceToken}))
	if err != nil {
		t.Fatal(err)
	}
	direct := client.NewClient(tr)
	if err := direct.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	defer direct.Close()

	args := map[string]any{"amount": 3}
	digest, _ := approval.Digest(args)
	good, _ := approval.NewSigner([]byte(gatewaytest.ServiceApprovalKey("demo")))
	bad, _ := approval.NewSigner([]byte(otherKey))
	// A compromised web holds its own key; the gateway's master key is
	// never a service's.
	web, _ := approval.NewSigner([]byte(gatewaytest.ServiceApprovalKey("web")))
	master, _ := approval.NewSigner([]byte(approvalKey))
	exp := time.Now().Add(time.Minute).Unix()
	forged, _ := bad.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: digest, TicketID: "t1", Expires: exp})
	fromWeb, _ := web.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: digest, TicketID: "t6", Expires: exp})
	withMaster, _ := master.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: digest, TicketID: "t7", Expires: exp})
	otherArgs, _ := approval.Digest(map[string]any{"amount": 99})
	altered, _ := good.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: otherArgs, TicketID: "t2", Expires: exp})
	tampered := forged[:len(forged)-3] + "abc"
	expired, _ := good.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: digest, TicketID: "t3", Expires: time.Now().Add(-time.Second).Unix()})
	scope, _ := approval.Digest(map[string]any{"current": 0, "new": 3})
	noScope, _ := good.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: digest, TicketID: "t5", Expires: exp})
	valid, _ := good.Sign(approval.Approval{Service: "demo", Tool: "demo_counter_add", ArgsDigest: digest, PreviewDigest: scope, TicketID: "t4", Expires: exp})

	cases := []struct {
		name, token string
		wantStatus  string
		wantCode    toolerr.Code
		counter     int64
	}{
		{"no approval previews only", "", "preview", "", 0},
		{"forged signature", forged, "", toolerr.Forbidden, 0},
		{"signed with another service's key", fromWeb, "", toolerr.Forbidden, 0},
		{"signed with the gateway's master key", withMaster, "", toolerr.Forbidden, 0},
		{"tampered token", tampered, "", toolerr.Forbidden, 0},
		{"approval for other arguments", altered, "", toolerr.Forbidden, 0},
		{"expired approval", expired, "", toolerr.Forbidden, 0},
		{"approval without a previewed scope", noScope, "", toolerr.Forbidden, 0},
		{"valid approval applies", valid, "applied", "", 3},
		{"replayed approval", valid, "", toolerr.Forbidden, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mcp.CallToolRequest{}
			req.Params.Name = "demo_counter_add"
			req.Params.Arguments = args
			if tc.token != "" {
				req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{approval.MetaApproval: tc.token}}
			}
			res, err := direct.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			got := structured(t, res)
			if tc.wantCode != "" && (!res.IsError || errCode(got) != tc.wantCode) {
				t.Fatalf("want %s, got %v", tc.wantCode, got)
			}
			if tc.wantStatus != "" && got["status"] != tc.wantStatus {
				t.Fatalf("want status %s, got %v", tc.wantStatus, got)
			}
			if h.demo.counter.Load() != tc.counter {
				t.Fatalf("counter %d, want %d", h.demo.counter.Load(), tc.counter)
			}
		})
	}
}

func TestPolicyHidesAndDenies(t *testing.T) {
	h := newHarness(t)
	names := func(c *client.Client) map[string]bool {
		res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, tl := range res.Tools {
			out[tl.Name] = true
		}
		return out
	}
	user := names(h.client("openwebui", "", "/mcp"))
	if !user["demo_echo"] || !user["demo_counter_add"] {
		t.Fatalf("users should see reads and writes: %v", user)
	}
	kiosk := h.client("kiosk", "", "/mcp")
	ro := names(kiosk)
	if !ro["demo_echo"] || ro["demo_counter_add"] || ro["demo_counter_reset"] {
		t.Fatalf("a read-only group must see reads only: %v", ro)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "demo_counter_add"
	req.Params.Arguments = map[string]any{"amount": 1}
	if res, err := kiosk.CallTool(t.Context(), req); err == nil && !res.IsError {
		t.Fatal("a read-only client called a write")
	}
	if len(names(h.client("stranger", "", "/mcp"))) != 0 {
		t.Fatal("a client without groups sees tools")
	}
	if h.demo.counter.Load() != 0 {
		t.Fatal("a hidden write ran")
	}
}

func TestWriteToolSchemaOffersConfirm(t *testing.T) {
	h := newHarness(t)
	res, err := h.client("openwebui", "", "/mcp/demo").ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		schema := string(tl.RawInputSchema)
		if schema == "" {
			b, _ := tl.InputSchema.MarshalJSON()
			schema = string(b)
		}
		write := tl.Annotations.ReadOnlyHint != nil && !*tl.Annotations.ReadOnlyHint
		if write != strings.Contains(schema, `"confirm"`) {
			t.Errorf("%s: write=%v but schema %s", tl.Name, write, schema)
		}
		if tl.Annotations.ReadOnlyHint == nil || tl.Annotations.DestructiveHint == nil {
			t.Errorf("%s: annotations not explicit", tl.Name)
		}
		if !strings.Contains(schema, `"additionalProperties":false`) {
			t.Errorf("%s: schema is not strict: %s", tl.Name, schema)
		}
	}
	if len(res.Tools) != 8 {
		t.Fatalf("want the 8 demo tools on /mcp/demo, got %d", len(res.Tools))
	}
}

// TestForceIsBoundAndNeedsAPerson: force turns a write into one a person
// must approve, and a ticket issued without force cannot confirm a forced
// call (nor the other way round).
func TestForceIsBoundAndNeedsAPerson(t *testing.T) {
	h := newHarness(t)
	c := h.client("openwebui", "", "/mcp")
	plain, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 1})
	forced, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 1, "force": true})
	if plain["approval"] != "model" || forced["approval"] != "human" {
		t.Fatalf("approvals: plain %v, forced %v", plain["approval"], forced["approval"])
	}
	for _, tc := range []struct {
		name   string
		args   map[string]any
		ticket any
	}{
		{"plain ticket, forced call", map[string]any{"amount": 1, "force": true}, plain["ticket"]},
		{"forced ticket, plain call", map[string]any{"amount": 1}, forced["ticket"]},
	} {
		tc.args["confirm"], tc.args["ticket"] = true, tc.ticket
		got, isErr := call(t, c, "demo_counter_add", tc.args)
		if !isErr || errCode(got) != toolerr.Forbidden || !strings.Contains(errMessage(got), "force") {
			t.Fatalf("%s: %v", tc.name, got)
		}
	}
	if h.demo.counter.Load() != 0 {
		t.Fatal("a mismatched force applied")
	}
	// The plain ticket still works for the plain call.
	got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 1, "confirm": true, "ticket": plain["ticket"]})
	if isErr || got["status"] != "applied" {
		t.Fatalf("plain confirm: %v", got)
	}
}

// TestGatewaySignsEachServicesApprovalWithItsOwnKey: the gateway signs an
// approval for demo with demo's own key, derived from its master key. A
// demo holding another service's key (what a compromised web holds) or the
// master itself refuses it and nothing applies; with its own key the write
// applies.
func TestGatewaySignsEachServicesApprovalWithItsOwnKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		key     string
		applies bool
	}{
		{"its own key", gatewaytest.ServiceApprovalKey("demo"), true},
		{"another service's key", gatewaytest.ServiceApprovalKey("web"), false},
		{"the gateway's master key", approvalKey, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.SetService(h.NewService(h.demo.tools(), func(o *toolkit.Options) { o.ApprovalKey = []byte(tc.key) }).Handler())
			c := h.client("openwebui", "", "/mcp")
			prev, _ := call(t, c, "demo_counter_add", map[string]any{"amount": 5})
			if prev["status"] != "confirmation_required" {
				t.Fatalf("preview: %v", prev)
			}
			got, isErr := call(t, c, "demo_counter_add", map[string]any{"amount": 5, "confirm": true, "ticket": prev["ticket"]})
			if tc.applies {
				if isErr || h.demo.counter.Load() != 5 {
					t.Fatalf("confirm with demo's own key: %v", got)
				}
				return
			}
			if !isErr || errCode(got) != toolerr.Forbidden || h.demo.counter.Load() != 0 || h.demo.applied.Load() != 0 {
				t.Fatalf("want a refusal and nothing applied, got %v (counter %d)", got, h.demo.counter.Load())
			}
		})
	}
}
