// Package catalog is what the gateway offers: every service's tools as
// clients see them (pinned, uniquely named, writes with the confirm
// arguments), the endpoints that offer them (the aggregate, each service,
// each toolset) and which of them a caller may see (the policy's "list"
// decision).
package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// Backend is a tool service as the catalog reads it.
type Backend interface {
	Name() string
	ListTools(ctx context.Context) ([]mcp.Tool, error)
}

// Tool is one tool as the gateway offers it.
type Tool struct {
	Service string
	// Upstream is the definition the service gave; Offered the one clients
	// see (for a write with the confirm and ticket arguments, never with
	// the service's _meta).
	Upstream, Offered mcp.Tool
	// Write: the tool goes through preview → ticket → confirm.
	Write       bool
	Annotations policy.Annotations
}

// Input is the policy's input about a call or list of t by the caller id.
func (t *Tool) Input(id auth.Identity, action string, args map[string]any, ticket policy.Ticket, now time.Time, transport string) policy.Input {
	if args == nil {
		args = map[string]any{}
	}
	return policy.Input{
		Action:      action,
		Client:      policy.Client{Name: id.Client.Name, Groups: id.Client.Groups},
		User:        id.User,
		UserRole:    id.UserRole,
		Service:     t.Service,
		Tool:        t.Upstream.Name,
		Write:       t.Write,
		Annotations: t.Annotations,
		Args:        args,
		Ticket:      ticket,
		Time:        now.UTC(),
		Transport:   transport,
	}
}

// The arguments the gateway adds to a write tool for its confirm.
const (
	ArgConfirm = "confirm"
	ArgTicket  = "ticket"
)

// Config holds the catalog's collaborators.
type Config struct {
	Backends []Backend
	// Toolsets are endpoints offering part of one service's tools.
	Toolsets []Toolset
	Pins     *pins.Store
	// Policy decides what a caller may see (action "list").
	Policy policy.Engine
	// Transport is reported to the policy ("http").
	Transport string
	Logger    *slog.Logger
	Now       func() time.Time
	// ServiceUp is told after each refresh whether the service answered.
	ServiceUp func(service string, up bool)
	// Changed is told of a service's tools each time they change: the
	// tools it offers now and the names it no longer offers.
	Changed func(service string, tools []*Tool, gone []string)
	// Tick runs with every periodic refresh (pruning what expired).
	Tick func()
}

// Catalog is the gateway's list of tools.
type Catalog struct {
	cfg      Config
	log      *slog.Logger
	backends map[string]Backend
	names    []string // services, sorted

	mu     sync.Mutex
	tools  map[string][]*Tool // by service
	byName map[string]*Tool   // by offered tool name
	instr  map[string]string  // by service: its accepted instructions
	// asked are the services asked for their tools since the start (under
	// mu); loaded is closed once every one was, answered or not. Until
	// then a client reconnecting after a gateway restart would see an
	// empty catalog or "tool not found".
	asked  map[string]bool
	loaded chan struct{}

	down sync.Map // service -> struct{}: unavailable at the last refresh
	// stale asks Run to read a service's tools again now (NoticeFailure).
	stale chan string

	shown        sync.Map // visibilityKey -> visibility
	shownEntries atomic.Int64
}

// New builds the catalog; tools appear after a refresh.
func New(cfg Config) (*Catalog, error) {
	if cfg.Pins == nil || cfg.Policy == nil {
		return nil, errors.New("catalog: pins and policy are required")
	}
	if cfg.Transport == "" {
		cfg.Transport = "http"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ServiceUp == nil {
		cfg.ServiceUp = func(string, bool) {}
	}
	if cfg.Changed == nil {
		cfg.Changed = func(string, []*Tool, []string) {}
	}
	if cfg.Tick == nil {
		cfg.Tick = func() {}
	}
	c := &Catalog{
		cfg: cfg, log: cfg.Logger, backends: map[string]Backend{},
		tools: map[string][]*Tool{}, byName: map[string]*Tool{}, instr: map[string]string{},
		asked: map[string]bool{}, loaded: make(chan struct{}), stale: make(chan string, 8),
	}
	for _, b := range cfg.Backends {
		if _, dup := c.backends[b.Name()]; dup {
			return nil, fmt.Errorf("service %s configured twice", b.Name())
		}
		c.backends[b.Name()] = b
		c.names = append(c.names, b.Name())
	}
	sort.Strings(c.names)
	if slices.Contains(c.names, DiscoveryEndpoint) {
		return nil, fmt.Errorf("a service may not be named %q (the discovery endpoint)", DiscoveryEndpoint)
	}
	if err := CheckToolsets(cfg.Toolsets, c.names); err != nil {
		return nil, err
	}
	if len(c.names) == 0 {
		close(c.loaded)
	}
	return c, nil
}

// Services lists the configured service names, sorted.
func (c *Catalog) Services() []string { return slices.Clone(c.names) }

// Toolsets are the configured toolsets.
func (c *Catalog) Toolsets() []Toolset { return c.cfg.Toolsets }

// Endpoints lists the names of the single-purpose endpoints
// (/mcp/<name>, /openapi/<name>): every service and toolset, sorted.
func (c *Catalog) Endpoints() []string {
	out := slices.Clone(c.names)
	for _, ts := range c.cfg.Toolsets {
		out = append(out, ts.Name)
	}
	slices.Sort(out)
	return out
}

// Endpoint returns whether name is a single-purpose endpoint, the
// services it draws on and which of their tools belong to it.
func (c *Catalog) Endpoint(name string) (services []string, member func(*Tool) bool, ok bool) {
	if _, ok := c.backends[name]; ok {
		return []string{name}, func(*Tool) bool { return true }, true
	}
	for _, ts := range c.cfg.Toolsets {
		if ts.Name == name {
			return []string{ts.Service}, func(t *Tool) bool { return ts.Has(t.Offered.Name) }, true
		}
	}
	return nil, nil, false
}

// Offers reports whether endpoint offers t: "" (the aggregate /mcp) and
// DiscoveryEndpoint offer every tool.
func (c *Catalog) Offers(endpoint string, t *Tool) bool {
	if endpoint == "" || endpoint == DiscoveryEndpoint {
		return true
	}
	services, member, ok := c.Endpoint(endpoint)
	return ok && len(services) == 1 && services[0] == t.Service && member(t)
}

// Tools returns the tools of services that member accepts (nil: all).
func (c *Catalog) Tools(services []string, member func(*Tool) bool) []*Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Tool
	for _, s := range services {
		for _, t := range c.tools[s] {
			if member == nil || member(t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Lookup returns the tool offered under name, or nil.
func (c *Catalog) Lookup(name string) *Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byName[name]
}
