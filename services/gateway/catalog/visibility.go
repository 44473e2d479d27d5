package catalog

import (
	"context"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// Visible returns the tools the caller in ctx may see (policy action
// "list"), for every list and the admission step. Answers are cached for
// visibilityTTL: a stale one only shows or hides a tool, every call is
// still decided on its own. calling names the tool a call is being
// admitted for: while the policy fails it stays visible, so the call is
// refused saying why rather than "tool not found".
func (c *Catalog) Visible(ctx context.Context, tools []mcp.Tool, calling string) []mcp.Tool {
	id, ok := auth.IdentityFrom(ctx)
	if !ok {
		return nil
	}
	now := c.cfg.Now()
	out := tools[:0:0]
	for _, t := range tools {
		e := c.Lookup(t.Name)
		if e == nil {
			continue
		}
		// The service is part of the key: a tool name can move to another
		// service (a restarted one without it, a neighbour offering it).
		key := visibilityKey{client: id.Client.Name, groups: strings.Join(id.Client.Groups, ","), user: id.User, role: id.UserRole, service: e.Service, tool: t.Name}
		if v, ok := c.shown.Load(key); ok && now.Before(v.(visibility).until) {
			if v.(visibility).shown {
				out = append(out, t)
			}
			continue
		}
		in := e.Input(id, policy.ActionList, nil, policy.Ticket{State: "none"}, now, c.cfg.Transport)
		d, err := c.cfg.Policy.Decide(ctx, in)
		failed := err != nil || policy.Validate(d) != nil
		if failed && calling == t.Name {
			out = append(out, t)
			continue
		}
		shown := !failed && d.Decision != policy.Deny
		if err == nil {
			if c.shownEntries.Add(1) > maxVisibilityEntries {
				c.shown.Clear()
				c.shownEntries.Store(0)
			}
			c.shown.Store(key, visibility{shown: shown, until: now.Add(visibilityTTL)})
		}
		if shown {
			out = append(out, t)
		}
	}
	return out
}

// MayList reports whether the caller in ctx may see any tool of service.
func (c *Catalog) MayList(ctx context.Context, service string) bool {
	// One at a time: a service the caller may use usually shows its first
	// tool, which costs one (cached) decision.
	for _, t := range c.Tools([]string{service}, nil) {
		if len(c.Visible(ctx, []mcp.Tool{t.Offered}, "")) > 0 {
			return true
		}
	}
	return false
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
