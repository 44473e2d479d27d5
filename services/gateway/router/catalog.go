package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/truncate"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

func (r *Router) lookup(tool string) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byName[tool]
}

// Run refreshes every service now and then periodically until ctx ends. A
// service that was down is asked again sooner, after 1 s, 2 s, 4 s … up to
// every: services start beside the gateway, and one that was not listening
// yet at the first refresh must not be missing from the catalog for a
// whole interval.
func (r *Router) Run(ctx context.Context, every time.Duration) {
	r.RefreshAll(ctx)
	tick := time.NewTicker(every)
	defer tick.Stop()
	wait := firstRetry
	retry := time.NewTimer(wait)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.RefreshAll(ctx)
			if n := r.deps.Tickets.Prune(); n > 0 {
				for range n {
					r.deps.Metrics.Ticket("expired")
				}
			}
			r.deps.Sessions.Prune()
		case service := <-r.stale:
			r.refresh(ctx, []string{service})
		case <-retry.C:
			if down := r.downServices(); len(down) > 0 {
				r.refresh(ctx, down)
				wait = min(2*wait, every)
			} else {
				wait = firstRetry
			}
			retry.Reset(wait)
		}
	}
}

// noticeFailure reads a failed call for news about the catalog: a service
// that is not running, or that no longer has the tool, has its tools read
// again now (by Run) instead of at the next tick, so lists stop offering
// what is gone.
func (r *Router) noticeFailure(service string, err error) {
	if !serviceGone(err) && !toolGone(err) {
		return
	}
	select {
	case r.stale <- service:
	default: // a refresh is already asked for
	}
}

// serviceGone and toolGone read the backend's failures (backend/gone.go).
func serviceGone(err error) bool {
	var g interface{ ServiceGone() bool }
	return errors.As(err, &g) && g.ServiceGone()
}

func toolGone(err error) bool {
	var g interface{ ToolGone() bool }
	return errors.As(err, &g) && g.ToolGone()
}

// firstRetry is how soon a service that was down is asked again.
const firstRetry = time.Second

// downServices lists the services that were down at their last refresh.
func (r *Router) downServices() []string {
	var out []string
	for _, n := range r.names {
		if _, down := r.down.Load(n); down {
			out = append(out, n)
		}
	}
	return out
}

// RefreshAll refreshes every service's tool list concurrently.
func (r *Router) RefreshAll(ctx context.Context) { r.refresh(ctx, r.names) }

// refresh refreshes the named services' tool lists concurrently.
func (r *Router) refresh(ctx context.Context, names []string) {
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			err := r.Refresh(ctx, n)
			switch _, wasDown := r.down.Load(n); {
			case err != nil && !wasDown:
				// Once per outage: a service whose profile is off is
				// simply absent, and must not flood the log every minute.
				r.down.Store(n, struct{}{})
				r.log.Warn("service unavailable", "service", n, "error", err)
			case err != nil:
				r.log.Debug("service still unavailable", "service", n, "error", err)
			case wasDown:
				r.down.Delete(n)
				r.log.Info("service available again", "service", n)
			}
		})
	}
	wg.Wait()
}

// Refresh reloads one service's tools. A service that cannot be reached
// keeps its last known tools (calls to them fail with a clear error).
func (r *Router) Refresh(ctx context.Context, service string) error {
	b, ok := r.backends[service]
	if !ok {
		return fmt.Errorf("unknown service %s", service)
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	list, err := b.ListTools(ctx)
	r.deps.Metrics.ServiceUp(service, err == nil)
	if err != nil {
		if serviceGone(err) {
			// Not restarting or slow: not running at all (a profile
			// switched off). Its tools leave every list until it runs
			// again; calls answer that it is not running.
			r.install(service, nil)
		}
		r.tried1(service)
		return err
	}
	var entries []*entry
	for _, t := range list {
		e, err := r.offer(service, t)
		if err != nil {
			r.log.Warn("tool withheld", "service", service, "tool", truncate.String(t.Name, 128), "reason", err.Error())
			continue
		}
		entries = append(entries, e)
	}
	r.install(service, entries)
	r.pinInstructions(service, b)
	r.tried1(service)
	return nil
}

// refreshTimeout bounds one service's tools/list; the first load waits at
// most a little longer than this.
const refreshTimeout = 15 * time.Second

// tried1 records that service has been asked for its tools, and opens the
// gateway to clients once every service has been.
func (r *Router) tried1(service string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tried[service] {
		return
	}
	r.tried[service] = true
	if len(r.tried) == len(r.names) {
		close(r.loaded)
	}
}

// Loaded is closed once every service has been asked for its tools.
func (r *Router) Loaded() <-chan struct{} { return r.loaded }

// awaitLoaded waits until the first catalog load has finished, so the first
// request after a start sees the services' tools, not an empty catalog. A
// service that does not answer only delays it by refreshTimeout.
func (r *Router) awaitLoaded(ctx context.Context) error {
	select {
	case <-r.loaded:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout+5*time.Second)
	defer cancel()
	select {
	case <-r.loaded:
		return nil
	case <-ctx.Done():
		return ErrLoading
	}
}

// ErrLoading answers a request that waited too long for the first load.
var ErrLoading = errors.New("the gateway is still loading its services' tools; retry in a few seconds")

var (
	errWithheld = errors.New("definition changed since it was pinned; review it with `gateway pins show` and accept its hash with `gateway pins accept`")
	errToolName = errors.New("tool name is not 1 to 128 letters, digits, '_', '-' or '.'")
)

// toolName is what MCP allows as a tool name; it also keeps tool names
// apart from pins.Instructions.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func (r *Router) offer(service string, t mcp.Tool) (*entry, error) {
	if !toolName.MatchString(t.Name) {
		return nil, errToolName
	}
	def, hash, err := pins.Definition(t)
	if err != nil {
		return nil, err
	}
	ok, err := r.deps.Pins.Check(service, t.Name, hash, def)
	if err != nil {
		r.log.Error("could not save pins", "error", err)
	}
	if !ok {
		return nil, errWithheld
	}
	e := &entry{service: service, upstream: t, write: isWrite(t), ann: annotations(t)}
	e.offered = t
	if e.write {
		offered, err := withConfirmArgs(t)
		if err != nil {
			return nil, err
		}
		e.offered = offered
	}
	// The service's _meta is for the gateway, not for clients.
	e.offered.Meta = nil
	return e, nil
}

