// Package upstream is the bounded HTTP client every tool service uses to talk
// to its home-lab application (Sonarr, Home Assistant, Frigate, ...).
//
// Every request is bounded: one deadline per attempt covers headers and body,
// the body is capped while it streams, redirects are refused (never
// followed), at most MaxConcurrent requests are in flight (beyond that Do
// answers Busy at once instead of queueing), and only idempotent reads are
// retried, at most twice, with jittered backoff and a bounded Retry-After.
// Plain http:// needs an explicit opt-in; a private CA bundle may be added to
// the system roots.
//
// Every error is a *toolerr.Error whose message is safe for clients: it never
// carries an upstream body, a header value, URL userinfo or query parameters.
//
// Do returns a *Response for every final status other than a redirect and an
// error only when no usable response arrived; Response.Err maps a non-2xx
// status to a toolerr code. GetJSON and PostJSON do both steps for you.
package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxBytes      = 4 << 20
	DefaultMaxConcurrent = 8
	DefaultRetries       = 2
	DefaultMaxRetryAfter = 5 * time.Second
)

const (
	// maxRetries is the hard ceiling on retries whatever the config says.
	maxRetries = 2
	// backoffBase is the first backoff window; attempt n waits a uniformly
	// random duration in [0, backoffBase<<n) ("full jitter").
	backoffBase = 100 * time.Millisecond
	// errorBodyCap bounds what is kept of a non-2xx body: it is only
	// diagnostic, so a huge error page must not cost MaxBytes of memory.
	errorBodyCap = 64 << 10
	// connectCap bounds dialling and the TLS handshake so a black-holed
	// host fails with a clear message well inside the request deadline.
	connectCap = 10 * time.Second
)

// Config describes one upstream application. The zero value of every
// optional field selects its default.
type Config struct {
	// Name identifies the upstream in messages and logs ("sonarr");
	// default "upstream".
	Name string
	// BaseURL is the application's root, e.g. https://sonarr.lan:8989/. A
	// path prefix (reverse proxy) is preserved; query parameters on it are
	// sent with every request; a fragment is refused. Userinfo is used for
	// basic auth and never shown.
	BaseURL string
	// Timeout is one deadline over headers and body for each attempt
	// (default 30s; negative is an error).
	Timeout time.Duration
	// MaxBytes caps a 2xx response body (default 4 MiB; negative is an
	// error). A larger body fails with toolerr.TooLarge.
	MaxBytes int64
	// MaxConcurrent bounds requests in flight; beyond it Do fails at once
	// with toolerr.Busy (default 8; negative is an error).
	MaxConcurrent int
	// Retries is how often an idempotent read is retried, clamped to
	// [0, 2]. Zero selects the default (2); a negative value disables
	// retries.
	Retries int
	// MaxRetryAfter is the longest Retry-After honoured; a response asking
	// for a longer wait is not retried (default 5s; negative: a response
	// carrying Retry-After is never retried).
	MaxRetryAfter time.Duration
	// CAFile is an optional PEM bundle added to the system roots, for
	// upstreams with a private CA. Certificate verification cannot be
	// turned off.
	CAFile string
	// AllowHTTP permits a plain http:// BaseURL.
	AllowHTTP bool
	// Header is sent with every request (e.g. X-Api-Key) and overrides a
	// request header of the same name. Values must not contain control
	// characters.
	Header http.Header
	// UserAgent is sent as User-Agent when set.
	UserAgent string
	// Logger receives debug lines about retries; nil discards them.
	Logger *slog.Logger
}

// Client is a bounded HTTP client for one upstream. It is safe for
// concurrent use.
type Client struct {
	name          string
	base          url.URL // without query or trailing slash in the path
	baseQuery     url.Values
	header        http.Header
	hc            *http.Client
	timeout       time.Duration
	maxBytes      int64
	retries       int
	maxRetryAfter time.Duration
	sem           chan struct{}
	log           *slog.Logger

	// sleep waits between attempts; tests replace it to observe waits
	// without spending them.
	sleep func(ctx context.Context, d time.Duration) error
}

