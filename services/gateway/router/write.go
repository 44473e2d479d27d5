package router

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// The write flow: a write without a ticket is previewed and gets one
// (preview, issue), or is applied at once when the policy allows it
// outright (applyWithoutTicket); a confirm redeems its ticket
// (confirmTicket); either way the service gets a signed approval (apply).

// preview asks the service what the write would do and issues a ticket.
func (r *Router) preview(ctx context.Context, c *call) (*mcp.CallToolResult, string) {
	p, fail, outcome := r.previewed(ctx, c)
	if fail != nil {
		return fail, outcome
	}
	if denied := r.reconsider(ctx, c, p.facts); denied != nil {
		return denied, "denied"
	}
	return r.issue(c, p)
}

// reconsider asks the policy again now that the preview has run, with the
// facts it reported (or none), and keeps the stricter of the two decisions:
// facts can raise the approval a write needs, never lower it. It returns
// the failure to answer when the write is now denied.
func (r *Router) reconsider(ctx context.Context, c *call, facts approval.Facts) *mcp.CallToolResult {
	in := c.e.Input(c.id, policy.ActionCall, c.args, policy.Ticket{State: "none", Force: c.force}, r.deps.Now(), r.cfg.Transport)
	in.Preview = &policy.Preview{Facts: facts}
	d, err := r.deps.Policy.Decide(ctx, in)
	if err == nil {
		err = policy.Validate(d)
	}
	if err != nil {
		r.log.Error("policy failed; denying", "error", err)
		d = policy.Decision{Decision: policy.Deny, Approval: approval.Model, Reason: policyFailure(err), ReasonID: policyFailureID(err)}
	}
	if final := policy.Stricter(c.decision, d); final != c.decision {
		c.decision = final
		r.deps.Audit.Log(r.record(c, audit.EventDecision, "preview_facts", 0))
	}
	if c.decision.Decision == policy.Deny {
		return errorResult(toolerr.New(toolerr.Forbidden, "denied by policy: %s", c.decision.Reason))
	}
	return nil
}

// issue stores a ticket for a checked preview and answers with it.
func (r *Router) issue(c *call, p previewResult) (*mcp.CallToolResult, string) {
	kind := c.decision.Approval
	if kind != approval.Human {
		kind = approval.Model
	}
	ttl := time.Duration(c.decision.TTLSeconds) * time.Second
	opts := []tickets.IssueOption{tickets.WithReason(c.decision.Reason)}
	if p.facts != nil {
		raw, err := json.Marshal(p.facts)
		if err != nil {
			return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not keep the preview facts")), string(toolerr.Internal)
		}
		opts = append(opts, tickets.WithFacts(raw))
	}
	t, err := r.deps.Tickets.Issue(r.binding(c), p.digest, kind, ttl, p.body, opts...)
	if err != nil {
		return errorResult(toolerr.Wrap(toolerr.Busy, err, "too many open tickets; try again later")), string(toolerr.Busy)
	}
	c.ticket = t.ID
	r.deps.Metrics.Ticket("issued")
	rec := r.record(c, audit.EventTicket, "issued", 0)
	rec.Approval = kind
	// The call's outcome line follows before the answer leaves and takes
	// this one with it in one write. A ticket that waits for a person is
	// on record before anyone is told of it.
	rec.Sync = kind == approval.Human
	r.deps.Audit.Log(rec)
	if kind == approval.Human {
		r.deps.Metrics.Ticket("pending")
		if r.deps.OnPending != nil {
			r.deps.OnPending(t)
		}
	}
	body := map[string]any{
		"status":     "confirmation_required",
		"tool":       c.e.Offered.Name,
		"ticket":     t.ID,
		"expires_at": t.Expires.UTC().Format(time.RFC3339),
		"approval":   kind,
		"reason":     c.decision.Reason,
		"preview":    p.body,
		"next":       nextStep(c.e.Offered.Name, t.ID, kind, c.via),
	}
	if p.facts != nil {
		body["facts"] = p.facts
	}
	return success(body), "preview"
}

