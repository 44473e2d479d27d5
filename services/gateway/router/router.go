// Package router runs the gateway's tool calls: the MCP front (front.go,
// direct.go) and the other fronts' entry points (api.go, discovery.go)
// hand every call to the one admission step (admission.go), which runs it
// (route.go): the policy's decision (call.go), a read forwarded
// (forward.go), a write previewed, ticketed, confirmed and approved
// (write.go, preview.go). Read the files in that order.
package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/sessions"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// Backend is one tool service.
type Backend interface {
	Name() string
	ListTools(ctx context.Context) ([]mcp.Tool, error)
	Call(ctx context.Context, tool string, args any, meta map[string]any, retry bool) (*mcp.CallToolResult, error)
}

// Auditor records decisions and outcomes.
type Auditor interface{ Log(audit.Record) }

// Metrics counts calls and tickets.
type Metrics interface {
	ObserveCall(service, tool, decision, outcome string, d time.Duration)
	Ticket(event string)
	ServiceUp(service string, up bool)
}

// Config holds the router's limits.
type Config struct {
	// CallTimeout is the deadline of one forwarded call.
	CallTimeout time.Duration
	// MaxResultBytes caps one result.
	MaxResultBytes int
	// Instructions are sent to clients at initialize.
	Instructions string
	// Transport is reported to the policy ("http").
	Transport string
	// Toolsets are endpoints offering part of one service's tools.
	Toolsets []catalog.Toolset
}

// Deps are the router's collaborators.
type Deps struct {
	Policy   policy.Engine
	Tickets  *tickets.Store
	Pins     *pins.Store
	Signer   *approval.Signer
	Audit    Auditor
	Metrics  Metrics
	Logger   *slog.Logger
	Now      func() time.Time
	Backends []Backend
	// OnPending, when set, is told of every ticket that starts waiting for
	// a person (notifications); it must not block.
	OnPending func(tickets.Ticket)
	// Sessions bounds the MCP sessions of clients; nil means the defaults.
	Sessions *sessions.Store
}

// Router is the MCP front of the gateway.
type Router struct {
	cfg  Config
	deps Deps
	log  *slog.Logger
	cat  *catalog.Catalog

	backends  map[string]Backend
	aggregate *server.MCPServer
	single    map[string]*server.MCPServer
	sets      map[string]*server.MCPServer // by toolset name
	handlers  map[string]http.Handler      // "" is the aggregate
}

// DiscoveryEndpoint is the endpoint of the discovery tools (discovery.go).
const DiscoveryEndpoint = catalog.DiscoveryEndpoint

// New builds the router. Tools appear after a refresh of its catalog.
func New(cfg Config, deps Deps) (*Router, error) {
	if deps.Policy == nil || deps.Tickets == nil || deps.Pins == nil || deps.Signer == nil {
		return nil, errors.New("router: policy, tickets, pins and signer are required")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 90 * time.Second
	}
	if cfg.MaxResultBytes <= 0 {
		cfg.MaxResultBytes = 512 << 10
	}
	if cfg.Transport == "" {
		cfg.Transport = "http"
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Sessions == nil {
		deps.Sessions = sessions.New(sessions.Config{Now: deps.Now})
	}
	if deps.Audit == nil {
		deps.Audit = audit.Discard()
	}
	if deps.Metrics == nil {
		deps.Metrics = noMetrics{}
	}
	r := &Router{
		cfg: cfg, deps: deps, log: deps.Logger,
		backends: map[string]Backend{}, single: map[string]*server.MCPServer{}, sets: map[string]*server.MCPServer{},
		handlers: map[string]http.Handler{},
	}
	listed := make([]catalog.Backend, 0, len(deps.Backends))
	for _, b := range deps.Backends {
		r.backends[b.Name()] = b
		listed = append(listed, b)
	}
	cat, err := catalog.New(catalog.Config{
		Backends: listed, Toolsets: cfg.Toolsets, Pins: deps.Pins, Policy: deps.Policy,
		Transport: cfg.Transport, Logger: deps.Logger, Now: deps.Now,
		ServiceUp: deps.Metrics.ServiceUp, Changed: r.install, Tick: r.prune,
	})
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	r.cat = cat
	names := cat.Services()
	r.aggregate = r.newServer("toolgate", names...)
	r.handlers[""] = r.streamable("", r.aggregate)
	for _, n := range names {
		s := r.newServer("toolgate-"+n, n)
		r.single[n] = s
		r.handlers[n] = r.streamable(n, s)
	}
	for _, ts := range cfg.Toolsets {
		s := r.newServer("toolgate-"+ts.Name, ts.Service)
		r.sets[ts.Name] = s
		r.handlers[ts.Name] = r.streamable(ts.Name, s)
	}
	discovery, err := r.newDiscovery()
	if err != nil {
		return nil, fmt.Errorf("router: discovery tools: %w", err)
	}
	r.handlers[DiscoveryEndpoint] = r.streamable(DiscoveryEndpoint, discovery)
	return r, nil
}

// The catalog's loop and refreshes, for the gateway's wiring and tests.

// Run refreshes the catalog now and then every interval until ctx ends.
func (r *Router) Run(ctx context.Context, every time.Duration) { r.cat.Run(ctx, every) }

// RefreshAll reads every service's tools again.
func (r *Router) RefreshAll(ctx context.Context) { r.cat.RefreshAll(ctx) }

// Refresh reads one service's tools again.
func (r *Router) Refresh(ctx context.Context, service string) error {
	return r.cat.Refresh(ctx, service)
}

// Loaded is closed once every service has been asked for its tools.
func (r *Router) Loaded() <-chan struct{} { return r.cat.Loaded() }

// Endpoints lists the single-purpose endpoints (/mcp/<name>,
// /openapi/<name>): every service and toolset, sorted.
func (r *Router) Endpoints() []string { return r.cat.Endpoints() }

// prune drops what expired: tickets and sessions.
func (r *Router) prune() {
	for range r.deps.Tickets.Prune() {
		r.deps.Metrics.Ticket("expired")
	}
	r.deps.Sessions.Prune()
}

type noMetrics struct{}

func (noMetrics) ObserveCall(string, string, string, string, time.Duration) {}
func (noMetrics) Ticket(string)                                             {}
func (noMetrics) ServiceUp(string, bool)                                    {}

// errorResult is an isError result with a stable code, shaped like every
// service's failures.
func errorResult(err error) *mcp.CallToolResult { return toolkit.Failure(err) }
