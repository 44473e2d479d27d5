package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/web/fetch"
	"github.com/toolgate/toolgate/services/web/ssrf"
	"github.com/toolgate/toolgate/services/web/ssrf/ssrftest"
)

// internalAddrs are the addresses the fake resolver hands out for internal
// names; no error or result may ever show one.
var internalAddrs = []string{"10.1.2.3", "169.254.169.254", "192.168.0.10", "fd00::1", "::ffff:10.0.0.1", "100.100.100.100", "127.0.0.1", "10.0.0.1"}

func resolver() *ssrftest.Resolver {
	return ssrftest.New().
		Set("example.com", "93.184.216.34").
		Set("public.test", "127.0.0.1").
		Set("private.test", "10.1.2.3").
		Set("metadata.test", "169.254.169.254").
		Set("mixed.test", "93.184.216.34", "192.168.0.10").
		Set("v6private.test", "fd00::1").
		Set("mapped.test", "::ffff:10.0.0.1").
		Set("tailnet.test", "100.100.100.100").
		Sequence("rebind.test", []string{"93.184.216.34"}, []string{"127.0.0.1"})
}

const articleHTML = `<!doctype html><html><head><title>Solar inverter firmware 2.1</title>
<meta property="article:published_time" content="2025-03-04T10:00:00Z">
<script>var secret = "script text must not appear";</script></head><body>
<nav>Home | About</nav><article><h1>Solar inverter firmware 2.1</h1>
<p>The firmware 2.1 for the solar inverter was published in March 2025. It improves the maximum power point tracking and fixes a bug in the export limit. Owners should install it through the vendor app.</p>
<p>The update takes about five minutes. The inverter restarts twice during the installation and feeds no power while updating. Do not switch off the DC isolator during the update.</p>
<p>See <a href="/docs/update">the update guide</a> for details about rollback and the known issues with older batteries.</p>
</article><footer>Footer text</footer></body></html>`

// fixture serves "public" pages on 127.0.0.1, reachable only through the
// test-only TestPublic option.
func fixture(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("Gr\xfc\xdfe aus K\xf6ln"))
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "plain  text\nline two")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.api+json")
		fmt.Fprint(w, `{"version":"2.1"}`)
	})
	mux.HandleFunc("/sniff", func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = nil // no type: sniffed
		fmt.Fprint(w, "<html><head><title>Sniffed</title></head><body><p>sniffed html page</p></body></html>")
	})
	mux.HandleFunc("/pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		fmt.Fprint(w, "%PDF-1.7")
	})
	mux.HandleFunc("/odd-type", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-evil<script>10.9.8.7")
		fmt.Fprint(w, "x")
	})
	mux.HandleFunc("/endless", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("endless stream ", 1000))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/hang", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/hang-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "start")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		fmt.Fprint(w, "UPSTREAM-BODY-SECRET internal host db.lan 10.9.8.7")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	return srv, "http://public.test:" + strconv.Itoa(port)
}

func newFetcher(t *testing.T, srv *httptest.Server, mod func(*fetch.Config)) *fetch.Fetcher {
	t.Helper()
	ports := []uint16{80, 443}
	var testPublic []netip.Prefix
	if srv != nil {
		ports = append(ports, uint16(srv.Listener.Addr().(*net.TCPAddr).Port))
		testPublic = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}
	g := ssrf.New(ssrf.Options{Resolver: resolver(), Ports: ports, TestPublic: testPublic})
	cfg := fetch.Config{Guard: g, Timeout: 5 * time.Second, Now: func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) }}
	if mod != nil {
		mod(&cfg)
	}
	f, err := fetch.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkRefused asserts a guard refusal whose message names no address.
func checkRefused(t *testing.T, raw string, err error, extra ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: fetched, want refused", raw)
		return
	}
	if !errors.Is(err, ssrf.ErrRefused) || toolerr.CodeOf(err) != toolerr.Forbidden {
		t.Errorf("%s: %v (code %s), want a guard refusal", raw, err, toolerr.CodeOf(err))
	}
	msg := toolerr.MessageOf(err)
	leaks := append(append([]string{}, internalAddrs...), extra...)
	if u, perr := url.Parse(raw); perr == nil && u.Hostname() != "" {
		leaks = append(leaks, u.Hostname())
	}
	for _, s := range leaks {
		if s != "" && strings.Contains(msg, s) {
			t.Errorf("%s: message %q names %q", raw, msg, s)
		}
	}
}

