package catalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/truncate"
)

// Run refreshes every service now and then periodically until ctx ends. A
// service that was down is asked again sooner, after 1 s, 2 s, 4 s … up to
// every: services start beside the gateway, and one that was not listening
// yet at the first refresh must not be missing from the catalog for a
// whole interval.
func (c *Catalog) Run(ctx context.Context, every time.Duration) {
	c.RefreshAll(ctx)
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
			c.RefreshAll(ctx)
			c.cfg.Tick()
		case service := <-c.stale:
			c.refresh(ctx, []string{service})
		case <-retry.C:
			if down := c.downServices(); len(down) > 0 {
				c.refresh(ctx, down)
				wait = min(2*wait, every)
			} else {
				wait = firstRetry
			}
			retry.Reset(wait)
		}
	}
}

// NoticeFailure reads a failed call for news about the catalog: a service
// that is not running, or that no longer has the tool, has its tools read
// again now (by Run) instead of at the next tick, so lists stop offering
// what is gone.
func (c *Catalog) NoticeFailure(service string, err error) {
	if !serviceGone(err) && !toolGone(err) {
		return
	}
	select {
	case c.stale <- service:
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
func (c *Catalog) downServices() []string {
	var out []string
	for _, n := range c.names {
		if _, down := c.down.Load(n); down {
			out = append(out, n)
		}
	}
	return out
}

// RefreshAll refreshes every service's tool list concurrently.
func (c *Catalog) RefreshAll(ctx context.Context) { c.refresh(ctx, c.names) }

// refresh refreshes the named services' tool lists concurrently.
func (c *Catalog) refresh(ctx context.Context, names []string) {
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Go(func() {
			err := c.Refresh(ctx, n)
			switch _, wasDown := c.down.Load(n); {
			case err != nil && !wasDown:
				// Once per outage: a service whose profile is off is
				// simply absent, and must not flood the log every minute.
				c.down.Store(n, struct{}{})
				c.log.Warn("service unavailable", "service", n, "error", err)
			case err != nil:
				c.log.Debug("service still unavailable", "service", n, "error", err)
			case wasDown:
				c.down.Delete(n)
				c.log.Info("service available again", "service", n)
			}
		})
	}
	wg.Wait()
}

// Refresh reloads one service's tools. A service that cannot be reached
// keeps its last known tools (calls to them fail with a clear error).
func (c *Catalog) Refresh(ctx context.Context, service string) error {
	b, ok := c.backends[service]
	if !ok {
		return fmt.Errorf("unknown service %s", service)
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	list, err := b.ListTools(ctx)
	c.cfg.ServiceUp(service, err == nil)
	if err != nil {
		if serviceGone(err) {
			// Not restarting or slow: not running at all (a profile
			// switched off). Its tools leave every list until it runs
			// again; calls answer that it is not running.
			c.install(service, nil)
		}
		c.markAsked(service)
		return err
	}
	var entries []*Tool
	for _, t := range list {
		e, err := c.offer(service, t)
		if err != nil {
			c.log.Warn("tool withheld", "service", service, "tool", truncate.String(t.Name, 128), "reason", err.Error())
			continue
		}
		entries = append(entries, e)
	}
	c.install(service, entries)
	c.pinInstructions(service, b)
	c.markAsked(service)
	return nil
}

// refreshTimeout bounds one service's tools/list; the first load waits at
// most a little longer than this.
const refreshTimeout = 15 * time.Second

// markAsked records that service has been asked for its tools, and opens
// the gateway to clients once every service has been.
func (c *Catalog) markAsked(service string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asked[service] {
		return
	}
	c.asked[service] = true
	if len(c.asked) == len(c.names) {
		close(c.loaded)
	}
}

// Loaded is closed once every service has been asked for its tools.
func (c *Catalog) Loaded() <-chan struct{} { return c.loaded }

// AwaitLoaded waits until the first catalog load has finished, so the first
// request after a start sees the services' tools, not an empty catalog. A
// service that does not answer only delays it by refreshTimeout.
func (c *Catalog) AwaitLoaded(ctx context.Context) error {
	select {
	case <-c.loaded:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout+5*time.Second)
	defer cancel()
	select {
	case <-c.loaded:
		return nil
	case <-ctx.Done():
		return ErrLoading
	}
}

// ErrLoading answers a request that waited too long for the first load.
var ErrLoading = errors.New("the gateway is still loading its services' tools; retry in a few seconds")
