package client

import (
	"testing"
	"time"
)

// A token whose exp cannot be read is renewed ahead of the assumed
// lifetime (TULIPROX_TOKEN_TTL, Tuliprox's token_ttl_mins, 30 min by
// default) by the same margin as a readable one.
func TestRefreshWithoutAReadableExpiry(t *testing.T) {
	issued := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		ttl  time.Duration
		want time.Duration // after issued
	}{
		{"the default lifetime", 0, 28 * time.Minute},
		{"a configured lifetime", 10 * time.Minute, 9 * time.Minute},
		{"a short one: a tenth of it early", time.Minute, 54 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := New(nil, Settings{TokenTTL: c.ttl}, Options{})
			if got := cl.refreshAt(issued, "opaque-token-not-a-jwt"); !got.Equal(issued.Add(c.want)) {
				t.Fatalf("refresh at %v, want %v", got.Sub(issued), c.want)
			}
		})
	}
}
