package ssrf

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// AllowList names the internal hosts a user explicitly wants the web
// service to reach. An entry opens private, CGNAT and unique-local
// addresses only (see Openable); loopback, link-local and the other special
// ranges stay closed. Entries:
//
//	wiki.lan          the name wiki.lan, on the allowed ports
//	wiki.lan:8080     the name wiki.lan, on port 8080 only
//	192.168.1.20      that address (any name resolving to it), allowed ports
//	192.168.1.20:8080 that address on port 8080 only
//	[fd00::20]:8080   an IPv6 address with a port
//	192.168.1.0/24    every address in the prefix, allowed ports
//
// A name entry opens the addresses that name resolves to, and only when the
// URL uses exactly that name.
type AllowList struct {
	entries []allowEntry
}

type allowEntry struct {
	name   string
	prefix netip.Prefix
	port   uint16 // 0: the Guard's allowed ports
}

// ParseAllowList parses a comma- or space-separated list of entries.
func ParseAllowList(s string) (*AllowList, error) {
	l := &AllowList{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		e, err := parseEntry(f)
		if err != nil {
			return nil, err
		}
		l.entries = append(l.entries, e)
	}
	return l, nil
}

// Len is the number of entries.
func (l *AllowList) Len() int { return len(l.entries) }

var errEntry = errors.New(`each entry must be a host name, an IP address or a CIDR prefix, optionally with ":port" (e.g. wiki.lan:8080, 192.168.1.0/24)`)

func parseEntry(f string) (allowEntry, error) {
	if p, err := netip.ParsePrefix(f); err == nil {
		return allowEntry{prefix: p.Masked()}, nil
	}
	if ap, err := netip.ParseAddrPort(f); err == nil {
		if ap.Port() == 0 || ap.Addr().Zone() != "" {
			return allowEntry{}, errEntry
		}
		return allowEntry{prefix: netip.PrefixFrom(ap.Addr().Unmap(), ap.Addr().Unmap().BitLen()), port: ap.Port()}, nil
	}
	if a, err := netip.ParseAddr(f); err == nil && a.Zone() == "" {
		a = a.Unmap()
		return allowEntry{prefix: netip.PrefixFrom(a, a.BitLen())}, nil
	}
	host, port := f, uint16(0)
	if h, p, err := net.SplitHostPort(f); err == nil {
		n, perr := strconv.ParseUint(p, 10, 16)
		if perr != nil || n == 0 {
			return allowEntry{}, errEntry
		}
		host, port = h, uint16(n)
	}
	h, err := ParseHost(host)
	if err != nil || h.IsIP() {
		return allowEntry{}, errEntry
	}
	return allowEntry{name: h.Name, port: port}, nil
}

// opens reports whether an entry allows h (reached on port) at address a.
func (l *AllowList) opens(h Host, port uint16, a netip.Addr) bool {
	for _, e := range l.entries {
		if e.port != 0 && e.port != port {
			continue
		}
		if e.name != "" && e.name == h.Name || e.prefix.IsValid() && e.prefix.Contains(a) {
			return true
		}
	}
	return false
}

// pinsPort reports whether an entry with an explicit port admits h on port.
// For a prefix entry the address is not known yet; the dial-time check
// still requires the address to match the entry.
func (l *AllowList) pinsPort(h Host, port uint16) bool {
	for _, e := range l.entries {
		if e.port == 0 || e.port != port {
			continue
		}
		if e.name != "" && e.name == h.Name {
			return true
		}
		if e.prefix.IsValid() && (!h.IsIP() || e.prefix.Contains(h.IP.Unmap())) {
			return true
		}
	}
	return false
}

// pinned reports whether an entry with exactly this port matches h or a.
func (l *AllowList) pinned(h Host, port uint16, a netip.Addr) bool {
	for _, e := range l.entries {
		if e.port == port && (e.name != "" && e.name == h.Name || e.prefix.IsValid() && e.prefix.Contains(a)) {
			return true
		}
	}
	return false
}
