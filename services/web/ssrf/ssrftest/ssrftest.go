// Package ssrftest provides a scripted resolver so the SSRF guard and
// everything built on it can be tested without DNS or network access.
package ssrftest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
)

// Resolver answers from a fixed table. A name with several answer sets
// gets them in turn (the last one repeats), which simulates a DNS server
// that changes its answer between two lookups (DNS rebinding).
type Resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

// New returns an empty Resolver.
func New() *Resolver {
	return &Resolver{answers: map[string][][]netip.Addr{}, calls: map[string]int{}}
}

// Set makes name resolve to addrs (each a parseable IP address).
func (r *Resolver) Set(name string, addrs ...string) *Resolver {
	return r.Sequence(name, addrs)
}

// Sequence makes successive lookups of name return the given answer sets.
func (r *Resolver) Sequence(name string, answers ...[]string) *Resolver {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sets [][]netip.Addr
	for _, a := range answers {
		var set []netip.Addr
		for _, s := range a {
			set = append(set, netip.MustParseAddr(s))
		}
		sets = append(sets, set)
	}
	r.answers[strings.ToLower(name)] = sets
	return r
}

// Calls reports how often name was looked up.
func (r *Resolver) Calls(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[strings.ToLower(name)]
}

// LookupNetIP implements ssrf.Resolver; unknown names are NXDOMAIN.
func (r *Resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	host = strings.ToLower(host)
	sets, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	n := r.calls[host]
	r.calls[host] = n + 1
	return append([]netip.Addr(nil), sets[min(n, len(sets)-1)]...), nil
}
