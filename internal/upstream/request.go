package upstream

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
)

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
	// GET and HEAD are retried on transient failures unless NoRetry is
	// set; anything else (notably POST) only with this set.
	Idempotent bool
	// NoRetry sends the request once whatever its method: for a costly
	// request such as an indexer search, whose repetition would only
	// multiply the load.
	NoRetry bool
	// Timeout replaces Config.Timeout as the deadline of each attempt of
	// this request (a slow search on a client whose other requests are
	// quick); zero keeps the client's.
	Timeout time.Duration
}

// Response is a final upstream answer. For a non-2xx status Body keeps at
// most 64 KiB and must never be shown to clients verbatim: Reason is the
// part of it that may be.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Attempts is how many requests were sent to obtain this response.
	Attempts int

	name   string
	reason ReasonFunc
	red    *redact.Redactor
}

// StatusError is the hidden cause of the error Response.Err returns, so
// callers can recover the exact status with errors.As, and the
// application's reason for a message of their own.
type StatusError struct {
	Status int
	// Reason is the application's own explanation of the status, cleaned:
	// one line of printable text, at most MaxReasonBytes, secrets redacted;
	// "" when the body gave none. It is untrusted text: show it only framed
	// by Said.
	Reason string
	// App names the application in Said ("Sonarr").
	App string
}

func (e *StatusError) Error() string { return "upstream answered HTTP " + strconv.Itoa(e.Status) }

// Said frames Reason as the application's words, quoted so a model cannot
// mistake it for the message's own text: `Sonarr said: "Invalid regex"`;
// "" without a reason.
func (e *StatusError) Said() string { return said(e.App, e.Reason) }

// Reason is the application's cleaned explanation of a non-2xx status,
// picked from the body by the client's ReasonFunc (see
// StatusError.Reason); "" for a 2xx or a body without one.
func (r *Response) Reason() string {
	if r.Status >= 200 && r.Status < 300 {
		return ""
	}
	extract := r.reason
	if extract == nil {
		extract = DefaultReason
	}
	return cleanReason(r.Status, extract(r.Status, r.Header, r.Body), r.red)
}

// StatusError describes r's status and reason, for a service that words
// its own message about a status: wrap it as the cause and add its Said.
func (r *Response) StatusError() *StatusError {
	return &StatusError{Status: r.Status, Reason: r.Reason(), App: r.name}
}