// New validates cfg and builds a Client with its own tuned transport.
// Errors name the offending setting and never include a header value.
func New(cfg Config) (*Client, error) {
	name := cfg.Name
	if name == "" {
		name = "upstream"
	}
	base, err := parseBaseURL(cfg.BaseURL, cfg.AllowHTTP)
	if err != nil {
		return nil, err
	}
	timeout, err := positiveOr(cfg.Timeout, DefaultTimeout, "Timeout")
	if err != nil {
		return nil, err
	}
	maxBytes, err := positiveOr(cfg.MaxBytes, DefaultMaxBytes, "MaxBytes")
	if err != nil {
		return nil, err
	}
	maxConc, err := positiveOr(cfg.MaxConcurrent, DefaultMaxConcurrent, "MaxConcurrent")
	if err != nil {
		return nil, err
	}
	retries := cfg.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	case retries > maxRetries:
		retries = maxRetries
	}
	maxRetryAfter := cfg.MaxRetryAfter
	if maxRetryAfter == 0 {
		maxRetryAfter = DefaultMaxRetryAfter
	}

	header := make(http.Header, len(cfg.Header)+1)
	for k, vs := range cfg.Header {
		if !validHeaderName(k) {
			return nil, configErr(nil, "Header has an invalid header name %q", k)
		}
		for _, v := range vs {
			if HeaderValue(v) != nil {
				return nil, configErr(nil, "Header %q has a value with a control character (CR, LF, NUL, ...)", k)
			}
			header.Add(k, v)
		}
	}
	if cfg.UserAgent != "" {
		if HeaderValue(cfg.UserAgent) != nil {
			return nil, configErr(nil, "UserAgent contains a control character")
		}
		header.Set("User-Agent", cfg.UserAgent)
	}

	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pool, err := loadCAFile(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		tlsCfg.RootCAs = pool
	}

	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	dialer := &net.Dialer{Timeout: min(timeout, connectCap), KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		// No proxy from the environment: a container's HTTPS_PROXY meant
		// for the internet must not receive LAN requests and API keys.
		Proxy:               nil,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: min(timeout, connectCap),
		// A custom TLS config disables HTTP/2 unless forced.
		ForceAttemptHTTP2: true,
		// Keep an idle connection for every slot so steady load reuses
		// connections instead of piling up TIME_WAIT sockets.
		MaxIdleConns:           maxConc,
		MaxIdleConnsPerHost:    maxConc,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	hc := &http.Client{
		Transport: tr,
		// Redirects are never followed: the 3xx itself comes back and is
		// reported, so credentials never travel to another location.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}

	baseQuery := base.Query()
	base.RawQuery = ""
	base.ForceQuery = false
	// Keep the escaped prefix without its trailing slash; request paths
	// are appended after a single "/".
	prefix := strings.TrimRight(base.EscapedPath(), "/")
	base.Path, _ = url.PathUnescape(prefix) // prefix came from EscapedPath, so it unescapes
	base.RawPath = prefix

	return &Client{
		name:          name,
		base:          *base,
		baseQuery:     baseQuery,
		header:        header,
		hc:            hc,
		timeout:       timeout,
		maxBytes:      maxBytes,
		retries:       retries,
		maxRetryAfter: maxRetryAfter,
		sem:           make(chan struct{}, maxConc),
		log:           logger,
		sleep:         sleepCtx,
	}, nil
}

// CloseIdleConnections closes idle keep-alive connections, e.g. at shutdown.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

func configErr(cause error, format string, args ...any) error {
	return toolerr.Wrap(toolerr.InvalidArgument, cause, "upstream config: "+format, args...)
}

func positiveOr[T int | int64 | time.Duration](v, def T, setting string) (T, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0:
		return 0, configErr(nil, "%s must not be negative", setting)
	}
	return v, nil
}

func parseBaseURL(raw string, allowHTTP bool) (*url.URL, error) {
	if raw == "" {
		return nil, configErr(nil, "BaseURL is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse's own message quotes the whole URL, userinfo and
		// all; keep only the inner reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, configErr(err, "BaseURL is not a valid URL")
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !allowHTTP {
			return nil, configErr(nil, "BaseURL uses plain http; use https or set AllowHTTP to opt in")
		}
	default:
		return nil, configErr(nil, "BaseURL must start with https:// (or http:// with AllowHTTP)")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, configErr(nil, "BaseURL has no host")
	}
	if u.Fragment != "" || u.RawFragment != "" {
		return nil, configErr(nil, "BaseURL must not have a fragment")
	}
	return u, nil
}

func loadCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, configErr(err, "CAFile %q cannot be read", path)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, configErr(nil, "CAFile %q holds no PEM certificate", path)
	}
	return pool, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Request is one call to the upstream.
