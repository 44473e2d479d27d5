package router

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// The one admission step: every front (MCP through mcp-go or the direct
// path, discovery's toolgate_call_tool, OpenAPI, the stdio bridge as an
// MCP client) hands its tools/call to admit and runs only what it
// admitted, through run. A new front calls admit and gets a column in the
// differential test (app/fronts_test.go).

// Why admit refused a call: the audit line's reason, stable for log
// shippers. The client is told less: an unknown, a foreign and a hidden
// tool are one answer (ErrNoSuchTool).
const (
	refusedNoClient  = "no_client"
	refusedUnknown   = "unknown_tool"
	refusedElsewhere = "not_on_endpoint"
	refusedHidden    = "not_visible"
	refusedNoUser    = "no_end_user"
)

// admission is admit's verdict on one call of tool on endpoint: the call
// to run, or why not (ErrNoSuchTool, or a *toolerr.Error to answer as a
// tool failure).
type admission struct {
	endpoint, tool string
	e              *catalog.Tool // the tool called, if there is one
	c              *call         // the call to run; nil when refused
	err            error
}

// admit checks, in this order, that the caller in ctx is an authenticated
// client, that endpoint offers tool ("" is the aggregate /mcp,
// DiscoveryEndpoint every service), that the caller may see it (the tool
// filter's policy answer), and that a client that must name its end user
// did. A refusal is on the audit trail before admit returns.
func (r *Router) admit(ctx context.Context, endpoint, tool string) admission {
	a, reason := r.judge(ctx, endpoint, tool)
	if a.err != nil {
		r.refuse(ctx, a, reason)
	}
	return a
}

// judge is admit without the record: the verdict and, for a refusal, why
// (one of the refused… ids). Explain asks it too.
func (r *Router) judge(ctx context.Context, endpoint, tool string) (admission, string) {
	a := admission{endpoint: endpoint, tool: tool}
	id, ok := auth.IdentityFrom(ctx)
	if !ok {
		a.err = toolerr.New(toolerr.AuthFailed, "no authenticated client")
		return a, refusedNoClient
	}
	e := r.cat.Lookup(tool)
	a.e = e
	switch {
	case e == nil:
		a.err = ErrNoSuchTool
		return a, refusedUnknown
	case !r.cat.Offers(endpoint, e):
		a.err = ErrNoSuchTool
		return a, refusedElsewhere
	case len(r.cat.Visible(ctx, []mcp.Tool{e.Offered}, e.Offered.Name)) == 0:
		a.err = ErrNoSuchTool
		return a, refusedHidden
	case id.UserMissing != "":
		// A user=jwt client must say who asks before anything runs: every
		// rule that depends on the user's role would otherwise not apply.
		a.err = toolerr.New(toolerr.Forbidden, "%s", id.UserMissing)
		return a, refusedNoUser
	}
	a.c = &call{e: e, id: id, start: r.deps.Now(), endpoint: endpoint}
	return a, ""
}

// refuse records a refused call: one outcome line, and the call metric
// when the tool is known.
func (r *Router) refuse(ctx context.Context, a admission, reason string) {
	id, _ := auth.IdentityFrom(ctx)
	outcome := string(toolerr.NotFound)
	if !errors.Is(a.err, ErrNoSuchTool) {
		outcome = string(toolerr.CodeOf(a.err))
	}
	rec := audit.Record{
		Time: r.deps.Now().UTC(), Event: audit.EventOutcome, Client: id.Client.Name, User: id.User, UserRole: id.UserRole,
		Endpoint: endpointPath(a.endpoint), Tool: a.tool, Decision: policy.Deny, Reason: reason, ReasonID: reason, Outcome: outcome,
	}
	if a.e != nil {
		rec.Service, rec.Tool = a.e.Service, a.e.Upstream.Name
		if !a.e.Write {
			rec.Phase = audit.PhaseRead
		}
		r.deps.Metrics.ObserveCall(a.e.Service, a.e.Upstream.Name, policy.Deny, outcome, 0)
	}
	r.deps.Audit.Log(rec)
	r.log.Info("call refused", "client", id.Client.Name, "tool", rec.Tool, "reason", reason)
}

// refusal is the tool failure that answers a refused call on a front that
// words ErrNoSuchTool as a tool failure too.
func refusal(err error) *mcp.CallToolResult {
	if errors.Is(err, ErrNoSuchTool) {
		return errorResult(toolerr.New(toolerr.NotFound, "no such tool on this endpoint"))
	}
	return errorResult(err)
}

// run runs an admitted call: the policy's decision and whatever it says
// (route), then the audit line and metrics of its outcome.
func (r *Router) run(ctx context.Context, c *call, req mcp.CallToolRequest) *mcp.CallToolResult {
	res, outcome := r.serve(ctx, c, req)
	r.finish(c, res, outcome)
	return res
}

// admissionKey carries Handler's admission of a call to mcp-go's tool
// filter and the tool handler.
type admissionKey struct{}

func withAdmission(ctx context.Context, a admission) context.Context {
	return context.WithValue(ctx, admissionKey{}, &a)
}

// admitted returns the admission Handler made for a call of tool.
func admitted(ctx context.Context, tool string) (*admission, bool) {
	a, ok := ctx.Value(admissionKey{}).(*admission)
	return a, ok && a.tool == tool
}

// endpointKey carries the endpoint a request came in on to the tool
// handler, which mcp-go runs without knowing it.
type endpointKey struct{}

func withEndpoint(ctx context.Context, endpoint string) context.Context {
	return context.WithValue(ctx, endpointKey{}, endpoint)
}

// handleCall is the tool handler of every tool the MCP servers offer. The
// call was admitted when Handler read it; a call mcp-go read otherwise
// than the gateway (it should not) is admitted again, as mcp-go read it.
func (r *Router) handleCall(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, ok := admitted(ctx, req.Params.Name)
	if !ok {
		endpoint, onEndpoint := ctx.Value(endpointKey{}).(string)
		if !onEndpoint {
			return errorResult(toolerr.New(toolerr.Internal, "a call reached a tool handler without its endpoint")), nil
		}
		again := r.admit(ctx, endpoint, req.Params.Name)
		a = &again
	}
	if a.c == nil {
		return refusal(a.err), nil
	}
	return r.run(ctx, a.c, req), nil
}

// visible is the MCP servers' tool filter. mcp-go runs it for tools/list
// and again before every tools/call; a call Handler admitted (or refused)
// already must be answered as admit did, anything else as the catalog
// says.
func (r *Router) visible(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	a, ok := ctx.Value(admissionKey{}).(*admission)
	if !ok {
		return r.cat.Visible(ctx, tools, "")
	}
	out := tools[:0:0]
	for _, t := range tools {
		switch {
		case t.Name != a.tool:
			out = append(out, r.cat.Visible(ctx, []mcp.Tool{t}, "")...)
		case !errors.Is(a.err, ErrNoSuchTool):
			out = append(out, t)
		}
	}
	return out
}

// ErrNoSuchTool answers a call to a tool that the endpoint does not offer
// or that the caller may not see; the two are deliberately one error.
var ErrNoSuchTool = errors.New("no such tool on this endpoint")

// ErrLoading answers a call that waited too long for the catalog's first
// load.
var ErrLoading = catalog.ErrLoading