// TestHostileURLs: every way of pointing the fetcher at this machine or the
// home network is refused, by a guard that has no test-only exceptions.
func TestHostileURLs(t *testing.T) {
	f := newFetcher(t, nil, nil)
	hostile := []string{
		// IPv4 literals and their odd spellings
		"http://127.0.0.1/", "http://127.1/", "http://2130706433/", "http://0x7f000001/",
		"http://0177.0.0.1/", "http://0x7f.0x0.0x0.0x1/", "http://127.000.000.001/", "http://0x7f.1/",
		"http://0/", "http://0.0.0.0/", "http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/",
		"http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/", "http://198.18.0.1/",
		"http://192.0.0.1/", "http://224.0.0.1/", "http://255.255.255.255/", "http://１２７.０.０.１/",
		// IPv6 forms
		"http://[::1]/", "http://[::]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/",
		"http://[::ffff:169.254.169.254]/", "http://[64:ff9b::10.0.0.1]/", "http://[2002:c0a8:0101::1]/",
		"http://[::127.0.0.1]/", "http://[fc00::1]/", "http://[fd12:3456::1]/", "http://[fe80::1]/",
		"http://[fe80::1%25eth0]/", "http://[ff02::1]/", "http://[2001:db8::1]/",
		// localhost names
		"http://localhost/", "http://LOCALHOST./", "http://foo.localhost/", "http://localhost.localdomain/",
		"http://ip6-localhost/",
		// names resolving to internal addresses
		"http://private.test/", "http://metadata.test/latest/meta-data/", "http://mixed.test/",
		"http://v6private.test/", "http://mapped.test/", "http://tailnet.test/",
		// answers public when checked, loopback when dialled
		"http://rebind.test/",
		// credentials and userinfo tricks
		"http://alice:s3cr3tPW@example.com/", "http://alice@example.com/", "http://example.com@10.0.0.1/",
		"http://example.com:80@169.254.169.254/", "http://10.0.0.1#@example.com/",
		// odd ports and schemes
		"http://example.com:22/", "http://example.com:8080/", "https://example.com:25/", "http://example.com:0/",
		"ftp://example.com/", "file:///etc/passwd", "gopher://example.com/", "javascript:alert(1)",
	}
	if len(hostile) < 40 {
		t.Fatalf("only %d hostile URLs", len(hostile))
	}
	for _, raw := range hostile {
		_, err := f.Fetch(t.Context(), raw, 0)
		checkRefused(t, raw, err, "alice", "s3cr3tPW")
	}
}

// TestRedirectsToInternalRefused: a public page redirecting inward is
// refused at the hop, however the target is written.
func TestRedirectsToInternalRefused(t *testing.T) {
	srv, base := fixture(t)
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	f := newFetcher(t, srv, nil)
	for _, to := range []string{
		"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://localhost:" + port + "/article",
		"http://[::1]:" + port + "/article", "http://127.0.0.2:" + port + "/article", "http://private.test/",
		"http://metadata.test/", "http://alice:s3cr3tPW@public.test:" + port + "/article", "ftp://public.test/",
		"http://public.test:22/", "http://2130706433/", "http://[::ffff:10.0.0.1]/",
		// two hops: public → public → internal
		base + "/redirect?to=" + url.QueryEscape("http://192.168.1.1/"),
	} {
		raw := base + "/redirect?to=" + url.QueryEscape(to)
		_, err := f.Fetch(t.Context(), raw, 0)
		checkRefused(t, to, err, "alice", "s3cr3tPW")
		if err != nil && !strings.Contains(toolerr.MessageOf(err), "redirect") {
			t.Errorf("%s: message does not say it was a redirect: %s", to, toolerr.MessageOf(err))
		}
	}
	// Redirects within public pages are followed, and the final URL shown.
	page, err := f.Fetch(t.Context(), base+"/redirect?to=/article", 0)
	if err != nil {
		t.Fatal(err)
	}
	if page.FinalURL != base+"/article" || page.URL != base+"/redirect?to=/article" {
		t.Fatalf("urls: %q %q", page.URL, page.FinalURL)
	}
	// A loop stops at the bound.
	_, err = f.Fetch(t.Context(), base+"/loop", 0)
	if toolerr.CodeOf(err) != toolerr.UpstreamUnavailable || !strings.Contains(toolerr.MessageOf(err), "more than 5") {
		t.Fatalf("loop: %v", err)
	}
	none := newFetcher(t, srv, func(c *fetch.Config) { c.MaxRedirects = -1 })
	if _, err := none.Fetch(t.Context(), base+"/redirect?to=/article", 0); err == nil {
		t.Fatal("redirect followed with redirects disabled")
	}
}