type Request struct {
	// Method defaults to GET.
	Method string
	// Path is appended to the BaseURL path, already escaped (build it with
	// Path). Empty interior segments, "." and "..", "?" and "#" are refused.
	Path string
	// Query is merged after the BaseURL's query.
	Query url.Values
	// Header adds request headers; Config.Header wins on conflicts.
	Header http.Header
	// Body is sent as application/json unless Header sets a Content-Type.
	Body []byte
	// Idempotent marks a request other than GET or HEAD as safe to retry.
	// GET and HEAD are always retried on transient failures; anything else
	// (notably POST) only with this set.
	Idempotent bool
}

// Response is a final upstream answer. For a non-2xx status Body keeps at
// most 64 KiB and must never be shown to clients verbatim.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Attempts is how many requests were sent to obtain this response.
	Attempts int

	name string
}

// StatusError is the hidden cause of the error Response.Err returns, so
// callers can recover the exact status with errors.As.
type StatusError struct {
	Status int
}

func (e *StatusError) Error() string { return "upstream answered HTTP " + strconv.Itoa(e.Status) }

// Err maps a non-2xx status to a *toolerr.Error and returns nil for 2xx:
// 401/403 AuthFailed, 404/410 NotFound, 429 Busy (the upstream is rate
// limiting; retry later), 408 and 5xx UpstreamUnavailable, any other 4xx
// InvalidArgument. The message names the status only, never the body.
func (r *Response) Err() error {
	s := r.Status
	cause := &StatusError{Status: s}
	switch {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusUnauthorized:
		// Neutral wording: services log in with keys, tokens or passwords.
		return toolerr.Wrap(toolerr.AuthFailed, cause, "%s rejected the credentials (HTTP 401); check the configured API key, token or password", r.name)
	case s == http.StatusForbidden:
		return toolerr.Wrap(toolerr.AuthFailed, cause, "%s refused access (HTTP 403); check that the configured account or key is allowed to do this", r.name)
	case s == http.StatusNotFound || s == http.StatusGone:
		return toolerr.Wrap(toolerr.NotFound, cause, "%s has no such resource (HTTP %d)", r.name, s)
	case s == http.StatusTooManyRequests:
		return toolerr.Wrap(toolerr.Busy, cause, "%s is rate limiting requests (HTTP 429); retry later", r.name)
	case s == http.StatusRequestTimeout || s >= 500:
		return toolerr.Wrap(toolerr.UpstreamUnavailable, cause, "%s failed (HTTP %d after %d attempt(s)); try again later", r.name, s, r.Attempts)
	case s >= 400:
		return toolerr.Wrap(toolerr.InvalidArgument, cause, "%s rejected the request (HTTP %d)", r.name, s)
	}
	return toolerr.Wrap(toolerr.UpstreamUnavailable, cause, "%s answered with unexpected status HTTP %d", r.name, s)
}

