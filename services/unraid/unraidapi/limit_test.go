package unraidapi

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// However calls arrive, no 10-second window ever holds more requests than
// the budget, so Unraid's throttle (100 per 10 s) is never hit by us; a
// call that would wait longer than maxWait answers busy and spends nothing.
func TestNoWindowExceedsTheBudget(t *testing.T) {
	for _, budget := range []int{1, 10, 90, 100} {
		now := time.Unix(1_000_000, 0)
		var sent []time.Time
		l := NewLimiter(budget, 500*time.Millisecond, func() time.Time { return now },
			func(_ context.Context, d time.Duration) error { now = now.Add(d); return nil })
		busy := 0
		// 4000 calls, one every 20 ms: far more than any budget allows.
		for range 4000 {
			if err := l.Wait(t.Context()); err != nil {
				if toolerr.CodeOf(err) != toolerr.Busy {
					t.Fatal(err)
				}
				busy++
			} else {
				sent = append(sent, now)
			}
			now = now.Add(20 * time.Millisecond)
		}
		for i := range sent {
			n := 0
			for j := i; j < len(sent) && sent[j].Sub(sent[i]) < ThrottleWindow; j++ {
				n++
			}
			if n > budget {
				t.Fatalf("budget %d: %d requests in the 10 s from %v", budget, n, sent[i])
			}
		}
		// Slow budgets make callers wait past maxWait: those are busy.
		if len(sent) == 0 || budget <= 10 && busy == 0 {
			t.Fatalf("budget %d: sent %d, busy %d", budget, len(sent), busy)
		}
	}
}

// A call whose context ends while it waits for its turn ends with timeout.
func TestWaitEndsWithTheCall(t *testing.T) {
	l := NewLimiter(5, time.Minute, nil, nil)
	if err := l.Wait(t.Context()); err != nil { // the burst of one
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := l.Wait(ctx); toolerr.CodeOf(err) != toolerr.Timeout {
		t.Fatalf("got %v, want timeout", err)
	}
}
