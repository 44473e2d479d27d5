package router

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// Explanation is what the gateway would do with one call by the caller in
// the context, decided by the steps a real call takes — the admission
// step, the arguments' reading, the policy's decision — without running
// it: no service is asked, no ticket issued, nothing recorded.
type Explanation struct {
	Tool    string `json:"tool"`
	Service string `json:"service,omitempty"`
	Write   bool   `json:"write"`
	// Refused is why the call would not get as far as the policy: an
	// admission reason id (unknown_tool, not_on_endpoint, not_visible,
	// no_end_user) or invalid_arguments; "" when the policy decides it.
	Refused string `json:"refused,omitempty"`
	// Code and Message are the error the caller would get when Refused.
	Code    toolerr.Code `json:"code,omitempty"`
	Message string       `json:"message,omitempty"`
	// Decision is the policy's answer on the call as sent.
	Decision *policy.Decision `json:"decision,omitempty"`
	// Person: a person would be asked to approve before it runs.
	Person bool `json:"person"`
	// FactsMayRaise: a write the policy would preview or allow; what its
	// preview reports (a lock behind a "turn on") may still raise the
	// approval it needs, never lower it.
	FactsMayRaise bool `json:"facts_may_raise"`
}

// Explain tells what a call of tool on endpoint with args would meet.
func (r *Router) Explain(ctx context.Context, endpoint, tool string, args json.RawMessage) Explanation {
	a, reason := r.judge(ctx, endpoint, tool)
	ex := Explanation{Tool: tool}
	if a.e != nil {
		ex.Service, ex.Tool, ex.Write = a.e.Service, a.e.Offered.Name, a.e.Write
	}
	if a.err != nil {
		ex.Refused, ex.Code, ex.Message = reason, toolerr.NotFound, "no such tool on this endpoint"
		if !errors.Is(a.err, ErrNoSuchTool) {
			ex.Code, ex.Message = toolerr.CodeOf(a.err), toolerr.MessageOf(a.err)
		}
		return ex
	}
	c := a.c
	req := mcp.CallToolRequest{}
	req.Params.RawArguments = args
	if err := r.parseArgs(c, req); err != nil {
		ex.Refused, ex.Code, ex.Message = "invalid_arguments", toolerr.CodeOf(err), toolerr.MessageOf(err)
		return ex
	}
	if fail := r.decide(ctx, c); fail != nil {
		ex.Refused, ex.Code, ex.Message = "ticket_unreadable", toolerr.Forbidden, "the ticket's preview facts are unreadable"
		return ex
	}
	d := c.decision
	ex.Decision = &d
	ex.Person = d.Decision == policy.Confirm && d.Approval == approval.Human
	ex.FactsMayRaise = c.e.Write && d.Decision != policy.Deny
	return ex
}
