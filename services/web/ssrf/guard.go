package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Refusal reasons that are not address classes.
const (
	BadHost     Class = "invalid host"
	BadURL      Class = "invalid URL"
	Credentials Class = "credentials in URL"
	BadScheme   Class = "scheme not allowed"
	BadPort     Class = "port not allowed"
)

// ErrRefused matches every refusal with errors.Is.
var ErrRefused = errors.New("ssrf: refused")

// Error is a refusal. Its message is safe to show to a client: it states the
// rule that was broken and never the address or name involved (a redirect
// target or a DNS answer is not the caller's to learn).
type Error struct {
	Class Class
	Msg   string
}

func (e *Error) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrRefused) true for every refusal.
func (e *Error) Is(target error) bool { return target == ErrRefused }

func refuse(c Class, msg string) *Error { return &Error{Class: c, Msg: msg} }

// refuseClass is the refusal for dialling an address of class c.
func refuseClass(c Class) *Error {
	return refuse(c, "the host resolves to a "+string(c)+" address, which is not on the public internet")
}

// Resolver looks up the addresses of a host; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DefaultPorts are the ports a URL may use without an allow-list entry.
var DefaultPorts = []uint16{80, 443}

// Options configure a Guard.
type Options struct {
	// Resolver resolves names at dial time; nil means net.DefaultResolver.
	Resolver Resolver
	// Ports may be used by any public host; nil means DefaultPorts.
	Ports []uint16
	// Allow opens specific internal hosts (see AllowList).
	Allow *AllowList
	// DialTimeout bounds one TCP connect (default 10s).
	DialTimeout time.Duration
	// TestPublic is for tests only and no setting maps to it: addresses in
	// these prefixes count as public, so fixture servers on 127.0.0.1 can
	// stand in for public sites. Production code never sets it.
	TestPublic []netip.Prefix
}

// Guard checks URLs and dials only addresses it has checked.
type Guard struct {
	resolver   Resolver
	ports      map[uint16]bool
	allow      *AllowList
	timeout    time.Duration
	testPublic []netip.Prefix
}

// New builds a Guard.
func New(opts Options) *Guard {
	g := &Guard{resolver: opts.Resolver, ports: map[uint16]bool{}, allow: opts.Allow,
		timeout: opts.DialTimeout, testPublic: opts.TestPublic}
	if g.resolver == nil {
		g.resolver = net.DefaultResolver
	}
	ports := opts.Ports
	if ports == nil {
		ports = DefaultPorts
	}
	for _, p := range ports {
		g.ports[p] = true
	}
	if g.allow == nil {
		g.allow = &AllowList{}
	}
	if g.timeout <= 0 {
		g.timeout = 10 * time.Second
	}
	return g
}

// CheckURL applies the checks that need no DNS: http or https only, no
// user:password@ (not even an empty one), a well-formed host that is not
// localhost or an odd IPv4 spelling, an allowed port, and for an IP literal
// its class. It returns the normalised host and the port.
func (g *Guard) CheckURL(u *url.URL) (Host, uint16, error) {
	if u == nil || u.Opaque != "" {
		return Host{}, 0, refuse(BadURL, "the URL is not an absolute http(s) URL")
	}
	var port uint16
	switch strings.ToLower(u.Scheme) {
	case "http":
		port = 80
	case "https":
		port = 443
	default:
		return Host{}, 0, refuse(BadScheme, "only http and https URLs can be fetched")
	}
	if u.User != nil {
		return Host{}, 0, refuse(Credentials, "URLs with user:password@ are refused; credentials never go into a fetched URL")
	}
	h, err := ParseHost(u.Hostname())
	if err != nil {
		return Host{}, 0, err
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return Host{}, 0, refuse(BadPort, "the URL's port is not a valid port number")
		}
		port = uint16(n)
	} else if strings.HasSuffix(u.Host, ":") {
		return Host{}, 0, refuse(BadPort, "the URL's port is empty")
	}
	if !g.portAllowed(h, port) {
		return Host{}, 0, refuse(BadPort, "port "+strconv.Itoa(int(port))+" is not allowed; only "+g.portList()+" (and ports allow-listed for specific hosts)")
	}
	if h.IsIP() {
		if err := g.checkAddr(h, port, h.IP); err != nil {
			return Host{}, 0, err
		}
	}
	return h, port, nil
}

// Resolve returns the checked addresses of h: every answer must be
// allowed, because a name that mixes public and internal answers is a
// rebinding attempt waiting for the right answer order.
func (g *Guard) Resolve(ctx context.Context, h Host, port uint16) ([]netip.Addr, error) {
	if h.IsIP() {
		if err := g.checkAddr(h, port, h.IP); err != nil {
			return nil, err
		}
		return []netip.Addr{h.IP}, nil
	}
	addrs, err := g.resolver.LookupNetIP(ctx, "ip", h.Name)
	if err != nil {
		return nil, fmt.Errorf("resolve: %w", err)
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: h.Name, IsNotFound: true}
	}
	for _, a := range addrs {
		if err := g.checkAddr(h, port, a); err != nil {
			return nil, err
		}
	}
	return addrs, nil
}

// DialContext is an http.Transport dial function: it resolves the host with
// the Guard's resolver, checks every answer and the port, then dials exactly
// the checked addresses (in order, until one connects). The dialer's
// Control hook checks the address of the socket once more just before
// connect, so no code path can dial an address that was not checked.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	hostStr, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, refuse(BadURL, "the address to dial is malformed")
	}
	p, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, refuse(BadPort, "the port is not a valid port number")
	}
	port := uint16(p)
	h, err := ParseHost(hostStr)
	if err != nil {
		return nil, err
	}
	if !g.portAllowed(h, port) {
		return nil, refuse(BadPort, "port "+portStr+" is not allowed")
	}
	addrs, err := g.Resolve(ctx, h, port)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: g.timeout, KeepAlive: 30 * time.Second, Control: g.control(h)}
	var first error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(a.Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// control re-checks the literal address a socket is about to connect to.
func (g *Guard) control(h Host) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refuse(BadURL, "the address to dial is malformed")
		}
		if !g.portAllowed(h, ap.Port()) {
			return refuse(BadPort, "the port is not allowed")
		}
		return g.checkAddr(h, ap.Port(), ap.Addr())
	}
}

// checkAddr decides whether h may be reached at a on port: the address must
// be public (or opened by the allow-list), and a port outside the allowed
// ports needs an allow-list entry with that port matching the name or the
// address.
func (g *Guard) checkAddr(h Host, port uint16, a netip.Addr) error {
	c := Classify(a)
	if c != Public && !g.isTestPublic(a) && !(Openable(c) && g.allow.opens(h, port, a.Unmap())) {
		return refuseClass(c)
	}
	if !g.ports[port] && !g.allow.pinned(h, port, a.Unmap()) {
		return refuse(BadPort, "port "+strconv.Itoa(int(port))+" is not allowed")
	}
	return nil
}

func (g *Guard) isTestPublic(a netip.Addr) bool {
	for _, p := range g.testPublic {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

func (g *Guard) portAllowed(h Host, port uint16) bool {
	if g.allow.pinsPort(h, port) {
		return true
	}
	return g.ports[port]
}

func (g *Guard) portList() string {
	var s []string
	for _, p := range []uint16{80, 443} {
		if g.ports[p] {
			s = append(s, strconv.Itoa(int(p)))
		}
	}
	for p := range g.ports {
		if p != 80 && p != 443 {
			s = append(s, strconv.Itoa(int(p)))
		}
	}
	if len(s) == 0 {
		return "no ports"
	}
	return "ports " + strings.Join(s, ", ")
}
