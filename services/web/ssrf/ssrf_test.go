package ssrf_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/web/ssrf"
	"github.com/toolgate/toolgate/services/web/ssrf/ssrftest"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want ssrf.Class
	}{
		{"8.8.8.8", ssrf.Public},
		{"93.184.216.34", ssrf.Public},
		{"1.1.1.1", ssrf.Public},
		{"0.0.0.0", ssrf.Unspecified},
		{"0.1.2.3", ssrf.Unspecified},
		{"127.0.0.1", ssrf.Loopback},
		{"127.255.255.254", ssrf.Loopback},
		{"10.0.0.1", ssrf.Private},
		{"172.16.0.1", ssrf.Private},
		{"172.31.255.255", ssrf.Private},
		{"172.32.0.1", ssrf.Public},
		{"192.168.1.1", ssrf.Private},
		{"100.64.0.1", ssrf.CGNAT},
		{"100.127.255.255", ssrf.CGNAT},
		{"100.128.0.1", ssrf.Public},
		{"169.254.169.254", ssrf.LinkLocal},
		{"192.0.0.8", ssrf.Reserved},
		{"192.0.2.1", ssrf.Documentation},
		{"198.51.100.7", ssrf.Documentation},
		{"203.0.113.9", ssrf.Documentation},
		{"198.18.0.1", ssrf.Reserved},
		{"192.88.99.1", ssrf.Reserved},
		{"224.0.0.1", ssrf.Multicast},
		{"239.255.255.250", ssrf.Multicast},
		{"240.0.0.1", ssrf.Reserved},
		{"255.255.255.255", ssrf.Broadcast},
		{"2606:4700:4700::1111", ssrf.Public},
		{"2a00:1450:4001:80b::200e", ssrf.Public},
		{"::", ssrf.Unspecified},
		{"::1", ssrf.Loopback},
		{"::ffff:127.0.0.1", ssrf.Loopback},
		{"::ffff:10.1.1.1", ssrf.Private},
		{"::ffff:8.8.8.8", ssrf.Public},
		{"::ffff:0:a00:1", ssrf.Private}, // SIIT form of 10.0.0.1
		{"::127.0.0.1", ssrf.Reserved},   // deprecated IPv4-compatible
		{"64:ff9b::10.0.0.1", ssrf.Private},
		{"64:ff9b::169.254.169.254", ssrf.LinkLocal},
		{"64:ff9b::8.8.8.8", ssrf.Public},
		{"64:ff9b:1::1", ssrf.Reserved},
		{"2002:c0a8:0101::1", ssrf.Private}, // 6to4 of 192.168.1.1
		{"2002:7f00:1::", ssrf.Loopback},
		{"2002:0808:0808::1", ssrf.Public},
		{"2001::1", ssrf.Reserved}, // Teredo
		{"2001:db8::1", ssrf.Documentation},
		{"3fff::1", ssrf.Documentation},
		{"100::1", ssrf.Reserved},
		{"fc00::1", ssrf.UniqueLocal},
		{"fd12:3456::1", ssrf.UniqueLocal},
		{"fe80::1", ssrf.LinkLocal},
		{"fec0::1", ssrf.Private},
		{"ff02::1", ssrf.Multicast},
		{"4000::1", ssrf.Reserved}, // outside 2000::/3
		{"fe80::1%eth0", ssrf.Scoped},
	} {
		if got := ssrf.Classify(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Classify(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if got := ssrf.Classify(netip.Addr{}); got != ssrf.Reserved {
		t.Errorf("invalid address: %q", got)
	}
}

func TestParseHost(t *testing.T) {
	for _, tc := range []struct {
		in, name, ip string
		refused      bool
	}{
		{in: "Example.COM.", name: "example.com"},
		{in: "bücher.example", name: "xn--bcher-kva.example"},
		{in: "1.2.3.4", ip: "1.2.3.4"},
		{in: "::1", ip: "::1"},
		{in: "１２７.０.０.１", ip: "127.0.0.1"}, // full-width digits map to ASCII
		{in: "localhost", refused: true},
		{in: "LocalHost.", refused: true},
		{in: "a.b.localhost", refused: true},
		{in: "localhost.localdomain", refused: true},
		{in: "ip6-loopback", refused: true},
		{in: "2130706433", refused: true},
		{in: "0x7f000001", refused: true},
		{in: "0177.0.0.1", refused: true},
		{in: "127.1", refused: true},
		{in: "127.000.000.001", refused: true},
		{in: "0x7f.1", refused: true},
		{in: "example.0x", refused: true},
		{in: "fe80::1%eth0", refused: true},
		{in: "", refused: true},
		{in: "bad..name", refused: true},
		{in: "-bad.example", refused: true},
		{in: "sp ace.example", refused: true},
	} {
		h, err := ssrf.ParseHost(tc.in)
		if tc.refused {
			if err == nil || !errors.Is(err, ssrf.ErrRefused) {
				t.Errorf("ParseHost(%q) = %v, %v; want a refusal", tc.in, h, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseHost(%q): %v", tc.in, err)
			continue
		}
		if h.Name != tc.name || (tc.ip != "" && h.IP.String() != tc.ip) {
			t.Errorf("ParseHost(%q) = %+v", tc.in, h)
		}
	}
}

func TestAllowList(t *testing.T) {
	l, err := ssrf.ParseAllowList("wiki.lan, nas.lan:5000 192.168.7.0/24,10.0.0.9:8080 [fd00::20]:8443")
	if err != nil {
		t.Fatal(err)
	}
	if l.Len() != 5 {
		t.Fatalf("entries: %d", l.Len())
	}
	for _, bad := range []string{"localhost", "wiki.lan:0", "wiki.lan:99999", "http://wiki.lan", "1.2.3.4:x", "fe80::1%eth0"} {
		if _, err := ssrf.ParseAllowList(bad); err == nil {
			t.Errorf("ParseAllowList(%q) accepted", bad)
		}
	}
	res := ssrftest.New().
		Set("wiki.lan", "192.168.1.5").
		Set("nas.lan", "192.168.1.6").
		Set("other.lan", "192.168.1.7").
		Set("in-prefix.lan", "192.168.7.33").
		Set("evil.example", "93.184.216.34").
		Set("meta.lan", "169.254.169.254").
		Set("loop.lan", "127.0.0.1")
	metaList, _ := ssrf.ParseAllowList("meta.lan loop.lan 169.254.0.0/16")
	g := ssrf.New(ssrf.Options{Resolver: res, Allow: l})
	gMeta := ssrf.New(ssrf.Options{Resolver: res, Allow: metaList})
	for _, tc := range []struct {
		g   *ssrf.Guard
		url string
		ok  bool
	}{
		{g, "http://wiki.lan/", true},
		{g, "https://wiki.lan/", true},
		{g, "http://wiki.lan:5000/", false}, // port pinned to nas.lan only
		{g, "http://nas.lan:5000/", true},
		{g, "http://nas.lan/", false}, // a pinned entry opens only its port
		{g, "http://other.lan/", false},
		{g, "http://in-prefix.lan/", true},
		{g, "http://192.168.7.1/", true},
		{g, "http://10.0.0.9:8080/", true},
		{g, "http://10.0.0.9/", false},
		{g, "http://[fd00::20]:8443/", true},
		{g, "http://evil.example/", true},
		{g, "http://evil.example:5000/", false}, // a pinned port never opens public hosts
		{g, "http://evil.example:8080/", false},
		{gMeta, "http://meta.lan/", false}, // link-local stays closed
		{gMeta, "http://169.254.169.254/", false},
		{gMeta, "http://loop.lan/", false}, // loopback stays closed
	} {
		u, _ := url.Parse(tc.url)
		err := check(t, tc.g, u)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v, want ok=%v", tc.url, err, tc.ok)
		}
	}
}

func check(t *testing.T, g *ssrf.Guard, u *url.URL) error {
	t.Helper()
	h, port, err := g.CheckURL(u)
	if err != nil {
		return err
	}
	_, err = g.Resolve(t.Context(), h, port)
	return err
}

// TestDialChecksWhatItDials: the dialer resolves itself and refuses when
// the answer at dial time is internal, whatever an earlier lookup said.
func TestDialChecksWhatItDials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	res := ssrftest.New().
		Sequence("rebind.test", []string{"127.0.0.1"}, []string{"10.0.0.1"}).
		Set("ok.test", "127.0.0.1")
	g := ssrf.New(ssrf.Options{Resolver: res, Ports: []uint16{port}, TestPublic: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	addr := net.JoinHostPort("rebind.test", itoa(port))
	c, err := g.DialContext(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("first dial: %v", err)
	}
	c.Close()
	if _, err := g.DialContext(t.Context(), "tcp", addr); !errors.Is(err, ssrf.ErrRefused) {
		t.Fatalf("second dial after the answer flipped: %v", err)
	}
	// Without the test-only option the fixture address is loopback.
	strict := ssrf.New(ssrf.Options{Resolver: res, Ports: []uint16{port}})
	if _, err := strict.DialContext(t.Context(), "tcp", net.JoinHostPort("ok.test", itoa(port))); !errors.Is(err, ssrf.ErrRefused) {
		t.Fatalf("loopback reachable without TestPublic: %v", err)
	}
	if _, err := strict.DialContext(t.Context(), "tcp", net.JoinHostPort("127.0.0.1", itoa(port))); !errors.Is(err, ssrf.ErrRefused) {
		t.Fatalf("loopback literal reachable: %v", err)
	}
	// A port outside the list is refused before any lookup.
	if _, err := g.DialContext(t.Context(), "tcp", "ok.test:22"); !errors.Is(err, ssrf.ErrRefused) {
		t.Fatalf("port 22: %v", err)
	}
	// Errors never name the address.
	_, err = g.DialContext(t.Context(), "tcp", addr)
	if err == nil || strings.Contains(err.Error(), "10.0.0.1") || strings.Contains(err.Error(), "rebind") {
		t.Fatalf("refusal text: %v", err)
	}
}

func itoa(p uint16) string {
	return netip.AddrPortFrom(netip.IPv4Unspecified(), p).String()[len("0.0.0.0:"):]
}

func TestParseDNSServers(t *testing.T) {
	got, err := ssrf.ParseDNSServers("1.1.1.1, 192.168.1.1:5353 2606:4700:4700::1111")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1.1.1.1:53", "192.168.1.1:5353", "[2606:4700:4700::1111]:53"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"", "dns.example", "1.1.1.1:x", "fe80::1%eth0"} {
		if _, err := ssrf.ParseDNSServers(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestDNSResolverUsesConfiguredServer: lookups go to the configured server,
// not the host's resolver; a fake DNS server over UDP answers one A record.
func TestDNSResolverUsesConfiguredServer(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go serveDNS(pc, [4]byte{93, 184, 216, 34})
	r := ssrf.NewDNSResolver([]string{pc.LocalAddr().String()}, 0)
	addrs, err := r.LookupNetIP(context.Background(), "ip4", "anything.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 1 || addrs[0].String() != "93.184.216.34" {
		t.Fatalf("answers: %v", addrs)
	}
}

// serveDNS answers every query with one A record (a minimal RFC 1035 reply).
func serveDNS(pc net.PacketConn, ip [4]byte) {
	buf := make([]byte, 512)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		q := buf[:n]
		// Question ends after the QNAME's zero byte plus QTYPE and QCLASS.
		i := 12
		for i < len(q) && q[i] != 0 {
			i += int(q[i]) + 1
		}
		end := i + 5
		if end > len(q) {
			continue
		}
		qtype := int(q[i+1])<<8 | int(q[i+2])
		resp := append([]byte{}, q[:end]...)
		resp[2] = 0x81 // QR, RD
		resp[3] = 0x80 // RA, NOERROR
		resp[6], resp[7] = 0, 0
		if qtype == 1 {
			resp[7] = 1
			resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ip[0], ip[1], ip[2], ip[3])
		}
		_, _ = pc.WriteTo(resp, addr)
	}
}