func nextStep(tool, ticket string, kind approval.Kind, via string) string {
	again := "call " + tool + " again with exactly the same arguments"
	if via != "" {
		again = fmt.Sprintf("call %s again with name %q and exactly the same arguments", via, tool)
	}
	s := fmt.Sprintf("Nothing has changed yet. Show this preview to the user and ask for explicit consent. "+
		"Only if the user agrees, %s plus \"confirm\": true and \"ticket\": %q.", again, ticket)
	if kind == approval.Human {
		s += fmt.Sprintf(" This write also needs a person's approval outside this chat "+
			"(the gateway's approval page, or `gateway approvals approve %s`); a confirm from the assistant alone is not consent.", ticket)
	}
	return s
}

func (r *Router) applyWithoutTicket(ctx context.Context, c *call) (*mcp.CallToolResult, string) {
	p, fail, outcome := r.previewed(ctx, c)
	if fail != nil {
		return fail, outcome
	}
	if denied := r.reconsider(ctx, c, p.facts); denied != nil {
		return denied, "denied"
	}
	if c.decision.Decision != policy.Allow {
		// The preview showed more than a low-risk write (a lock behind a
		// "turn on"): it needs a ticket like any other write.
		return r.issue(c, p)
	}
	c.ticket = "auto_" + randomID()
	return r.apply(ctx, c, p.digest, r.deps.Now().Add(time.Minute))
}

// confirmTicket redeems the ticket and applies the write.
func (r *Router) confirmTicket(ctx context.Context, c *call) (*mcp.CallToolResult, string) {
	// A ticket issued for the model's consent cannot carry a write the
	// policy now wants a person for (data changed since the preview).
	if c.presented != nil && c.decision.Approval == approval.Human && c.presented.Approval != approval.Human {
		r.deps.Metrics.Ticket("rejected")
		return errorResult(toolerr.New(toolerr.Forbidden,
			"the policy now requires a person's approval for this write; nothing was changed — call without confirm for a new preview")), "ticket_rejected"
	}
	t, err := r.deps.Tickets.Redeem(c.ticket, r.binding(c))
	switch {
	case err == nil:
	case errors.Is(err, tickets.ErrPending):
		r.deps.Metrics.Ticket("pending")
		return success(map[string]any{
			"status":  "pending",
			"ticket":  c.ticket,
			"applied": false,
			"message": "Nothing was changed. This ticket waits for a person's approval outside this chat; confirm again after it was approved.",
		}), "pending"
	case errors.Is(err, tickets.ErrExpired):
		r.deps.Metrics.Ticket("expired")
		return errorResult(toolerr.New(toolerr.Forbidden, "the ticket has expired; nothing was changed — call without confirm for a new preview")), "ticket_expired"
	default:
		r.deps.Metrics.Ticket("rejected")
		return errorResult(toolerr.New(toolerr.Forbidden, "ticket refused: %s; nothing was changed — %s", err, ticketHint(err))), "ticket_rejected"
	}
	r.deps.Metrics.Ticket("confirmed")
	return r.apply(ctx, c, t.PreviewDigest, t.Expires)
}

func ticketHint(err error) string {
	switch {
	case errors.Is(err, tickets.ErrMismatch):
		return "a ticket only confirms the exact call it was issued for (same client, user, tool, arguments and force)"
	case errors.Is(err, tickets.ErrUsed):
		return "a ticket confirms one call only"
	case errors.Is(err, tickets.ErrDenied):
		return "a person denied this write"
	default:
		return "call without confirm for a new preview"
	}
}

// apply signs an approval for the service, bound to the call's ticket,
// and forwards the call.
func (r *Router) apply(ctx context.Context, c *call, previewDigest string, expires time.Time) (*mcp.CallToolResult, string) {
	// The approval lives just long enough for this call.
	if limit := r.deps.Now().Add(r.cfg.CallTimeout + 30*time.Second); expires.After(limit) {
		expires = limit
	}
	token, err := r.deps.Signer.Sign(approval.Approval{
		Service: c.e.Service, Tool: c.e.Upstream.Name, ArgsDigest: c.argsDigest,
		PreviewDigest: previewDigest, TicketID: c.ticket, Force: c.force, Expires: expires.Unix(),
	})
	if err != nil {
		return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not sign the approval")), string(toolerr.Internal)
	}
	return r.forward(ctx, c, map[string]any{approval.MetaApproval: token}, false)
}

func randomID() string {
	var b [15]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}
