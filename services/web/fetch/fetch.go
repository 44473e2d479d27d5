// Package fetch downloads one public web page through the SSRF guard and
// turns it into readable text: HTML through a readability extractor and an
// HTML-to-Markdown converter, plain text and JSON as they are. Every fetch
// is bounded: one deadline over connect, headers and body, a byte cap
// enforced while the body streams, a bounded number of redirects (each hop
// checked again by the guard at connection time), and a cap on the text
// returned.
//
// Errors are *toolerr.Error values whose messages never contain an address,
// a redirect target or anything from the response body.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/web/ssrf"
)

// Defaults for zero Config fields.
const (
	DefaultTimeout       = 15 * time.Second
	DefaultMaxBytes      = 2 << 20
	DefaultMaxChars      = 12000
	DefaultMaxRedirects  = 5
	DefaultMaxConcurrent = 8
	DefaultUserAgent     = "toolgate-web/1.0 (self-hosted assistant; +https://github.com/toolgate/toolgate)"
	// MaxURLLength bounds the URL a caller may pass.
	MaxURLLength = 2048
)

// Config configures a Fetcher.
type Config struct {
	// Guard checks every URL and every dialled address; required.
	Guard *ssrf.Guard
	// Timeout covers connecting, redirects, headers and the body.
	Timeout time.Duration
	// MaxBytes caps the downloaded body; reading stops there and the page
	// is processed from what arrived and marked truncated.
	MaxBytes int64
	// MaxChars caps the returned text (in characters).
	MaxChars int
	// MaxRedirects bounds the redirect hops followed.
	MaxRedirects int
	// MaxConcurrent bounds fetches in flight; further fetches wait for a
	// slot until their deadline.
	MaxConcurrent int
	UserAgent     string
	Logger        *slog.Logger
	// Now is the clock for RetrievedAt; nil means time.Now.
	Now func() time.Time
}

// Fetcher fetches pages. It is safe for concurrent use.
type Fetcher struct {
	cfg Config
	hc  *http.Client
	sem chan struct{}
	log *slog.Logger
}

// Page is a fetched page.
type Page struct {
	URL string `json:"url"`
	// FinalURL is set when redirects led elsewhere.
	FinalURL    string `json:"final_url,omitempty"`
	Title       string `json:"title,omitempty"`
	Published   string `json:"published,omitempty"`
	ContentType string `json:"content_type"`
	RetrievedAt string `json:"retrieved_at"`
	// Truncated says the body hit the byte cap or the text the char cap.
	Truncated bool `json:"truncated,omitempty"`
	// Content is Markdown for HTML, the text itself for plain text and
	// JSON. It is untrusted data.
	Content string `json:"content"`
}

