package router

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

func (r *Router) serve(ctx context.Context, c *call, req mcp.CallToolRequest) (*mcp.CallToolResult, string) {
	res, outcome := r.route(ctx, c, req)
	if res != nil {
		// clean keeps the preview digest and facts of a service's _meta
		// for the gateway's own checks; none of it leaves (a failed
		// preview or a read could carry them too).
		res.Meta = nil
	}
	return res, outcome
}

// route decides the call and runs it the way its decision says.
func (r *Router) route(ctx context.Context, c *call, req mcp.CallToolRequest) (*mcp.CallToolResult, string) {
	if err := r.parseArgs(c, req); err != nil {
		return errorResult(err), string(toolerr.CodeOf(err))
	}
	if fail := r.decide(ctx, c); fail != nil {
		return fail, "ticket_rejected"
	}
	d := c.decision
	// A write that may change something (allowed as it is, or confirmed
	// with a ticket) has its decision on record before the service is
	// touched. A preview or a refusal changes nothing: like a read's, its
	// line may wait, and goes out with its ticket and outcome lines in one
	// write before the answer leaves.
	if c.e.Write {
		rec := r.record(c, audit.EventDecision, "", 0)
		rec.Sync = d.Decision == policy.Allow || c.ticket != ""
		r.deps.Audit.Log(rec)
	}

	switch {
	case d.Decision == policy.Deny:
		return errorResult(toolerr.New(toolerr.Forbidden, "denied by policy: %s", d.Reason)), "denied"
	case !c.e.Write && d.Decision == policy.Allow:
		if rc, ok := r.backends[c.e.Service].(rawCaller); ok && c.direct {
			return r.forwardRaw(ctx, c, rc)
		}
		return r.forward(ctx, c, nil, true)
	case !c.e.Write:
		// The policy asked for confirmation of a read; reads have no
		// preview, so there is nothing a user could consent to.
		return errorResult(toolerr.New(toolerr.Forbidden, "policy requires confirmation for a read tool, which is not supported: %s", d.Reason)), "denied"
	case d.Decision == policy.Allow && c.ticket == "":
		// A low-risk write the policy allows without a ticket. The service
		// still applies only a scope it previewed, so preview first.
		return r.applyWithoutTicket(ctx, c)
	case c.ticket == "":
		if c.confirm {
			return errorResult(toolerr.New(toolerr.InvalidArgument,
				"confirm: true needs the ticket from the preview; call without confirm first to get a preview and a ticket")), string(toolerr.InvalidArgument)
		}
		return r.preview(ctx, c)
	default:
		return r.confirmTicket(ctx, c)
	}
}