// Err maps a non-2xx status to a *toolerr.Error and returns nil for 2xx:
// 401/403 AuthFailed, 404/410 NotFound, 429 Busy (the upstream is rate
// limiting; retry later), 408 and 5xx UpstreamUnavailable, any other 4xx
// InvalidArgument. The message names the status and ends with the
// application's reason, framed (`Sonarr said: "…"`), when the body gives
// one; never the body itself.
func (r *Response) Err() error {
	s := r.Status
	if s >= 200 && s < 300 {
		return nil
	}
	cause := r.StatusError()
	var err *toolerr.Error
	switch {
	case s == http.StatusUnauthorized:
		// Neutral wording: services log in with keys, tokens or passwords.
		err = toolerr.Wrap(toolerr.AuthFailed, cause, "%s rejected the credentials (HTTP 401); check the configured API key, token or password", r.name)
	case s == http.StatusForbidden:
		err = toolerr.Wrap(toolerr.AuthFailed, cause, "%s refused access (HTTP 403); check that the configured account or key is allowed to do this", r.name)
	case s == http.StatusNotFound || s == http.StatusGone:
		err = toolerr.Wrap(toolerr.NotFound, cause, "%s has no such resource (HTTP %d)", r.name, s)
	case s == http.StatusTooManyRequests:
		err = toolerr.Wrap(toolerr.Busy, cause, "%s is rate limiting requests (HTTP 429); retry later", r.name)
	case s == http.StatusRequestTimeout || s >= 500:
		err = toolerr.Wrap(toolerr.UpstreamUnavailable, cause, "%s failed (HTTP %d after %d attempt(s)); try again later", r.name, s, r.Attempts)
	case s >= 400:
		err = toolerr.Wrap(toolerr.InvalidArgument, cause, "%s rejected the request (HTTP %d)", r.name, s)
	default:
		err = toolerr.Wrap(toolerr.UpstreamUnavailable, cause, "%s answered with unexpected status HTTP %d", r.name, s)
	}
	err.Message = withSaid(err.Message, cause.Said())
	return err
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

	if r.Timeout < 0 {
		return nil, toolerr.New(toolerr.InvalidArgument, "negative request timeout for %s", c.name)
	}
	timeout := c.timeout
	if r.Timeout > 0 {
		timeout = r.Timeout
	}
	attempts := 1
	if (method == http.MethodGet || method == http.MethodHead || r.Idempotent) && !r.NoRetry {
		attempts += c.retries
	}
	for n := 1; ; n++ {
		out := c.once(ctx, method, target, hdr, r.Body, timeout)
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

// DoJSON sends r and decodes a 2xx JSON body into out, like GetJSON for a
// request that sets more than a path and a query (a Timeout, NoRetry).
func (c *Client) DoJSON(ctx context.Context, r Request, out any) error {
	resp, err := c.Do(ctx, r)
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
func (c *Client) once(ctx context.Context, method, target string, hdr http.Header, body []byte, timeout time.Duration) outcome {
	actx, cancel := context.WithTimeout(ctx, timeout)
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
		return c.transportErr(ctx, actx, err, timeout)
	}
	defer resp.Body.Close() // closing early drops the connection: the rest is never read

	if isRedirect(resp.StatusCode) {
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, ErrRedirect, "%s answered with a redirect; set the exact base URL (%s)", c.name, c.setting)}
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
		return c.transportErr(ctx, actx, err, timeout)
	}
	if int64(len(data)) > limit {
		if ok {
			return outcome{err: c.tooLarge()}
		}
		data = data[:limit]
	}
	s := resp.StatusCode
	out := &Response{Status: s, Header: resp.Header, Body: data, name: c.name, reason: c.reason}
	if !ok {
		out.red = c.redactorFor(hdr)
	}
	return outcome{
		resp:       out,
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

// ErrRedirect is the cause of the error Do returns for a redirect, so a
// caller that may meet one on purpose (an application's login page or web
// app answering a path it does not serve) can tell it with errors.Is from
// an upstream that cannot be reached.
var ErrRedirect = errors.New("redirect refused")

func isRedirect(s int) bool {
	return s >= 300 && s < 400 && s != http.StatusNotModified
}

// backoff returns the wait before retry n (1-based) and whether to retry at
// all: a Retry-After within MaxRetryAfter is honoured, a longer one ends the
// retries, otherwise the wait is full jitter over an exponential window.
func (c *Client) backoff(n int, retryAfter string) (time.Duration, bool) {
	if retryAfter != "" {
		if d, ok := parseRetryAfter(retryAfter, c.now()); ok {
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
func (c *Client) transportErr(ctx, actx context.Context, err error, timeout time.Duration) outcome {
	err = scrub(err)
	if ctx.Err() != nil {
		return outcome{err: c.ctxErr(ctx)}
	}
	if actx.Err() != nil {
		return outcome{err: toolerr.Wrap(toolerr.Timeout, err, "%s did not answer within %s; check that it is healthy", c.name, timeout)}
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
	// Messages name the host (never more of the URL) and the setting to fix,
	// so /readyz and the first failed call tell the operator what to change.
	host := c.base.Hostname()
	switch {
	case errors.As(err, &hostname):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s's TLS certificate does not match the host %s; set %s to a name on the certificate", c.name, host, c.setting)}
	case errors.As(err, &invalid):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s's TLS certificate is invalid or expired; renew it or set the CA file", c.name)}
	case errors.As(err, &unknown), errors.As(err, &verify):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s's TLS certificate not trusted; set the CA file", c.name)}
	case errors.As(err, &notTLS), errors.Is(err, http.ErrSchemeMismatch):
		return outcome{err: toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s at %s did not answer with TLS; check the scheme and port in %s", c.name, host, c.setting)}
	case errors.As(err, &dnsErr):
		return outcome{
			err:       toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s host %s cannot be resolved — check %s", c.name, host, c.setting),
			transient: !dnsErr.IsNotFound,
		}
	case errors.As(err, &netErr) && netErr.Timeout():
		return outcome{err: toolerr.Wrap(toolerr.Timeout, err, "%s at %s did not answer in time; check that it is reachable and %s", c.name, host, c.setting)}
	case errors.Is(err, syscall.ECONNREFUSED):
		return outcome{
			err:       toolerr.Wrap(toolerr.UpstreamUnavailable, err, "%s at %s refused the connection; check that it is running and the port in %s", c.name, host, c.setting),
			transient: true,
		}
	}
	return outcome{
		err:       toolerr.Wrap(toolerr.UpstreamUnavailable, err, "cannot reach %s at %s; check %s and that it is running", c.name, host, c.setting),
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