func TestReadsPages(t *testing.T) {
	srv, base := fixture(t)
	f := newFetcher(t, srv, nil)
	page, err := f.Fetch(t.Context(), base+"/article#section", 0)
	if err != nil {
		t.Fatal(err)
	}
	if page.Title != "Solar inverter firmware 2.1" || page.Published != "2025-03-04" || page.ContentType != "text/html" ||
		page.RetrievedAt != "2025-06-01T12:00:00Z" || page.URL != base+"/article" || page.FinalURL != "" || page.Truncated {
		t.Fatalf("page: %+v", page)
	}
	for _, want := range []string{"maximum power point tracking", "DC isolator", "[the update guide](" + base + "/docs/update)"} {
		if !strings.Contains(page.Content, want) {
			t.Errorf("content lacks %q:\n%s", want, page.Content)
		}
	}
	for _, unwanted := range []string{"script text must not appear", "<p>", "Footer text"} {
		if strings.Contains(page.Content, unwanted) {
			t.Errorf("content has %q:\n%s", unwanted, page.Content)
		}
	}
	for _, tc := range []struct{ path, ctype, content string }{
		{"/text", "text/plain", "plain  text\nline two"},
		{"/latin1", "text/plain", "Grüße aus Köln"},
		{"/json", "application/vnd.api+json", `{"version":"2.1"}`},
		{"/sniff", "text/html", "sniffed html page"},
	} {
		p, err := f.Fetch(t.Context(), base+tc.path, 0)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if p.ContentType != tc.ctype || !strings.Contains(p.Content, tc.content) {
			t.Errorf("%s: %+v", tc.path, p)
		}
	}
	// max_chars cuts the text and says so.
	p, err := f.Fetch(t.Context(), base+"/article", 100)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || len([]rune(p.Content)) != 101 || !strings.HasSuffix(p.Content, "…") {
		t.Fatalf("cut: %d %q", len([]rune(p.Content)), p.Content)
	}
}

func TestRefusedTypesAndStatuses(t *testing.T) {
	srv, base := fixture(t)
	f := newFetcher(t, srv, nil)
	for _, tc := range []struct {
		path string
		code toolerr.Code
		msg  string
	}{
		{"/pdf", toolerr.InvalidArgument, "application/pdf, not HTML, plain text or JSON"},
		{"/odd-type", toolerr.InvalidArgument, "an unsupported type"},
		{"/status/404", toolerr.NotFound, "HTTP 404"},
		{"/status/403", toolerr.Forbidden, "HTTP 403"},
		{"/status/429", toolerr.Busy, "429"},
		{"/status/500", toolerr.UpstreamUnavailable, "HTTP 500"},
		{"/status/418", toolerr.UpstreamUnavailable, "HTTP 418"},
	} {
		_, err := f.Fetch(t.Context(), base+tc.path, 0)
		if toolerr.CodeOf(err) != tc.code || !strings.Contains(toolerr.MessageOf(err), tc.msg) {
			t.Errorf("%s: %v", tc.path, err)
		}
		for _, leak := range []string{"UPSTREAM-BODY-SECRET", "db.lan", "10.9.8.7", "<script>"} {
			if strings.Contains(toolerr.MessageOf(err), leak) {
				t.Errorf("%s: message leaks %q", tc.path, leak)
			}
		}
	}
	// Unknown names and unparseable URLs get clear errors.
	_, err := f.Fetch(t.Context(), "http://nxdomain.test/", 0)
	if toolerr.CodeOf(err) != toolerr.NotFound || !strings.Contains(toolerr.MessageOf(err), "does not exist") {
		t.Errorf("nxdomain: %v", err)
	}
	for _, bad := range []string{"", "not a url", "/relative", "http://exa mple.com/", "http://example.com/\r\nX: y", strings.Repeat("a", 3000)} {
		if _, err := f.Fetch(t.Context(), bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLimits: the byte cap holds against an endless body (reading stops
// at the cap, the page comes back marked truncated), and the deadline holds
// against a server that never answers or stalls mid-body.
func TestLimits(t *testing.T) {
	srv, base := fixture(t)
	f := newFetcher(t, srv, func(c *fetch.Config) { c.MaxBytes = 64 << 10 })
	p, err := f.Fetch(t.Context(), base+"/endless", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || len(p.Content) > 64<<10+len("…") {
		t.Fatalf("endless: truncated=%v len=%d", p.Truncated, len(p.Content))
	}
	if len([]rune(p.Content)) != fetch.DefaultMaxChars+1 {
		t.Fatalf("char cap: %d", len([]rune(p.Content)))
	}
	short := newFetcher(t, srv, func(c *fetch.Config) { c.Timeout = 150 * time.Millisecond })
	for _, path := range []string{"/hang", "/hang-body"} {
		_, err := short.Fetch(t.Context(), base+path, 0)
		if toolerr.CodeOf(err) != toolerr.Timeout || !strings.Contains(toolerr.MessageOf(err), "did not load within 150ms") {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// TestConcurrencyBound: with every slot taken a fetch waits and gives up
// at its deadline with busy.
func TestConcurrencyBound(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	base := "http://public.test:" + strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	f := newFetcher(t, srv, func(c *fetch.Config) { c.MaxConcurrent = 1 })
	holdCtx, release := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := f.Fetch(holdCtx, base+"/hold", 0); done <- err }()
	<-arrived // the first fetch holds the only slot
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := f.Fetch(ctx, base+"/second", 0)
	if toolerr.CodeOf(err) != toolerr.Busy {
		t.Fatalf("second fetch: %v", err)
	}
	release()
	<-done
}