// Do sends r, holding one concurrency slot for the whole call including
// retries. It returns a *Response for every final status except a redirect,
// whatever the status (use Response.Err), and an error only when no usable
// response arrived: Busy (no free slot), Timeout (the attempt deadline
// passed, or ctx ended; a timed-out attempt is not retried since a retry
// would only multiply the wait), TooLarge (2xx body over MaxBytes),
// UpstreamUnavailable (network, DNS, TLS, redirect) or InvalidArgument (a
// malformed Request). Transient failures of idempotent requests (network
// errors, 408, 429, 5xx) are retried up to Retries times, but never past
// ctx's deadline or for a Retry-After longer than MaxRetryAfter.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validHeaderName(method) { // methods are tokens, like header names
		return nil, toolerr.New(toolerr.InvalidArgument, "invalid HTTP method for %s", c.name)
	}
	target, err := c.target(r.Path, r.Query)
	if err != nil {
		return nil, err
	}
	hdr, err := c.headers(r.Header, r.Body != nil)
	if err != nil {
		return nil, err
	}

	select {
	case c.sem <- struct{}{}:
	default:
		return nil, toolerr.New(toolerr.Busy, "%s already has %d requests in flight; retry shortly", c.name, cap(c.sem))
	}
	defer func() { <-c.sem }()

	attempts := 1
	if method == http.MethodGet || method == http.MethodHead || r.Idempotent {
		attempts += c.retries
	}
	for n := 1; ; n++ {
		out := c.once(ctx, method, target, hdr, r.Body)
		if out.resp != nil {
			out.resp.Attempts = n
		}
		if !out.transient || n >= attempts {
			return out.resp, out.err
		}
		wait, ok := c.backoff(n, out.retryAfter)
		if !ok {
			return out.resp, out.err
		}
		if dl, has := ctx.Deadline(); has && time.Until(dl) <= wait {
			return out.resp, out.err
		}
		c.log.DebugContext(ctx, "upstream retry",
			"upstream", c.name, "method", method, "path", r.Path,
			"attempt", n, "status", out.status(), "code", toolerr.CodeOf(out.err), "wait", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, c.ctxErr(ctx)
		}
	}
}

// GetJSON GETs path with query q and decodes a 2xx JSON body into out (nil
// out discards the body). Non-2xx statuses map as in Response.Err.
func (c *Client) GetJSON(ctx context.Context, path string, q url.Values, out any) error {
	resp, err := c.Do(ctx, Request{Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return err
	}
	return c.decode(resp, out)
}

// PostJSON POSTs in as JSON (nil in sends no body) and decodes a 2xx JSON
// answer into out. It is never retried: a POST may not be idempotent.
func (c *Client) PostJSON(ctx context.Context, path string, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return toolerr.Wrap(toolerr.Internal, err, "cannot encode the request body for %s", c.name)
		}
		body = b
	}
	resp, err := c.Do(ctx, Request{Method: http.MethodPost, Path: path, Body: body})
	if err != nil {
		return err
	}
	return c.decode(resp, out)
}

func (c *Client) decode(resp *Response, out any) error {
	if err := resp.Err(); err != nil {
		return err
	}
	if out == nil || resp.Status == http.StatusNoContent {
		return nil
	}
	if len(bytes.TrimSpace(resp.Body)) == 0 {
		return toolerr.New(toolerr.UpstreamUnavailable, "%s answered HTTP %d with an empty body where JSON was expected", c.name, resp.Status)
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s answered with a body that is not the expected JSON", c.name)
	}
	return nil
}

// outcome is the result of one attempt.
type outcome struct {
	resp       *Response
	err        error
	transient  bool   // a retry could help
	retryAfter string // the response's Retry-After, if any
}

func (o outcome) status() int {
	if o.resp == nil {
		return 0
	}
	return o.resp.Status
}

// once performs one attempt under its own deadline, which covers the headers
// and the whole body read.
func (c *Client) once(ctx context.Context, method, target string, hdr http.Header, body []byte) outcome {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, target, rd)
	if err != nil {
		return outcome{err: toolerr.Wrap(toolerr.InvalidArgument, scrub(err), "cannot build the request to %s", c.name)}
	}
	req.Header = hdr.Clone()

	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportErr(ctx, actx, err)
	}
	defer resp.Body.Close() // closing early drops the connection: the rest is never read

	if isRedirect(resp.StatusCode) {
		return outcome{err: toolerr.New(toolerr.UpstreamUnavailable, "%s answered with a redirect; set the exact base URL", c.name)}
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	limit := c.maxBytes
	if !ok {
		limit = min(limit, errorBodyCap)
	}
	if ok && method != http.MethodHead && resp.ContentLength > limit {
		return outcome{err: c.tooLarge()}
	}
	data, err := readCapped(resp.Body, limit, resp.ContentLength)
	if err != nil {
		return c.transportErr(ctx, actx, err)
	}
	if int64(len(data)) > limit {
		if ok {
			return outcome{err: c.tooLarge()}
		}
		data = data[:limit]
	}
	s := resp.StatusCode
	return outcome{
		resp:       &Response{Status: s, Header: resp.Header, Body: data, name: c.name},
		transient:  s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500,
		retryAfter: resp.Header.Get("Retry-After"),
	}
}