// New builds a Fetcher with its own transport: no proxy from the
// environment, dialling only through the guard.
func New(cfg Config) (*Fetcher, error) {
	if cfg.Guard == nil {
		return nil, errors.New("fetch: a guard is required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxChars <= 0 {
		cfg.MaxChars = DefaultMaxChars
	}
	if cfg.MaxRedirects < 0 {
		cfg.MaxRedirects = 0
	} else if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	tr := &http.Transport{
		// A proxy would dial for us and bypass the guard.
		Proxy:                  nil,
		DialContext:            cfg.Guard.DialContext,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    min(cfg.Timeout, 10*time.Second),
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           32,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	f := &Fetcher{cfg: cfg, sem: make(chan struct{}, cfg.MaxConcurrent), log: cfg.Logger}
	f.hc = &http.Client{Transport: tr, CheckRedirect: f.checkRedirect}
	return f, nil
}

// MaxChars is the configured cap on returned text.
func (f *Fetcher) MaxChars() int { return f.cfg.MaxChars }

// redirectError marks a refusal at a redirect hop.
type redirectError struct {
	hop int
	err error
}

func (e *redirectError) Error() string { return fmt.Sprintf("redirect hop %d: %v", e.hop, e.err) }
func (e *redirectError) Unwrap() error { return e.err }

var errTooManyRedirects = errors.New("too many redirects")

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > f.cfg.MaxRedirects {
		return errTooManyRedirects
	}
	h, port, err := f.cfg.Guard.CheckURL(req.URL)
	if err == nil {
		// Resolved here for a clear "redirect refused" error; the dialer
		// checks the address it actually dials again.
		_, err = f.cfg.Guard.Resolve(req.Context(), h, port)
	}
	var refused *ssrf.Error
	if errors.As(err, &refused) {
		return &redirectError{hop: len(via), err: err}
	}
	return err
}

// ParseURL validates a caller's URL without any network access.
func (f *Fetcher) ParseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > MaxURLLength {
		return nil, toolerr.New(toolerr.InvalidArgument, "the URL must be 1 to %d characters", MaxURLLength)
	}
	if strings.ContainsAny(raw, "\x00\r\n\t\\") {
		return nil, toolerr.New(toolerr.InvalidArgument, "the URL contains control characters or a backslash")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, toolerr.New(toolerr.InvalidArgument, "the URL is not an absolute http(s) URL")
	}
	if _, _, err := f.cfg.Guard.CheckURL(u); err != nil {
		return nil, refusal(err, 0)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

// Fetch downloads rawURL and returns its readable text capped at maxChars
// (0 or more than the configured cap means the configured cap).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string, maxChars int) (*Page, error) {
	u, err := f.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if maxChars <= 0 || maxChars > f.cfg.MaxChars {
		maxChars = f.cfg.MaxChars
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, toolerr.New(toolerr.Busy, "too many page fetches in flight; try again shortly")
	}
	defer func() { <-f.sem }()

	// Resolve and check once before connecting, for a clear early error;
	// the dialer resolves and checks again and dials only what it checked,
	// so an answer that changes in between (DNS rebinding) is caught too.
	h, port, _ := f.cfg.Guard.CheckURL(u)
	if _, err := f.cfg.Guard.Resolve(ctx, h, port); err != nil {
		return nil, f.transportErr(ctx, err)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, toolerr.New(toolerr.InvalidArgument, "the URL cannot be requested")
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.1")
	resp, err := f.hc.Do(req)
	if err != nil {
		return nil, f.transportErr(ctx, err)
	}
	defer resp.Body.Close()
	if err := statusErr(resp.StatusCode); err != nil {
		return nil, err
	}
	mediaType, params := mediaTypeOf(resp.Header.Get("Content-Type"))
	// Read one byte past the cap to tell "exactly at the cap" from "over".
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.cfg.MaxBytes+1))
	if err != nil {
		return nil, f.transportErr(ctx, err)
	}
	truncated := int64(len(body)) > f.cfg.MaxBytes
	if truncated {
		body = body[:f.cfg.MaxBytes]
	}
	if mediaType == "" {
		mediaType, params = mediaTypeOf(http.DetectContentType(body))
	}
	kind, ok := kindOf(mediaType)
	if !ok {
		return nil, toolerr.New(toolerr.InvalidArgument, "the page is %s, not HTML, plain text or JSON; only those can be read", safeType(mediaType))
	}
	final := resp.Request.URL
	page := &Page{URL: u.String(), ContentType: mediaType, RetrievedAt: f.cfg.Now().UTC().Format(time.RFC3339), Truncated: truncated}
	if final.String() != u.String() {
		page.FinalURL = final.String()
	}
	switch kind {
	case kindHTML:
		if err := f.readHTML(ctx, page, body, params["charset"], final); err != nil {
			return nil, err
		}
	default:
		page.Content = strings.TrimSpace(decodeText(body, params["charset"]))
	}
	if cut, ok := capChars(page.Content, maxChars); ok {
		page.Content, page.Truncated = cut, true
	}
	return page, nil
}

type kind int

const (
	kindHTML kind = iota
	kindText
	kindJSON
)

func kindOf(mediaType string) (kind, bool) {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return kindHTML, true
	case mediaType == "text/plain", mediaType == "text/markdown", mediaType == "text/csv":
		return kindText, true
	case mediaType == "application/json", strings.HasPrefix(mediaType, "application/") && strings.HasSuffix(mediaType, "+json"):
		return kindJSON, true
	}
	return 0, false
}

func mediaTypeOf(v string) (string, map[string]string) {
	if v == "" {
		return "", nil
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
	}
	return mt, params
}

// safeType returns a media type fit for an error message: a short token, or
// a placeholder.
func safeType(mt string) string {
	if mt == "" || len(mt) > 80 || strings.Trim(mt, "abcdefghijklmnopqrstuvwxyz0123456789/.+-") != "" {
		return "an unsupported type"
	}
	return mt
}

