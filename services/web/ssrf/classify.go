// Package ssrf keeps the web service from being turned against the home
// lab: it classifies IP addresses (public or one of the non-public kinds),
// normalises URL hosts (refusing integer, octal and hex IPv4 spellings and
// localhost names), and provides a dialer that resolves a name itself,
// checks every address it is about to dial and dials exactly that address,
// so a DNS answer that changes between a check and the connection (DNS
// rebinding) cannot reach an internal address.
//
// The rules live in this one small package on purpose: no maintained Go
// library for address classification is available to the project, and
// net/netip's predicates (IsPrivate, IsLoopback, ...) miss CGNAT, the
// documentation and benchmarking ranges and the IPv6 forms that embed an
// IPv4 address (IPv4-mapped, NAT64, 6to4).
package ssrf

import "net/netip"

// Class is what kind of address an IP is. Only Public may be dialled without
// an allow-list entry.
type Class string

// The address classes. Their text is shown to clients, so it never includes
// the address itself.
const (
	Public        Class = "public"
	Unspecified   Class = "unspecified"
	Loopback      Class = "loopback"
	Private       Class = "private"
	CGNAT         Class = "carrier-grade NAT"
	LinkLocal     Class = "link-local"
	UniqueLocal   Class = "unique-local"
	Multicast     Class = "multicast"
	Broadcast     Class = "broadcast"
	Documentation Class = "documentation"
	Reserved      Class = "reserved"
	Scoped        Class = "zone-scoped"
)

type rule struct {
	prefix netip.Prefix
	class  Class
}

func rules(class Class, prefixes ...string) []rule {
	out := make([]rule, len(prefixes))
	for i, p := range prefixes {
		out[i] = rule{netip.MustParsePrefix(p), class}
	}
	return out
}

// v4Rules lists every non-public IPv4 range (RFC 6890 and successors). The
// order matters only for overlaps: the broadcast address precedes 240/4.
var v4Rules = concat(
	rules(Broadcast, "255.255.255.255/32"),
	rules(Unspecified, "0.0.0.0/8"),
	rules(Private, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	rules(CGNAT, "100.64.0.0/10"),
	rules(Loopback, "127.0.0.0/8"),
	rules(LinkLocal, "169.254.0.0/16"),
	rules(Documentation, "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	// 192.0.0.0/24: IETF protocol assignments; 192.88.99.0/24: the
	// retired 6to4 relay anycast; 198.18.0.0/15: benchmarking; 240/4:
	// reserved for future use.
	rules(Reserved, "192.0.0.0/24", "192.88.99.0/24", "198.18.0.0/15", "240.0.0.0/4"),
	rules(Multicast, "224.0.0.0/4"),
)

// v6Rules lists the non-public IPv6 ranges checked before the general
// "only 2000::/3 is global unicast" rule. The IPv4-embedding prefixes are
// handled in Classify, not here.
var v6Rules = concat(
	rules(Unspecified, "::/128"),
	rules(Loopback, "::1/128"),
	// ::/96 is the deprecated IPv4-compatible form; 100::/64 discard-only;
	// 64:ff9b:1::/48 local-use NAT64 (translates to anything the local
	// translator can reach); 2001::/23 IETF protocol assignments (Teredo,
	// ORCHID, benchmarking, ...); 5f00::/16 SRv6 SIDs.
	rules(Reserved, "::/96", "100::/64", "64:ff9b:1::/48", "2001::/23", "5f00::/16"),
	rules(Documentation, "2001:db8::/32", "3fff::/20"),
	rules(UniqueLocal, "fc00::/7"),
	rules(LinkLocal, "fe80::/10"),
	// fec0::/10 is the deprecated site-local range: private in practice.
	rules(Private, "fec0::/10"),
	rules(Multicast, "ff00::/8"),
)

var (
	nat64       = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour   = netip.MustParsePrefix("2002::/16")
	globalV6    = netip.MustParsePrefix("2000::/3")
	v4MappedV6  = netip.MustParsePrefix("::ffff:0:0/96")
	v4Translate = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT, RFC 2765
)

func concat(lists ...[]rule) []rule {
	var out []rule
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Classify returns the class of a. An IPv6 address that embeds an IPv4
// address (IPv4-mapped, SIIT, NAT64 well-known prefix, 6to4) has the class of
// the embedded address, so ::ffff:127.0.0.1 is Loopback and 2002:0a00:0001::
// is Private. Any zone makes an address Scoped; an invalid address is
// Reserved.
func Classify(a netip.Addr) Class {
	switch {
	case !a.IsValid():
		return Reserved
	case a.Zone() != "":
		return Scoped
	case a.Is4():
		return classify4(a)
	case v4MappedV6.Contains(a):
		return classify4(a.Unmap())
	case v4Translate.Contains(a), nat64.Contains(a):
		b := a.As16()
		return classify4(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(a):
		b := a.As16()
		return classify4(netip.AddrFrom4([4]byte(b[2:6])))
	}
	for _, r := range v6Rules {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	if !globalV6.Contains(a) {
		return Reserved
	}
	return Public
}

func classify4(a netip.Addr) Class {
	for _, r := range v4Rules {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	return Public
}

// Openable reports whether an allow-list entry may open an address of class
// c: the ranges a home lab really uses for services (RFC 1918, CGNAT such as
// Tailscale, IPv6 unique-local and site-local). Loopback (the container
// itself), link-local (cloud metadata endpoints), multicast, broadcast,
// unspecified and reserved addresses stay refused whatever the allow-list
// says.
func Openable(c Class) bool {
	switch c {
	case Public, Private, CGNAT, UniqueLocal:
		return true
	}
	return false
}
