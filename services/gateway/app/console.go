package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/console"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// tapSize is how many audit lines may wait for the console; a burst
// beyond it only loses lines in the console's window, never on disk.
const tapSize = 1024

// buildConsole puts the operator console on the admin listener, beside
// the approval page and behind its sign-in.
func (g *Gateway) buildConsole(cfg Config, o Options) error {
	var targets []console.Target
	known := [][]byte{cfg.AdminToken, cfg.ApprovalKey}
	for _, s := range cfg.Services {
		u, err := console.ReadyURL(s.URL)
		if err != nil {
			return fmt.Errorf("gateway: console: service %s: %w", s.Name, err)
		}
		targets = append(targets, console.Target{Service: s.Name, ReadyURL: u})
		known = append(known, s.Token)
	}
	c, err := console.New(console.Deps{
		Window: g.Window, Guard: g.Page, Tickets: g.Tickets, Pins: g.Pins, PinEvents: g.events,
		Explainer: g.explainer, Clients: g.explainer.clients, Targets: targets,
		// The arguments an operator opens are redacted like any result,
		// the gateway's own secrets included.
		Redactor: redact.New(known...), Now: o.Now, Logger: o.Logger,
	})
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	g.Console = c
	g.adminMux.Handle(console.Prefix, c)
	return nil
}

// explainer answers `policy explain` and the console's questions: the
// identity the client and end user would have, asked of the router's
// Explain, which runs the admission step and policy decision of a real
// call. It is built before the router and completed after it.
type explainer struct {
	state atomic.Pointer[explainerState]
}

type explainerState struct {
	router *router.Router
	authn  *auth.Authenticator
	// tokens are the clients the gateway accepts now.
	tokens func() *auth.Tokens
}

func (x *explainer) set(r *router.Router, a *auth.Authenticator, tokens func() *auth.Tokens) {
	x.state.Store(&explainerState{router: r, authn: a, tokens: tokens})
}

// clients are the clients of the tokens file, for the console's form.
func (x *explainer) clients() []auth.Client {
	st := x.state.Load()
	if st == nil {
		return nil
	}
	return st.tokens().Clients()
}

func (x *explainer) Explain(ctx context.Context, q admin.Question) (router.Explanation, error) {
	st := x.state.Load()
	if st == nil {
		return router.Explanation{}, toolerr.New(toolerr.UpstreamUnavailable, "the gateway is still starting")
	}
	clients := st.tokens().Clients()
	i := slices.IndexFunc(clients, func(c auth.Client) bool { return c.Name == q.Client })
	if i < 0 {
		return router.Explanation{}, toolerr.New(toolerr.NotFound, "no client named %q in the tokens file", q.Client)
	}
	id, err := st.authn.Assume(clients[i], q.User, q.Role)
	if err != nil {
		return router.Explanation{}, toolerr.New(toolerr.InvalidArgument, "%s", err.Error())
	}
	endpoint, err := endpointName(q.Endpoint, st.router.Endpoints())
	if err != nil {
		return router.Explanation{}, err
	}
	if len(q.Tool) == 0 || len(q.Tool) > 256 {
		return router.Explanation{}, toolerr.New(toolerr.InvalidArgument, "name the tool (at most 256 bytes)")
	}
	args := q.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return st.router.Explain(auth.WithIdentity(ctx, id), endpoint, q.Tool, args), nil
}

// endpointName turns "/mcp", "/mcp/NAME" or "NAME" into the router's
// endpoint name ("" for the aggregate).
func endpointName(path string, names []string) (string, error) {
	p := strings.TrimSuffix(strings.TrimSpace(path), "/")
	if p == "" || p == "/mcp" {
		return "", nil
	}
	name := strings.TrimPrefix(strings.TrimPrefix(p, "/mcp/"), "/")
	if name == router.DiscoveryEndpoint || slices.Contains(names, name) {
		return name, nil
	}
	return "", toolerr.New(toolerr.NotFound, "no endpoint %q: the gateway serves /mcp, /mcp/%s and /mcp/<service or toolset>", path, router.DiscoveryEndpoint)
}