func (c *Client) tooLarge() error {
	return toolerr.New(toolerr.TooLarge, "%s's response exceeds the %s cap; narrow the request", c.name, byteSize(c.maxBytes))
}

// readCapped reads at most limit+1 bytes, so a caller can tell "exactly at
// the cap" from "over it" without buffering more.
func readCapped(r io.Reader, limit, sizeHint int64) ([]byte, error) {
	size := int64(512)
	if sizeHint >= 0 {
		size = sizeHint + 1 // +1 lets the final EOF read land without growing
	}
	size = min(size, limit+1)
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func isRedirect(s int) bool {
	return s >= 300 && s < 400 && s != http.StatusNotModified
}

// backoff returns the wait before retry n (1-based) and whether to retry at
// all: a Retry-After within MaxRetryAfter is honoured, a longer one ends the
// retries, otherwise the wait is full jitter over an exponential window.
func (c *Client) backoff(n int, retryAfter string) (time.Duration, bool) {
	if retryAfter != "" {
		if d, ok := parseRetryAfter(retryAfter, time.Now()); ok {
			if c.maxRetryAfter < 0 || d > c.maxRetryAfter {
				return 0, false
			}
			return d, true
		}
	}
	return rand.N(backoffBase << (n - 1)), true
}

// parseRetryAfter reads delay-seconds or an HTTP-date; a date in the past
// means no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) { // avoid overflow; far too long anyway
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// transportErr maps a failure to send or read to a client-safe error and
// decides whether a retry could help.
func (c *Client) transportErr(ctx, actx context.Context, err error) outcome {
	err = scrub(err)
	if ctx.Err() != nil {
		return outcome{err: c.ctxErr(ctx)}
	}
	if actx.Err() != nil {
		return outcome{err: toolerr.Wrap(toolerr.Timeout, err, "%s did not answer within %s; check that it is healthy", c.name, c.timeout)}
	}
	var (
		netErr   net.Error
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
		verify   *tls.CertificateVerificationError
		notTLS   tls.RecordHeaderError
		dnsErr   *net.DNSError
	)
	switch {
	case errors.As(err, &hostname):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s's TLS certificate does not match the host; set the base URL to a name on the certificate", c.name)}
	case errors.As(err, &invalid):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s's TLS certificate is invalid or expired; renew it or set the CA file", c.name)}
	case errors.As(err, &unknown), errors.As(err, &verify):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s's TLS certificate not trusted; set the CA file", c.name)}
	case errors.As(err, &notTLS), errors.Is(err, http.ErrSchemeMismatch):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s did not answer with TLS; check the base URL scheme and port", c.name)}
	case errors.As(err, &dnsErr):
		return outcome{
			err:       toolerr.Wrap(toolerr.UpstreamUnavailable, err, "cannot resolve %s's host; check the base URL", c.name),
			transient: !dnsErr.IsNotFound,
		}
	case errors.As(err, &netErr) && netErr.Timeout():
		return outcome{err: toolerr.Wrap(toolerr.Timeout, err, "%s did not answer in time; check that it is reachable", c.name)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return outcome{
			err:       toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s refused the connection; check that it is running and the base URL port", c.name),
			transient: true,
		}
	}
	return outcome{
		err:       toolerr.Wrap(toolerr.UpstreamUnavailable, err, "cannot reach %s; check the base URL and that it is running", c.name),
		transient: true,
	}
}

// ctxErr reports the end of the caller's context. A cancellation is
// reported as Timeout too: the caller stopped waiting, and there is no
// better stable code for it.
func (c *Client) ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return toolerr.Wrap(toolerr.Timeout, ctx.Err(), "deadline exceeded while waiting for %s", c.name)
	}
	return toolerr.Wrap(toolerr.Timeout, ctx.Err(), "request to %s was canceled", c.name)
}

// scrub replaces the URL inside a *url.Error (which quotes the request URL
// verbatim) by one without userinfo and query, so the hidden cause is safe to
// log.
func scrub(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	safe := "redacted-url"
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User = nil
		u.RawQuery = ""
		u.ForceQuery = false
		u.Fragment, u.RawFragment = "", ""
		safe = u.String()
	}
	return &url.Error{Op: ue.Op, URL: safe, Err: ue.Err}
}

// target builds the absolute request URL from the base and an escaped path.
func (c *Client) target(p string, q url.Values) (string, error) {
	rel, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	u := c.base
	u.RawPath = c.base.RawPath + "/" + rel
	u.Path, _ = url.PathUnescape(u.RawPath) // every segment was checked by cleanPath
	if len(c.baseQuery) == 0 {
		u.RawQuery = q.Encode()
	} else {
		merged := make(url.Values, len(c.baseQuery)+len(q))
		for k, vs := range c.baseQuery {
			merged[k] = append(merged[k], vs...)
		}
		for k, vs := range q {
			merged[k] = append(merged[k], vs...)
		}
		u.RawQuery = merged.Encode()
	}
	return u.String(), nil
}

// cleanPath checks an escaped request path and returns it without its
// leading slash. A trailing slash is kept (some APIs need it).
func cleanPath(p string) (string, error) {
	p = strings.TrimPrefix(p, "/")
	if strings.ContainsAny(p, "?#") {
		return "", toolerr.New(toolerr.InvalidArgument, "request path must not contain '?' or '#'; pass query parameters separately")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "" {
			if i == len(segs)-1 {
				continue
			}
			return "", toolerr.New(toolerr.InvalidArgument, "request path has an empty segment")
		}
		raw, err := url.PathUnescape(s)
		if err != nil {
			return "", toolerr.New(toolerr.InvalidArgument, "request path has a malformed escape")
		}
		if err := checkSegment(raw); err != nil {
			return "", err
		}
	}
	return p, nil
}

// Path joins segments into an escaped request path ("/a/b%2Fc"), escaping
// each with url.PathEscape, so a value such as "a/b" stays one segment. It
// refuses "", "." and ".." and segments with control characters (NUL, CR,
// LF, ...) with toolerr.InvalidArgument, so a value can never canonicalize
// onto another route.
func Path(segments ...string) (string, error) {
	if len(segments) == 0 {
		return "", toolerr.New(toolerr.InvalidArgument, "request path has no segments")
	}
	var b strings.Builder
	for _, s := range segments {
		if err := checkSegment(s); err != nil {
			return "", err
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

func checkSegment(s string) error {
	switch {
	case s == "":
		return toolerr.New(toolerr.InvalidArgument, "path segment must not be empty")
	case s == "." || s == "..":
		return toolerr.New(toolerr.InvalidArgument, "path segment must not be %q", s)
	case hasCTL(s):
		return toolerr.New(toolerr.InvalidArgument, "path segment must not contain control characters")
	}
	return nil
}

// HeaderValue reports whether v may be sent as a header value: it rejects
// CR, LF, NUL and the other ASCII control characters except tab (which the
// HTTP grammar allows). Use it for any value that ends up in a header.
func HeaderValue(v string) error {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b != '\t' && (b < 0x20 || b == 0x7f) {
			return toolerr.New(toolerr.InvalidArgument, "header value must not contain control characters (CR, LF, NUL, ...)")
		}
	}
	return nil
}

func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == 0x7f {
			return true
		}
	}
	return false
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// headers builds the header set for one request: request headers first,
// then the static ones, which win.
func (c *Client) headers(req http.Header, hasBody bool) (http.Header, error) {
	h := make(http.Header, len(req)+len(c.header)+2)
	for k, vs := range req {
		if !validHeaderName(k) {
			return nil, toolerr.New(toolerr.InvalidArgument, "request header name %q is invalid", k)
		}
		for _, v := range vs {
			if HeaderValue(v) != nil {
				return nil, toolerr.New(toolerr.InvalidArgument, "request header %q has a value with control characters", k)
			}
			h.Add(k, v)
		}
	}
	for k, vs := range c.header {
		h[k] = vs
	}
	if h.Get("Accept") == "" {
		h.Set("Accept", "application/json")
	}
	if hasBody && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	return h, nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