func decodeText(body []byte, cs string) string {
	if cs != "" && !strings.EqualFold(cs, "utf-8") {
		if r, err := charset.NewReader(bytes.NewReader(body), "text/plain; charset="+cs); err == nil {
			if b, err := io.ReadAll(r); err == nil {
				return strings.ToValidUTF8(string(b), "\uFFFD")
			}
		}
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

func (f *Fetcher) readHTML(ctx context.Context, page *Page, body []byte, cs string, base *url.URL) error {
	r, err := charset.NewReader(bytes.NewReader(body), "text/html; charset="+cs)
	if err != nil {
		r = bytes.NewReader(body)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the page's HTML cannot be parsed")
	}
	node := doc
	article, err := readability.FromDocument(doc, base)
	if err == nil && article.Node != nil {
		node = article.Node
		page.Title = oneLine(article.Title())
		if t, err := article.PublishedTime(); err == nil {
			page.Published = t.UTC().Format("2006-01-02")
		}
	}
	if page.Title == "" {
		page.Title = oneLine(titleOf(doc))
	}
	if node == doc {
		node = stripNonContent(doc)
	}
	md, err := htmltomarkdown.ConvertNode(node, converter.WithContext(ctx), converter.WithDomain(base.Scheme+"://"+base.Host))
	if err != nil {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the page's HTML cannot be converted to text")
	}
	page.Content = tidy(string(md))
	return nil
}

// stripNonContent removes scripts, styles and similar from a document that
// readability could not extract, and returns its body.
func stripNonContent(doc *html.Node) *html.Node {
	var drop []*html.Node
	var body *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "noscript", "template", "iframe", "svg", "head":
				drop = append(drop, n)
				return
			case "body":
				body = n
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
	if body != nil {
		return body
	}
	return doc
}

func titleOf(doc *html.Node) string {
	var t string
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Data == "title" && n.FirstChild != nil {
			t = n.FirstChild.Data
			return true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(doc)
	return t
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if cut, ok := capChars(s, 300); ok {
		return cut
	}
	return s
}

// tidy collapses runs of blank lines.
func tidy(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// capChars cuts s to at most n characters and appends an ellipsis.
func capChars(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return s[:i] + "…", true
}

func statusErr(s int) error {
	switch {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusNotFound || s == http.StatusGone:
		return toolerr.New(toolerr.NotFound, "the page does not exist (HTTP %d)", s)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return toolerr.New(toolerr.Forbidden, "the site refused access to the page (HTTP %d); it may need a login or block automated access", s)
	case s == http.StatusTooManyRequests:
		return toolerr.New(toolerr.Busy, "the site is rate limiting (HTTP 429); try another source or later")
	case s >= 300 && s < 400:
		return toolerr.New(toolerr.UpstreamUnavailable, "the page answered with a redirect that cannot be followed (HTTP %d)", s)
	case s >= 500:
		return toolerr.New(toolerr.UpstreamUnavailable, "the site failed (HTTP %d); try another source", s)
	}
	return toolerr.New(toolerr.UpstreamUnavailable, "the site answered HTTP %d", s)
}

// refusal turns a guard refusal into a client error; hop > 0 says it
// happened at a redirect.
func refusal(err error, hop int) error {
	var se *ssrf.Error
	msg := "the URL is refused"
	if errors.As(err, &se) {
		msg = se.Msg
	}
	if hop > 0 {
		return toolerr.Wrap(toolerr.Forbidden, err, "redirect %d of the page was refused: %s", hop, msg)
	}
	return toolerr.Wrap(toolerr.Forbidden, err, "fetching this URL is refused: %s", msg)
}

func refusedClass(err error) ssrf.Class {
	var se *ssrf.Error
	if errors.As(err, &se) {
		return se.Class
	}
	return ""
}

// transportErr maps a failure to a client-safe error. The text of err (it
// holds addresses and URLs) stays in the hidden cause.
func (f *Fetcher) transportErr(ctx context.Context, err error) error {
	var (
		re       *redirectError
		se       *ssrf.Error
		dnsErr   *net.DNSError
		hostname x509.HostnameError
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		netErr   net.Error
	)
	switch {
	case errors.As(err, &re):
		f.log.InfoContext(ctx, "fetch refused at a redirect", "hop", re.hop, "rule", refusedClass(re.err))
		return refusal(re.err, re.hop)
	case errors.As(err, &se):
		f.log.InfoContext(ctx, "fetch refused", "rule", se.Class)
		return refusal(se, 0)
	case errors.Is(err, errTooManyRedirects):
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the page redirects more than %d times", f.cfg.MaxRedirects)
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		return toolerr.Wrap(toolerr.Timeout, err, "the page did not load within %s", f.cfg.Timeout)
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return toolerr.Wrap(toolerr.NotFound, err, "the host name does not exist")
		}
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the host name could not be resolved; check the DNS server setting")
	case errors.As(err, &hostname), errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &verify):
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the site's TLS certificate is not valid")
	case errors.As(err, &netErr) && netErr.Timeout():
		return toolerr.Wrap(toolerr.Timeout, err, "the page did not load within %s", f.cfg.Timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the site refused the connection")
	}
	return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the page could not be fetched")
}
