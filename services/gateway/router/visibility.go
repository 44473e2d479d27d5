package router

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// visible hides tools the caller may not call (policy action "list").
// mcp-go runs this filter for tools/list and again before every tools/call,
// whose handler then asks the policy about the call itself; the answer is
// cached briefly so a call costs one policy evaluation, not two. A stale
// entry can only show or hide a tool for visibilityTTL: every call is
// still decided on its own.
func (r *Router) visible(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	id, ok := auth.IdentityFrom(ctx)
	if !ok {
		return nil
	}
	now := r.deps.Now()
	out := tools[:0:0]
	for _, t := range tools {
		if a, ok := admitted(ctx, t.Name); ok {
			// A call Handler admitted (or refused) already: mcp-go's filter
			// asks again before the call, and must answer as admit did.
			if !errors.Is(a.err, ErrNoSuchTool) {
				out = append(out, t)
			}
			continue
		}
		e := r.lookup(t.Name)
		if e == nil {
			continue
		}
		// The service is part of the key: a tool name can move to another
		// service (a restarted one without it, a neighbour offering it).
		key := visibilityKey{client: id.Client.Name, groups: strings.Join(id.Client.Groups, ","), user: id.User, role: id.UserRole, service: e.service, tool: t.Name}
		if v, ok := r.vis.Load(key); ok && now.Before(v.(visibility).until) {
			if v.(visibility).shown {
				out = append(out, t)
			}
			continue
		}
		in := r.input(id, e, policy.ActionList, nil, policy.Ticket{State: "none"})
		d, err := r.deps.Policy.Decide(ctx, in)
		failed := err != nil || policy.Validate(d) != nil
		if called, _ := ctx.Value(callKey{}).(string); failed && called == t.Name {
			// A call of this very tool while the policy fails: its handler
			// asks the policy again and refuses, saying why (fail closed).
			// Hiding it here would answer "tool not found", as if the tool
			// were gone; a list still hides everything.
			out = append(out, t)
			continue
		}
		shown := !failed && d.Decision != policy.Deny
		if err == nil {
			if r.visEntries.Add(1) > maxVisibilityEntries {
				r.vis.Clear()
				r.visEntries.Store(0)
			}
			r.vis.Store(key, visibility{shown: shown, until: now.Add(visibilityTTL)})
		}
		if shown {
			out = append(out, t)
		}
	}
	return out
}

// callKey marks a context as serving a call of the tool it names.
type callKey struct{}

// forCall marks ctx as serving a call of the tool called name.
func forCall(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, callKey{}, name)
}

// callable reports whether the caller in ctx may call e as far as
// visibility goes; the call itself is decided by its handler.
func (r *Router) callable(ctx context.Context, e *entry) bool {
	return len(r.visible(forCall(ctx, e.offered.Name), []mcp.Tool{e.offered})) > 0
}

const (
	visibilityTTL        = 10 * time.Second
	maxVisibilityEntries = 10_000
)

type visibilityKey struct{ client, groups, user, role, service, tool string }

type visibility struct {
	shown bool
	until time.Time
}
