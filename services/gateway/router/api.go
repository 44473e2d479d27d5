package router

import (
	"context"
	"encoding/json"
	"errors"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
)

// Listing and calling for fronts other than MCP (the OpenAPI tool server),
// through the catalog's visibility and the one admission step.

// OfferedTool is one tool as an endpoint offers it to a client.
type OfferedTool struct {
	// Def is the definition clients see: for writes with the gateway's
	// confirm and ticket arguments, without the service's _meta.
	Def mcp.Tool
	// Write says the tool goes through preview → ticket → confirm.
	Write bool
}

// VisibleTools returns the tools of an endpoint that the caller in ctx may
// see, sorted by name, exactly as tools/list on /mcp/<endpoint> shows them.
// ok is false when there is no such endpoint.
func (r *Router) VisibleTools(ctx context.Context, endpoint string) ([]OfferedTool, bool) {
	services, member, ok := r.cat.Endpoint(endpoint)
	if !ok {
		return nil, false
	}
	_ = r.cat.AwaitLoaded(ctx) // past the wait, the tools known so far
	all := r.cat.Tools(services, member)
	defs := make([]mcp.Tool, 0, len(all))
	write := make(map[string]bool, len(all))
	for _, e := range all {
		defs = append(defs, e.Offered)
		write[e.Offered.Name] = e.Write
	}
	shown := r.cat.Visible(ctx, defs, "")
	out := make([]OfferedTool, 0, len(shown))
	for _, t := range shown {
		out = append(out, OfferedTool{Def: t, Write: write[t.Name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Def.Name < out[j].Def.Name })
	return out, true
}

// CallTool runs one call of tool on endpoint with the JSON arguments args,
// as tools/call on /mcp/<endpoint> does: the one admission step (an
// unknown, foreign or hidden tool is ErrNoSuchTool), then the call. The
// result is what an MCP client would get.
func (r *Router) CallTool(ctx context.Context, endpoint, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if _, _, ok := r.cat.Endpoint(endpoint); !ok {
		return nil, ErrNoSuchTool
	}
	if err := r.cat.AwaitLoaded(ctx); err != nil {
		return nil, err
	}
	a := r.admit(ctx, endpoint, tool)
	switch {
	case errors.Is(a.err, ErrNoSuchTool):
		return nil, ErrNoSuchTool
	case a.c == nil:
		return refusal(a.err), nil
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.RawArguments = args
	return r.run(ctx, a.c, req), nil
}

// EndpointInstructions are the instructions an MCP client of
// /mcp/<endpoint> receives at initialize, for the caller in ctx.
func (r *Router) EndpointInstructions(ctx context.Context, endpoint string) string {
	services, _, ok := r.cat.Endpoint(endpoint)
	if !ok {
		return ""
	}
	return r.instructionsFor(ctx, services)
}
