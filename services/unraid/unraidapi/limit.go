package unraidapi

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Unraid's API throttles each client address to 100 requests per 10
// seconds (unraid/api api/src/unraid-api/app/app.module.ts,
// ThrottlerModule ttl 10000, limit 100).
const (
	ThrottleLimit  = 100
	ThrottleWindow = 10 * time.Second
	// DefaultPer10s leaves room for the Unraid web UI on the same address.
	DefaultPer10s = 90
	// DefaultMaxWait is how long a call may wait for its turn before the
	// tool answers busy instead of queueing.
	DefaultMaxWait = 2 * time.Second
)

// Limiter keeps the service's requests under Unraid's throttle: a token
// bucket whose burst plus refill never exceeds perWindow requests in any
// ThrottleWindow. A request that would wait longer than maxWait is refused
// with busy at once and spends nothing.
type Limiter struct {
	l       *rate.Limiter
	maxWait time.Duration
	now     func() time.Time
	sleep   func(ctx context.Context, d time.Duration) error
}

// NewLimiter allows perWindow requests in any ThrottleWindow. now and
// sleep may be nil (the real clock).
func NewLimiter(perWindow int, maxWait time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) *Limiter {
	perWindow = max(1, min(perWindow, ThrottleLimit))
	burst := max(1, perWindow/5)
	// burst + refill over one window <= perWindow; the 1% margin absorbs
	// float rounding at the window's edges.
	refill := rate.Limit(0.99 * float64(max(perWindow-burst, 1)) / ThrottleWindow.Seconds())
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = sleepCtx
	}
	return &Limiter{l: rate.NewLimiter(refill, burst), maxWait: maxWait, now: now, sleep: sleep}
}

// Wait takes one request's turn, waiting at most maxWait (and never past
// ctx's deadline).
func (l *Limiter) Wait(ctx context.Context) error {
	now := l.now()
	r := l.l.ReserveN(now, 1)
	d := r.DelayFrom(now)
	limit := l.maxWait
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, dl.Sub(now))
	}
	if !r.OK() || d > limit {
		r.CancelAt(now)
		return toolerr.New(toolerr.Busy, "the Unraid request budget (UNRAID_MAX_REQUESTS_PER_10S) is spent for the moment; retry in a few seconds")
	}
	if d <= 0 {
		return nil
	}
	if err := l.sleep(ctx, d); err != nil {
		r.CancelAt(l.now())
		return toolerr.Wrap(toolerr.Timeout, err, "the call ended while waiting for its turn at Unraid")
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
