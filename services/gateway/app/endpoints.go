package app

import (
	"context"
	"slices"

	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// endpointCatalog tells the admin API which endpoints show each client of the
// tokens file tools (install.sh prints only those). Its router and tokens
// are set once Build has made them, before anything is served.
type endpointCatalog struct {
	router   *router.Router
	tokens   auth.TokenSource
	toolsets []catalog.Toolset
}

func (c *endpointCatalog) Refresh(ctx context.Context) { c.router.RefreshAll(ctx) }

// offered are the endpoints a client is given: every service's own, but a
// service split into toolsets by its toolsets only (its own endpoint would
// cost a prompt more than an endpoint may).
func (c *endpointCatalog) offered() []string {
	split := map[string]bool{}
	for _, ts := range c.toolsets {
		split[ts.Service] = true
	}
	return slices.DeleteFunc(c.router.Endpoints(), func(ep string) bool { return split[ep] })
}

// ClientEndpoints asks the router's own listing (VisibleTools: the
// visibility filter and policy of tools/list) as each client, with no end
// user, as a client's set-up lists tools before anyone signs in.
func (c *endpointCatalog) ClientEndpoints(ctx context.Context) []admin.ClientEndpoints {
	offered := c.offered()
	var out []admin.ClientEndpoints
	for _, cl := range c.tokens.Current().Clients() {
		id := auth.Identity{Client: cl}
		if cl.UserMode == auth.UserJWT {
			id.UserMissing = "listing only"
		}
		asClient := auth.WithIdentity(ctx, id)
		ce := admin.ClientEndpoints{Client: cl.Name, Groups: cl.Groups, Endpoints: []admin.EndpointTools{}}
		for _, ep := range offered {
			if tools, ok := c.router.VisibleTools(asClient, ep); ok && len(tools) > 0 {
				ce.Endpoints = append(ce.Endpoints, admin.EndpointTools{Endpoint: ep, Tools: len(tools)})
			}
		}
		out = append(out, ce)
	}
	return out
}
