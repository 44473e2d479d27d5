package router

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// call is one tools/call as it moves through the gateway.
type call struct {
	e          *catalog.Tool
	id         auth.Identity
	args       map[string]any
	argsDigest string
	confirm    bool
	// ticket is the ticket this call is about: the one the client
	// presented, the one a preview issued, or an auto_ id. The audit
	// records it.
	ticket string
	// presented is the ticket the client sent, as the store had it when the call
	// arrived, if it is bound to this very call: looked up once, for the
	// policy's ticket state and the approval check of the confirm.
	presented *tickets.Ticket
	force     bool
	start     time.Time
	decision  policy.Decision
	// endpoint is the endpoint the call was admitted on (see admit).
	endpoint string
	// canonical is the arguments' canonical JSON (what argsDigest hashes,
	// and what a read sends the service).
	canonical []byte
	// direct: the call came on the direct path (direct.go), which can
	// write a read's result as the service sent it; passed is that result
	// when it did (its Body set, and serve answers a nil result).
	direct bool
	passed mcpwire.Passed
	// via is the tool that carried the call (discovery's
	// toolgate_call_tool), "" when the client called the tool itself: the
	// next step of a preview names it.
	via string
}

// decide asks the policy about the call (its ticket's state and facts
// when it presents one bound to it) and keeps the answer in c.decision; an
// engine failure is a deny. It returns the failure to answer when the
// ticket cannot be read.
func (r *Router) decide(ctx context.Context, c *call) *mcp.CallToolResult {
	state := "none"
	var preview *policy.Preview
	if c.ticket != "" {
		if t, ok := r.deps.Tickets.Get(c.ticket); ok && t.Binding == r.binding(c) {
			c.presented, state = &t, "valid"
			// The confirm is decided on the facts the ticket was issued
			// for; the service refuses the apply if its recomputed facts
			// differ.
			preview = &policy.Preview{}
			if len(t.Facts) > 0 {
				f, err := approval.ParseFacts(t.Facts)
				if err != nil {
					return errorResult(toolerr.New(toolerr.Forbidden, "the ticket's preview facts are unreadable; nothing was changed — call without confirm for a new preview"))
				}
				preview.Facts = f
			}
		}
	}
	in := c.e.Input(c.id, policy.ActionCall, c.args, policy.Ticket{State: state, Force: c.force}, r.deps.Now(), r.cfg.Transport)
	in.Preview = preview
	d, err := r.deps.Policy.Decide(ctx, in)
	if err == nil {
		err = policy.Validate(d)
	}
	if err != nil {
		r.log.Error("policy failed; denying", "error", err)
		d = policy.Decision{Decision: policy.Deny, Reason: policyFailure(err), ReasonID: policyFailureID(err)}
	}
	c.decision = d
	return nil
}

// parseArgs decodes the arguments keeping numbers exact and takes the
// gateway's own confirm and ticket arguments out of them.
func (r *Router) parseArgs(c *call, req mcp.CallToolRequest) error {
	raw := req.Params.RawArguments
	if len(raw) == 0 {
		if req.Params.Arguments == nil {
			raw = json.RawMessage("{}")
		} else {
			b, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments are not a JSON object")
			}
			raw = b
		}
	}
	// Before anything (the policy engine, the service's validator) parses
	// the numbers exactly.
	if err := toolkit.CheckNumbers(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments must be a JSON object")
	}
	if args == nil {
		args = map[string]any{}
	}
	if c.e.Write {
		if v, ok := args[catalog.ArgConfirm]; ok {
			b, isBool := v.(bool)
			if !isBool {
				return toolerr.New(toolerr.InvalidArgument, "confirm must be a boolean")
			}
			c.confirm = b
			delete(args, catalog.ArgConfirm)
		}
		if v, ok := args[catalog.ArgTicket]; ok {
			s, isStr := v.(string)
			if !isStr || len(s) > 128 {
				return toolerr.New(toolerr.InvalidArgument, "ticket must be the ticket string from the preview")
			}
			c.ticket = s
			delete(args, catalog.ArgTicket)
		}
		if c.ticket != "" && !c.confirm {
			return toolerr.New(toolerr.InvalidArgument, "a ticket is only accepted together with confirm: true, after the user agreed to the preview")
		}
	}
	if f, ok := args["force"].(bool); ok {
		c.force = f
	}
	canonical, err := approval.Canonical(args)
	if err != nil {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments cannot be digested")
	}
	// approval.Digest's value, from the bytes a read sends on.
	sum := sha256.Sum256(canonical)
	c.args, c.argsDigest, c.canonical = args, hex.EncodeToString(sum[:]), canonical
	return nil
}

