// Package app wires the web service: its settings from the environment,
// the SSRF guard, the SearXNG client, the page fetcher and the comparer,
// and the three MCP tools built on them.
package app

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/web/compare"
	"github.com/toolgate/toolgate/services/web/fetch"
	"github.com/toolgate/toolgate/services/web/search"
	"github.com/toolgate/toolgate/services/web/ssrf"
)

// Environment variables (all optional except WEB_SEARXNG_URL).
const (
	EnvSearxURL        = "WEB_SEARXNG_URL"
	EnvSearxAllowHTTP  = "WEB_SEARXNG_ALLOW_HTTP"
	EnvSearxCAFile     = "WEB_SEARXNG_CA_FILE"
	EnvSearxTimeout    = "WEB_SEARXNG_TIMEOUT"
	EnvSearchResults   = "WEB_SEARCH_RESULTS"
	EnvSnippetChars    = "WEB_SEARCH_SNIPPET_CHARS"
	EnvFetchTimeout    = "WEB_FETCH_TIMEOUT"
	EnvFetchMaxBytes   = "WEB_FETCH_MAX_BYTES"
	EnvFetchMaxChars   = "WEB_FETCH_MAX_CHARS"
	EnvFetchRedirects  = "WEB_FETCH_MAX_REDIRECTS"
	EnvFetchPorts      = "WEB_FETCH_PORTS"
	EnvFetchConcurrent = "WEB_FETCH_MAX_CONCURRENT"
	EnvFetchUserAgent  = "WEB_FETCH_USER_AGENT"
	EnvAllowHosts      = "WEB_ALLOW_HOSTS"
	EnvDNS             = "WEB_DNS"
	// EnvDNSAlias is the seed's name for the same setting; WEB_DNS wins.
	EnvDNSAlias        = "AI_DNS"
	EnvCompareSources  = "WEB_COMPARE_SOURCES"
	EnvComparePassages = "WEB_COMPARE_PASSAGES"
	EnvCompareTimeout  = "WEB_COMPARE_TIMEOUT"
)

// Config is the web service's configuration.
type Config struct {
	SearxURL       string
	SearxAllowHTTP bool
	SearxCAFile    string
	SearxTimeout   time.Duration
	SearchResults  int
	SnippetChars   int

	FetchTimeout    time.Duration
	FetchMaxBytes   int64
	FetchMaxChars   int
	FetchRedirects  int
	FetchPorts      []uint16
	FetchConcurrent int
	UserAgent       string
	Allow           *ssrf.AllowList
	// DNSServers are host:port; empty means the system resolver.
	DNSServers []string

	CompareSources  int
	ComparePassages int
	CompareTimeout  time.Duration
}

// Load reads the configuration; every problem is reported at once, naming
// the variable and never its value.
func Load(l *config.Loader) (Config, error) {
	// WEB_SEARXNG_URL, _ALLOW_HTTP, _CA_FILE and _TIMEOUT: the settings of
	// every upstream application, with SearXNG's name.
	searx, _ := upstream.App{Prefix: "WEB_SEARXNG", Name: "SearXNG", DefaultTimeout: 15 * time.Second}.Load(l)
	c := Config{
		SearxURL:        searx.URL,
		SearxAllowHTTP:  searx.AllowHTTP,
		SearxCAFile:     searx.CAFile,
		SearxTimeout:    searx.Timeout,
		SearchResults:   l.Int(EnvSearchResults, search.DefaultLimit, 1, search.MaxLimit),
		SnippetChars:    l.Int(EnvSnippetChars, search.DefaultSnippetChars, 50, 1000),
		FetchTimeout:    l.Duration(EnvFetchTimeout, fetch.DefaultTimeout),
		FetchMaxBytes:   int64(l.Int(EnvFetchMaxBytes, fetch.DefaultMaxBytes, 64<<10, 32<<20)),
		FetchMaxChars:   l.Int(EnvFetchMaxChars, fetch.DefaultMaxChars, 1000, 100000),
		FetchRedirects:  l.Int(EnvFetchRedirects, fetch.DefaultMaxRedirects, 0, 10),
		FetchConcurrent: l.Int(EnvFetchConcurrent, fetch.DefaultMaxConcurrent, 1, 64),
		UserAgent:       l.String(EnvFetchUserAgent, fetch.DefaultUserAgent),
		CompareSources:  l.Int(EnvCompareSources, compare.DefaultSources, 1, compare.MaxSources),
		ComparePassages: l.Int(EnvComparePassages, compare.DefaultPassages, 1, compare.MaxPassages),
		CompareTimeout:  l.Duration(EnvCompareTimeout, compare.DefaultTimeout),
	}
	var errs []error
	ports, err := parsePorts(l.String(EnvFetchPorts, "80,443"))
	if err != nil {
		errs = append(errs, &config.SettingError{Name: EnvFetchPorts, Problem: err.Error()})
	}
	c.FetchPorts = ports
	allow, err := ssrf.ParseAllowList(l.String(EnvAllowHosts, ""))
	if err != nil {
		errs = append(errs, &config.SettingError{Name: EnvAllowHosts, Problem: err.Error()})
	}
	c.Allow = allow
	dnsVar := EnvDNS
	dns := l.String(EnvDNS, "")
	if dns == "" {
		dnsVar, dns = EnvDNSAlias, l.String(EnvDNSAlias, "")
	}
	if dns != "" {
		servers, err := ssrf.ParseDNSServers(dns)
		if err != nil {
			errs = append(errs, &config.SettingError{Name: dnsVar, Problem: err.Error()})
		}
		c.DNSServers = servers
	}
	if err := errors.Join(append([]error{l.Err()}, errs...)...); err != nil {
		return Config{}, fmt.Errorf("web: configuration: %w", err)
	}
	return c, nil
}

func parsePorts(s string) ([]uint16, error) {
	var out []uint16
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.ParseUint(f, 10, 16)
		if err != nil || n == 0 {
			return nil, errors.New("must be a comma-separated list of port numbers (1-65535), e.g. 80,443")
		}
		out = append(out, uint16(n))
	}
	if len(out) == 0 {
		return nil, errors.New("must name at least one port, e.g. 80,443")
	}
	return out, nil
}
