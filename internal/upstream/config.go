package upstream

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
)

// Config describes one upstream application. The zero value of every
// optional field selects its default.
type Config struct {
	// Name identifies the upstream in messages and logs ("sonarr");
	// default "upstream".
	Name string
	// Setting is the name of the setting that holds BaseURL
	// ("SONARR_URL"): messages about an unreachable upstream name it, with
	// the URL's host, as what to fix. Default "the base URL".
	Setting string
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
	// Secrets are redacted from the application's reasons (Response.Reason)
	// besides the credential headers of Header and the requests and the
	// BaseURL's password: a password sent in a login body, say.
	Secrets [][]byte
	// Reason picks the application's own explanation out of an error
	// body; nil selects DefaultReason.
	Reason ReasonFunc
	// UserAgent is sent as User-Agent when set.
	UserAgent string
	// Logger receives debug lines about retries; nil discards them.
	Logger *slog.Logger
	// Sleep waits between attempts and Now reads the clock for
	// Retry-After dates; nil means real time. Tests inject both so retry
	// paths take no real time.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
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
	sleep, now := cfg.Sleep, cfg.Now
	if sleep == nil {
		sleep = sleepCtx
	}
	if now == nil {
		now = time.Now
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

	reason := cfg.Reason
	if reason == nil {
		reason = DefaultReason
	}
	secrets := clientSecrets(cfg, base)

	setting := cfg.Setting
	if setting == "" {
		setting = "the base URL"
	}
	return &Client{
		name:          name,
		setting:       setting,
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
		sleep:         sleep,
		now:           now,
		reason:        reason,
		secrets:       secrets,
		red:           redact.New(secrets...),
	}, nil
}

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
