package ssrf

import (
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Host is a URL host after normalisation: either a DNS name (lower-case
// ASCII, no trailing dot) or an IP address.
type Host struct {
	Name string
	IP   netip.Addr
}

// IsIP reports whether the host is an IP literal.
func (h Host) IsIP() bool { return h.IP.IsValid() }

// String is the name or the IP.
func (h Host) String() string {
	if h.IsIP() {
		return h.IP.String()
	}
	return h.Name
}

// localNames always mean this machine, whatever a resolver says.
var localNames = map[string]bool{
	"localhost": true, "localhost.localdomain": true, "ip6-localhost": true,
	"ip6-loopback": true, "localhost6": true, "localhost6.localdomain6": true,
}

// ParseHost normalises host as it appears in a URL (without brackets or
// port). It refuses what could reach this machine or be read differently
// by different parsers: localhost names (and *.localhost, RFC 6761),
// IPv4 addresses written as an integer or in octal or hex (3232235521,
// 0177.0.0.1, 0x7f.1; browsers read those as addresses), zone-scoped IPv6
// literals and malformed names. Unicode names are converted to their ASCII
// (punycode) form first, which also maps full-width digits and dots.
func ParseHost(host string) (Host, error) {
	if host == "" {
		return Host{}, refuse(BadHost, "the URL has no host")
	}
	if strings.ContainsAny(host, ":%") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return Host{}, refuse(BadHost, "the host is not a valid IPv6 address")
		}
		if a.Zone() != "" {
			return Host{}, refuse(Scoped, "the host is a zone-scoped IPv6 address")
		}
		return Host{IP: a}, nil
	}
	name, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return Host{}, refuse(BadHost, "the host is not a valid DNS name")
	}
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" || len(name) > 253 {
		return Host{}, refuse(BadHost, "the host is not a valid DNS name")
	}
	if a, err := netip.ParseAddr(name); err == nil && a.Is4() {
		return Host{IP: a}, nil
	}
	labels := strings.Split(name, ".")
	if numericLabel(labels[len(labels)-1]) {
		// WHATWG URL parsing treats such a host as an IPv4 address; a
		// canonical dotted quad was accepted above, so this is an
		// integer, octal or hex spelling (or garbage).
		return Host{}, refuse(BadHost, "the host is an IPv4 address in integer, octal or hex form; write it as four decimal numbers")
	}
	for _, l := range labels {
		if !validLabel(l) {
			return Host{}, refuse(BadHost, "the host is not a valid DNS name")
		}
	}
	if localNames[name] || strings.HasSuffix(name, ".localhost") {
		return Host{}, refuse(Loopback, "the host names this machine")
	}
	return Host{Name: name}, nil
}

// numericLabel reports whether l is a number in the WHATWG sense: decimal
// digits, or 0x followed by hex digits (also "0x" alone).
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") || strings.HasPrefix(l, "0X") {
		_, err := strconv.ParseUint("0"+l[2:], 16, 64)
		return err == nil || strings.Trim(l[2:], "0123456789abcdefABCDEF") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
