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
// The one piece of a body it may carry is the application's own reason for
// an error status, bounded, cleaned, redacted and framed as the
// application's words (`Sonarr said: "…"`), so a model can correct a bad
// argument; see ReasonFunc and Response.Reason.
//
// Do returns a *Response for every final status other than a redirect and an
// error only when no usable response arrived; Response.Err maps a non-2xx
// status to a toolerr code. GetJSON and PostJSON do both steps for you.
package upstream

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/toolgate/toolgate/internal/redact"
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

// Client is a bounded HTTP client for one upstream. It is safe for
// concurrent use.
type Client struct {
	name          string
	setting       string  // what to fix when the upstream cannot be reached
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

	// sleep waits between attempts; now reads Retry-After dates.
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time

	// reason picks an application's reason out of an error body; red
	// redacts it with secrets (the configured ones and the credential
	// headers).
	reason  ReasonFunc
	secrets [][]byte
	red     *redact.Redactor
}

// CloseIdleConnections closes idle keep-alive connections, e.g. at shutdown.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }
