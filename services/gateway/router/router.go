// Package router is the gateway's MCP front: it offers the tools of every
// service (at /mcp) or of one service (at /mcp/<service>), asks the policy
// about every list and call, runs the preview → ticket → confirm flow for
// writes, and forwards calls to the services.
package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
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
	Toolsets []Toolset
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

	backends  map[string]Backend
	names     []string
	aggregate *server.MCPServer
	single    map[string]*server.MCPServer
	sets      map[string]*server.MCPServer // by toolset name
	handlers  map[string]http.Handler      // "" is the aggregate

	mu     sync.Mutex
	tools  map[string][]*entry // by service
	byName map[string]*entry   // by offered tool name
	instr  map[string]string   // by service: its accepted instructions

	vis        sync.Map // visibilityKey -> visibility
	visEntries atomic.Int64

	down sync.Map // service -> struct{}: unavailable at the last refresh
	// stale asks Run to read a service's tools again now (noticeFailure).
	stale chan string

	// loaded is closed once every service has been asked for its tools at
	// least once (answered or not). Until then a client reconnecting after
	// a gateway restart would see an empty catalog or "tool not found".
	loaded chan struct{}
	tried  map[string]bool // under mu: services asked since the start
}

// entry is one tool as offered to clients.
type entry struct {
	service  string
	upstream mcp.Tool
	offered  mcp.Tool
	write    bool
	ann      policy.Annotations
}

// The arguments the gateway adds to a write tool for its confirm.
const (
	argConfirm = "confirm"
	argTicket  = "ticket"
)

// New builds the router. Tools appear after Refresh.
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
		tools:    map[string][]*entry{}, byName: map[string]*entry{},
		instr:  map[string]string{},
		loaded: make(chan struct{}), tried: map[string]bool{},
		stale: make(chan string, 8),
	}
	for _, b := range deps.Backends {
		if _, dup := r.backends[b.Name()]; dup {
			return nil, fmt.Errorf("router: service %s configured twice", b.Name())
		}
		r.backends[b.Name()] = b
		r.names = append(r.names, b.Name())
	}
	sort.Strings(r.names)
	if slices.Contains(r.names, DiscoveryEndpoint) {
		return nil, fmt.Errorf("router: a service may not be named %q (the discovery endpoint)", DiscoveryEndpoint)
	}
	if err := CheckToolsets(cfg.Toolsets, r.names); err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	r.aggregate = r.newServer("toolgate", r.names...)
	r.handlers[""] = r.streamable("", r.aggregate)
	for _, n := range r.names {
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
	if len(r.names) == 0 {
		close(r.loaded)
	}
	return r, nil
}

// Services lists the configured service names.
func (r *Router) Services() []string { return slices.Clone(r.names) }

func (r *Router) input(id auth.Identity, e *entry, action string, args map[string]any, t policy.Ticket) policy.Input {
	if args == nil {
		args = map[string]any{}
	}
	return policy.Input{
		Action:      action,
		Client:      policy.Client{Name: id.Client.Name, Groups: id.Client.Groups},
		User:        id.User,
		UserRole:    id.UserRole,
		Service:     e.service,
		Tool:        e.upstream.Name,
		Write:       e.write,
		Annotations: e.ann,
		Args:        args,
		Ticket:      t,
		Time:        r.deps.Now().UTC(),
		Transport:   r.cfg.Transport,
	}
}

type noMetrics struct{}

func (noMetrics) ObserveCall(string, string, string, string, time.Duration) {}
func (noMetrics) Ticket(string)                                             {}
func (noMetrics) ServiceUp(string, bool)                                    {}

// errorResult is an isError result with a stable code, shaped like every
// service's failures.
func errorResult(err error) *mcp.CallToolResult { return toolkit.Failure(err) }
