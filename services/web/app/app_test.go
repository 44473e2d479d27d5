package app_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/web/app"
	"github.com/toolgate/toolgate/services/web/fakesearx"
	"github.com/toolgate/toolgate/services/web/ssrf"
	"github.com/toolgate/toolgate/services/web/ssrf/ssrftest"
)

type env struct {
	svc  *toolkittest.Service
	base string // the fake's base URL, as result links use it
	logs *bytes.Buffer
}

func start(t *testing.T, opts fakesearx.Options) env {
	t.Helper()
	srv := httptest.NewServer(fakesearx.New(opts))
	t.Cleanup(srv.Close)
	return startAt(t, srv.URL, srv.Listener.Addr().(*net.TCPAddr).Port)
}

// startAt runs the web service against the SearXNG at searxURL; pages on
// the loopback port (0: none) may be fetched.
func startAt(t *testing.T, searxURL string, port int) env {
	t.Helper()
	ports := "80,443"
	if port != 0 {
		ports += "," + strconv.Itoa(port)
	}
	cfg, err := app.Load(config.New(mapEnv(map[string]string{
		app.EnvSearxURL: searxURL, app.EnvSearxAllowHTTP: "true",
		app.EnvFetchPorts: ports, app.EnvFetchTimeout: "5s",
	})))
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	w, err := app.New(cfg, app.Deps{
		Logger:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Resolver:   ssrftest.New().Set("private.test", "10.1.2.3"),
		TestPublic: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		Now:        func() time.Time { return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return env{svc: toolkittest.Start(t, "web", w.Tools()), base: "http://127.0.0.1:" + strconv.Itoa(port), logs: logs}
}

func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDocTable(t *testing.T) {
	start(t, fakesearx.Options{}).svc.CheckDocTable(t, "../../../docs/services/web.md")
}

func TestSearchTool(t *testing.T) {
	e := start(t, fakesearx.Options{Unresponsive: [][2]string{{"brave", "too many requests"}}})
	out, isErr := e.svc.Call(t, "web_search", map[string]any{"query": "nimbus 3.2 release", "max_results": 3}, "")
	if isErr {
		t.Fatalf("%v", out)
	}
	results := out["results"].([]any)
	if len(results) != 3 || out["notice"] != app.UntrustedNotice || out["more_available"] != true {
		t.Fatalf("%v", out)
	}
	un := out["unresponsive_engines"].([]any)[0].(map[string]any)
	if un["engine"] != "brave" || un["reason"] != "too many requests" {
		t.Fatalf("unresponsive: %v", un)
	}
	// Schema violations never reach SearXNG.
	for _, bad := range []map[string]any{
		{"query": ""}, {"query": "x", "max_results": 50}, {"query": "x", "time_range": "decade"},
		{"query": "x", "language": "de\r\nX: 1"}, {"query": "x", "extra": 1}, {"query": "x", "categories": []string{"images"}},
	} {
		if out, isErr := e.svc.Call(t, "web_search", bad, ""); !isErr {
			t.Errorf("%v accepted: %v", bad, out)
		}
	}
}

var frameRE = regexp.MustCompile(`(?s)^\[BEGIN UNTRUSTED WEB CONTENT ([0-9a-f]{12})\]\n(.*)\n\[END UNTRUSTED WEB CONTENT ([0-9a-f]{12})\]$`)

// TestInjectedInstructionsAreFramedData: a page that tells the model what
// to do comes back verbatim as data inside the untrusted frame, with the
// notice, and the service does nothing it says.
func TestInjectedInstructionsAreFramedData(t *testing.T) {
	e := start(t, fakesearx.Options{})
	out, isErr := e.svc.Call(t, "web_fetch", map[string]any{"url": e.base + "/pages/nimbus-tips"}, "")
	if isErr {
		t.Fatalf("%v", out)
	}
	m := frameRE.FindStringSubmatch(out["content"].(string))
	if m == nil || m[1] != m[3] {
		t.Fatalf("content is not framed: %q", out["content"])
	}
	if !strings.Contains(m[2], fakesearx.InjectionMarker) || !strings.Contains(m[2], "scrub") {
		t.Fatalf("framed content: %q", m[2])
	}
	if out["notice"] != app.UntrustedNotice || out["title"] != "10 tips for Nimbus 3.2" || out["retrieved_at"] != "2025-06-01T12:00:00Z" {
		t.Fatalf("%v", out)
	}
	// Two fetches get different frame ids, so a page cannot know the id
	// that would close its frame.
	out2, _ := e.svc.Call(t, "web_fetch", map[string]any{"url": e.base + "/pages/nimbus-tips"}, "")
	if m2 := frameRE.FindStringSubmatch(out2["content"].(string)); m2 == nil || m2[1] == m[1] {
		t.Fatal("frame id repeats")
	}
}

// TestNoInternalDetailsInResults: refusals through the MCP layer name no
// internal address, no redirect target and no credentials, and neither do
// the logs; the service token never shows.
func TestNoInternalDetailsInResults(t *testing.T) {
	e := start(t, fakesearx.Options{})
	var all strings.Builder
	for _, u := range []string{
		"http://private.test/", "http://10.9.8.7/", "http://[::ffff:10.9.8.7]/", "http://169.254.169.254/latest/meta-data/",
		"http://alice:Pa55w0rd-planted@example.com/", e.base + "/pages/nimbus-mirror", e.base + "/pages/nimbus-manual.pdf",
		e.base + "/pages/missing", "http://example.com:8443/?token=" + toolkittest.ServiceToken,
	} {
		out, isErr := e.svc.Call(t, "web_fetch", map[string]any{"url": u}, "")
		if !isErr {
			t.Errorf("%s: fetched: %v", u, out)
		}
		b, _ := json.Marshal(out)
		all.Write(b)
	}
	text := all.String() + e.logs.String()
	for _, leak := range []string{"10.1.2.3", "10.9.8.7", "169.254.169.254", "Pa55w0rd-planted", "alice", toolkittest.ServiceToken} {
		if strings.Contains(text, leak) {
			t.Errorf("output or logs contain %q:\n%s", leak, text)
		}
	}
	if !strings.Contains(all.String(), "redirect 1 of the page was refused") || !strings.Contains(all.String(), "application/pdf") {
		t.Errorf("expected messages missing:\n%s", all.String())
	}
}

func TestCompareTool(t *testing.T) {
	e := start(t, fakesearx.Options{})
	out, isErr := e.svc.Call(t, "web_compare_sources", map[string]any{"question": "When was Nimbus NAS OS 3.2 released?", "query": "nimbus 3.2 release date"}, "")
	if isErr {
		t.Fatalf("%v", out)
	}
	sources := out["sources"].([]any)
	if len(sources) != 3 || out["notice"] != app.UntrustedNotice {
		t.Fatalf("%v", out)
	}
	b, _ := json.Marshal(out)
	if len(b) > 8000 {
		t.Errorf("comparison is not compact: %d bytes", len(b))
	}
}

func TestLoad(t *testing.T) {
	c, err := app.Load(config.New(mapEnv(map[string]string{
		app.EnvSearxURL: "http://searxng:8080", app.EnvSearxAllowHTTP: "yes", app.EnvDNSAlias: "1.1.1.1, 9.9.9.9:5353",
		app.EnvAllowHosts: "wiki.lan:8080,192.168.7.0/24",
	})))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.DNSServers, " ") != "1.1.1.1:53 9.9.9.9:5353" || c.Allow.Len() != 2 || c.SearchResults != 8 ||
		c.FetchMaxBytes != 2<<20 || len(c.FetchPorts) != 2 {
		t.Fatalf("%+v", c)
	}
	c, err = app.Load(config.New(mapEnv(map[string]string{app.EnvSearxURL: "https://s.example", app.EnvDNS: "8.8.8.8", app.EnvDNSAlias: "1.1.1.1"})))
	if err != nil || c.DNSServers[0] != "8.8.8.8:53" {
		t.Fatalf("WEB_DNS must win over AI_DNS: %v %v", c.DNSServers, err)
	}
	_, err = app.Load(config.New(mapEnv(map[string]string{
		app.EnvSearxURL: "http://u:Secr3tValue@searx", app.EnvFetchPorts: "80,http", app.EnvAllowHosts: "localhost",
		app.EnvDNS: "dns.example", app.EnvSearchResults: "99",
	})))
	var se *config.SettingError
	if err == nil || !errors.As(err, &se) {
		t.Fatalf("bad settings accepted: %v", err)
	}
	for _, name := range []string{app.EnvSearxURL, app.EnvFetchPorts, app.EnvAllowHosts, app.EnvDNS, app.EnvSearchResults} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error does not name %s: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), "Secr3tValue") {
		t.Errorf("error shows a value: %v", err)
	}
	if _, err := app.Load(config.New(mapEnv(nil))); err == nil || !strings.Contains(err.Error(), app.EnvSearxURL) {
		t.Fatalf("missing URL: %v", err)
	}
}

// TestGuardDefaults: the production wiring has no test exceptions, so the
// fake's own loopback pages are refused.
func TestGuardDefaults(t *testing.T) {
	srv := httptest.NewServer(fakesearx.NewDemo())
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	cfg, err := app.Load(config.New(mapEnv(map[string]string{app.EnvSearxURL: srv.URL, app.EnvSearxAllowHTTP: "true", app.EnvFetchPorts: "80,443," + port})))
	if err != nil {
		t.Fatal(err)
	}
	w, err := app.New(cfg, app.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	svc := toolkittest.Start(t, "web", w.Tools())
	out, isErr := svc.Call(t, "web_fetch", map[string]any{"url": srv.URL + "/pages/nimbus-tips"}, "")
	if !isErr || !strings.Contains(out["error"].(map[string]any)["message"].(string), "loopback") {
		t.Fatalf("loopback fixture reachable by default: %v", out)
	}
	_ = ssrf.DefaultPorts
}