func success(body map[string]any) *mcp.CallToolResult {
	res, err := toolkit.Success(body, 0)
	if err != nil {
		return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not encode the answer"))
	}
	return res
}

func (r *Router) record(c *call, event, outcome string, bytes int) audit.Record {
	rec := audit.Record{
		Time: r.deps.Now().UTC(), Event: event, Client: c.id.Client.Name, User: c.id.User, UserRole: c.id.UserRole,
		Endpoint: endpointPath(c.endpoint), Service: c.e.Service, Tool: c.e.Upstream.Name, Phase: phase(c),
		Decision: c.decision.Decision, Reason: c.decision.Reason, ReasonID: c.decision.ReasonID,
		Approval: c.decision.Approval, TicketID: c.ticket, ArgsDigest: c.argsDigest, Outcome: outcome, Bytes: bytes,
		// Lines about writes reach the sink before the gateway goes on;
		// reads may wait for the next batch.
		Sync: c.e.Write,
	}
	if event == audit.EventOutcome {
		rec.DurationMS = float64(r.deps.Now().Sub(c.start).Microseconds()) / 1000
		// For the audit's tap (the operator console) only; never written.
		rec.Args = c.canonical
	}
	return rec
}

// phase is what the call was, for the audit line.
func phase(c *call) string {
	switch {
	case !c.e.Write:
		return audit.PhaseRead
	case c.confirm:
		return audit.PhaseConfirm
	case strings.HasPrefix(c.ticket, "auto_"):
		return audit.PhaseApply
	}
	return audit.PhasePreview
}

// endpointPath is an endpoint as a client addresses it.
func endpointPath(endpoint string) string {
	if endpoint == "" {
		return "/mcp"
	}
	return "/mcp/" + endpoint
}

// finish records the call. A nil res is a result passed through (c.passed).
func (r *Router) finish(c *call, res *mcp.CallToolResult, outcome string) {
	n := c.passed.Text
	for _, ct := range resContent(res) {
		if t, ok := ct.(mcp.TextContent); ok {
			n += len(t.Text)
		}
	}
	r.deps.Audit.Log(r.record(c, audit.EventOutcome, outcome, n))
	d := c.decision.Decision
	if d == "" {
		d = "none"
	}
	r.deps.Metrics.ObserveCall(c.e.Service, c.e.Upstream.Name, d, outcome, r.deps.Now().Sub(c.start))
}

func resContent(res *mcp.CallToolResult) []mcp.Content {
	if res == nil {
		return nil
	}
	return res.Content
}

// policyFailure is the reason given for a call refused because the policy
// failed: an unreachable sidecar is temporary, so the client is told the
// call may work again later rather than that it is forbidden for good.
// policyFailureID is policyFailure's reason id.
func policyFailureID(err error) string {
	if errors.Is(err, policy.ErrUnavailable) {
		return policy.ReasonUnavailable
	}
	return policy.ReasonFailed
}

func policyFailure(err error) string {
	if errors.Is(err, policy.ErrUnavailable) {
		return "the policy service is unavailable, so every call is refused until it answers again; nothing was run"
	}
	return "the policy could not be evaluated"
}

// binding is what a ticket is bound to: this very call.
func (r *Router) binding(c *call) tickets.Binding {
	return tickets.Binding{
		Client: c.id.Client.Name, User: c.id.User, UserRole: c.id.UserRole, Service: c.e.Service,
		Tool: c.e.Upstream.Name, ArgsDigest: c.argsDigest, Force: c.force,
	}
}
