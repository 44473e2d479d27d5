package ssrf

import (
	"errors"
	"testing"
)

// TestControlRechecksTheSocketAddress: the last check before connect(2)
// refuses internal addresses and ports on its own, so no dial path can skip
// the classification.
func TestControlRechecksTheSocketAddress(t *testing.T) {
	g := New(Options{})
	ctl := g.control(Host{Name: "example.com"})
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:4700:4700::1111]:80", true},
		{"10.0.0.1:80", false},
		{"127.0.0.1:443", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"[fe80::1%eth0]:80", false},
		{"93.184.216.34:22", false},
		{"garbage", false},
	} {
		err := ctl("tcp", tc.addr, nil)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.addr, err)
		}
		if err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: not a refusal: %v", tc.addr, err)
		}
	}
}