// isWrite is conservative: a tool is a write unless it says it only reads
// and does not declare itself a write.
func isWrite(t mcp.Tool) bool {
	if t.Meta != nil {
		if w, ok := t.Meta.AdditionalFields[approval.MetaWrite].(bool); ok && w {
			return true
		}
	}
	ro := t.Annotations.ReadOnlyHint
	return ro == nil || !*ro
}

func annotations(t mcp.Tool) policy.Annotations {
	b := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	a := t.Annotations
	return policy.Annotations{
		ReadOnly:    b(a.ReadOnlyHint, false),
		Destructive: b(a.DestructiveHint, true),
		Idempotent:  b(a.IdempotentHint, false),
		OpenWorld:   b(a.OpenWorldHint, true),
	}
}

// withConfirmArgs adds the gateway's confirm and ticket arguments to a write
// tool's schema and explains the flow in its description.
func withConfirmArgs(t mcp.Tool) (mcp.Tool, error) {
	raw := t.RawInputSchema
	if len(raw) == 0 {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return t, err
		}
		raw = b
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return t, fmt.Errorf("input schema is not an object: %w", err)
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, clash := props[argConfirm]; clash {
		return t, errors.New("write tool declares its own confirm argument")
	}
	if _, clash := props[argTicket]; clash {
		return t, errors.New("write tool declares its own ticket argument")
	}
	props[argConfirm] = map[string]any{"type": "boolean", "description": "Set to true only after the user explicitly agreed to the preview."}
	props[argTicket] = map[string]any{"type": "string", "maxLength": 128, "description": "The ticket returned with the preview."}
	schema["properties"] = props
	out, err := json.Marshal(schema)
	if err != nil {
		return t, err
	}
	t.InputSchema = mcp.ToolInputSchema{}
	t.RawInputSchema = out
	// Short: the confirm argument, the gateway's instructions and the
	// preview's own next step say the rest, and this text is in every
	// prompt of every client of the endpoint.
	t.Description = strings.TrimSpace(t.Description) + "\n\nA write: unless the policy allows it outright, the first call only returns a preview and a ticket."
	return t, nil
}

// install replaces one service's tools on the aggregate and the service's
// own endpoint; mcp-go announces the change to connected sessions.
func (r *Router) install(service string, entries []*entry) {
	r.mu.Lock()
	old := r.tools[service]
	taken := map[string]string{}
	for svc, es := range r.tools {
		if svc == service {
			continue
		}
		for _, e := range es {
			taken[e.offered.Name] = svc
		}
	}
	var kept []*entry
	for _, e := range entries {
		if other, dup := taken[e.offered.Name]; dup {
			r.log.Warn("tool name already offered by another service; withheld", "service", service, "tool", e.offered.Name, "other", other)
			continue
		}
		kept = append(kept, e)
	}
	if sameTools(old, kept) {
		r.mu.Unlock()
		return
	}
	r.tools[service] = kept
	for _, o := range old {
		delete(r.byName, o.offered.Name)
	}
	for _, e := range kept {
		r.byName[e.offered.Name] = e
	}
	r.mu.Unlock()

	var gone []string
	for _, o := range old {
		if !slices.ContainsFunc(kept, func(e *entry) bool { return e.offered.Name == o.offered.Name }) {
			gone = append(gone, o.offered.Name)
		}
	}
	served := make([]server.ServerTool, 0, len(kept))
	for _, e := range kept {
		served = append(served, server.ServerTool{Tool: e.offered, Handler: r.handleCall})
	}
	if len(gone) > 0 {
		r.aggregate.DeleteTools(gone...)
		r.single[service].DeleteTools(gone...)
	}
	r.aggregate.AddTools(served...)
	r.single[service].SetTools(served...)
	r.installToolsets(service, served)
}

func sameTools(a, b []*entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ha, _ := pins.Hash(a[i].upstream)
		hb, _ := pins.Hash(b[i].upstream)
		if ha != hb {
			return false
		}
	}
	return true
}
