package fakeclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/fakeclock"
)

func TestClock(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	later := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		move func(c *fakeclock.Clock)
		want time.Time
	}{
		{"unmoved", func(*fakeclock.Clock) {}, start},
		{"advance", func(c *fakeclock.Clock) { c.Advance(11 * time.Minute) }, start.Add(11 * time.Minute)},
		{"advance twice", func(c *fakeclock.Clock) {
			c.Advance(time.Second)
			c.Advance(time.Hour)
		}, start.Add(time.Hour + time.Second)},
		{"advance backward", func(c *fakeclock.Clock) { c.Advance(-time.Minute) }, start.Add(-time.Minute)},
		{"set", func(c *fakeclock.Clock) { c.Set(later) }, later},
		{"set then advance", func(c *fakeclock.Clock) {
			c.Set(later)
			c.Advance(time.Minute)
		}, later.Add(time.Minute)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeclock.New(start)
			tc.move(c)
			if got := c.Now(); !got.Equal(tc.want) {
				t.Errorf("Now() = %v, want %v", got, tc.want)
			}
			// Now does not move on its own.
			if got := c.Now(); !got.Equal(tc.want) {
				t.Errorf("second Now() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestClockConcurrent lets -race check that readers and movers can share a
// Clock, the way a server under test and the test itself do.
func TestClockConcurrent(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := fakeclock.New(start)
	now := c.Now // as code under test receives it
	const n = 50
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { c.Advance(time.Second) })
		wg.Go(func() { _ = now() })
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(n*time.Second); !got.Equal(want) {
		t.Errorf("after %d concurrent Advance: Now() = %v, want %v", n, got, want)
	}
}
