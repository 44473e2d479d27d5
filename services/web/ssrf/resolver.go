package ssrf

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"
)

// ParseDNSServers parses a comma- or space-separated list of DNS servers,
// each an IP address with an optional port (default 53).
func ParseDNSServers(s string) ([]string, error) {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		if ap, err := netip.ParseAddrPort(f); err == nil {
			out = append(out, ap.String())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			return nil, errors.New(`each DNS server must be an IP address with an optional port, e.g. 1.1.1.1 or 192.168.1.1:53 or [2606:4700:4700::1111]:53`)
		}
		out = append(out, netip.AddrPortFrom(a, 53).String())
	}
	if len(out) == 0 {
		return nil, errors.New("no DNS server given")
	}
	return out, nil
}

// NewDNSResolver returns a pure-Go resolver that sends every query to the
// given servers (rotating through them, so a dead one costs one attempt)
// instead of the host's resolv.conf. The web container uses it so page
// fetches do not depend on the Docker host's resolver.
func NewDNSResolver(servers []string, timeout time.Duration) *net.Resolver {
	var next atomic.Uint64
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			s := servers[int((next.Add(1)-1)%uint64(len(servers)))]
			d := net.Dialer{Timeout: timeout}
			return d.DialContext(ctx, network, s)
		},
	}
}
