// Package fakeclock is a settable clock for tests of code that takes a
// func() time.Time: pass Clock.Now in, then move time with Advance or Set
// instead of sleeping.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable time source. It is safe for concurrent use, since the
// code under test usually reads it from server goroutines while the test
// moves it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock that reads start until it is moved.
func New(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
