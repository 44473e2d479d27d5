// Package client talks to Tuliprox's REST API under {web_ui_path}/api/v1
// as a Web UI user: it signs in at {web_ui_path}/auth/token, keeps the
// token until shortly before it expires, signs in again once when a call
// answers 401 (concurrent calls share one sign-in), and maps Tuliprox's
// statuses to clear tool errors, a route this release lacks included.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// TokenNoAuth is what Tuliprox's /auth/token answers when web
// authentication is disabled (shared/src/model/auth/user.rs TOKEN_NO_AUTH).
const TokenNoAuth = "authorized"

// ErrUnsupported marks a route this Tuliprox release does not have.
var ErrUnsupported = errors.New("route not supported by this Tuliprox release")

// relearnAfter is how long a route found missing is answered from memory
// before it is asked again (Tuliprox may have been updated meanwhile).
const relearnAfter = 10 * time.Minute

// maxAbsent bounds the missing routes remembered: a route with a path
// parameter is remembered per value, and a hostile model must not grow
// the map.
const maxAbsent = 64

// Client is a signed-in Tuliprox REST client. It is safe for concurrent use.
type Client struct {
	up         *upstream.Client
	user, pass []byte
	ttl        time.Duration
	now        func() time.Time
	log        *slog.Logger
	loginWait  time.Duration

	mu     sync.Mutex
	cur    session
	gen    uint64 // increases with every sign-in
	flight *signIn
	// A rejected sign-in is answered from here for a while, so a stream
	// of calls cannot get the user throttled by Tuliprox.
	failed      error
	failedUntil time.Time
	// absent holds routes this release answered as missing, by method
	// and path, with when that was learned.
	absent map[string]time.Time
}

// signInHold is how long a rejected sign-in is not repeated.
const signInHold = 15 * time.Second

// session is the outcome of one sign-in.
type session struct {
	token   string // "" with web authentication disabled
	noAuth  bool
	refresh time.Time // sign in again from here on
	valid   bool
}

type signIn struct {
	done chan struct{}
	s    session
	err  error
}

// Options are New's optional dependencies.
type Options struct {
	// Now reads the clock (tests move it); nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// New returns a client over up (whose base URL is Tuliprox's Web UI root,
// path prefix included) that signs in with set's credentials.
func New(up *upstream.Client, set Settings, o Options) *Client {
	c := &Client{up: up, user: set.Username, pass: set.Password, ttl: set.TokenTTL, now: o.Now, log: o.Logger,
		loginWait: set.Upstream.Timeout + 5*time.Second}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.ttl <= 0 {
		c.ttl = DefaultTokenTTL
	}
	if c.loginWait <= 5*time.Second {
		c.loginWait = upstream.DefaultTimeout
	}
	return c
}

// NewFromSettings builds the upstream client and the Tuliprox client.
func NewFromSettings(set Settings, o Options) (*Client, error) {
	cfg := set.Upstream.Config()
	cfg.UserAgent = "toolgate-tuliprox"
	cfg.Logger = o.Logger
	up, err := upstream.New(cfg)
	if err != nil {
		return nil, err
	}
	return New(up, set, o), nil
}

// Call is one REST request under /api/v1.
type Call struct {
	Method string
	// Route is the path below /api/v1, one segment each ("playlist",
	// "items"); segments are escaped, "." and ".." refused.
	Route []string
	Query url.Values
	// Body is sent as JSON when not nil.
	Body any
	// Permission is the Tuliprox permission the route needs, named in a
	// 403's message.
	Permission string
	// Feature is what a 503 means for this route ("stream history
	// (reverse_proxy.stream_history)"); empty means Tuliprox is unavailable.
	Feature string
	// NotFound is the message of a 404 that Tuliprox answers with its JSON
	// error body (a missing QoS snapshot); without it every 404 means the
	// route does not exist in this release.
	NotFound string
	// BadRequest is the message of a 400 where Tuliprox means more than bad
	// arguments (GeoIP disabled, no IP check configured).
	BadRequest string
	// Needs names what a release must have for this route ("Tuliprox 3.3.1
	// or later"), said when the route is missing. With it set, a missing
	// route is remembered for a while instead of asked again.
	Needs string
	// Timeout replaces the request deadline; NoRetry sends it once.
	Timeout time.Duration
	NoRetry bool
}

// NoAuth reports whether Tuliprox runs without web authentication, signing
// in first if needed.
func (c *Client) NoAuth(ctx context.Context) (bool, error) {
	s, _, err := c.session(ctx, 0, false)
	return s.noAuth, err
}

// Do sends call with the current token, signs in again once on a 401, and
// returns the 2xx response; any other status is a *toolerr.Error.
func (c *Client) Do(ctx context.Context, call Call) (*upstream.Response, error) {
	var body []byte
	if call.Body != nil {
		b, err := json.Marshal(call.Body)
		if err != nil {
			return nil, toolerr.Wrap(toolerr.Internal, err, "cannot encode the request to Tuliprox")
		}
		body = b
	}
	p, err := upstream.Path(append([]string{"api", "v1"}, call.Route...)...)
	if err != nil {
		return nil, err
	}
	req := upstream.Request{Method: call.Method, Path: p, Query: call.Query, Body: body,
		Timeout: call.Timeout, NoRetry: call.NoRetry}
	key := strings.ToUpper(orGet(call.Method)) + " " + p
	if call.Needs != "" && c.knownAbsent(key) {
		return nil, unsupported(call)
	}
	s, gen, err := c.session(ctx, 0, false)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		req.Header = nil
		if s.token != "" {
			req.Header = http.Header{"Authorization": {"Bearer " + s.token}}
		}
		resp, err := c.up.Do(ctx, req)
		if err != nil {
			return nil, err
		}
		if resp.Status == http.StatusUnauthorized && attempt == 0 {
			// Expired early, revoked by a permission change, or web
			// authentication switched on: sign in again, once.
			if s, gen, err = c.session(ctx, gen, true); err != nil {
				return nil, err
			}
			continue
		}
		err = c.check(resp, call)
		if call.Needs != "" {
			c.learn(key, errors.Is(err, ErrUnsupported))
		}
		// Tuliprox's own reason ({"error": …} or plain text) ends the
		// message, framed, so the model can correct an argument.
		return resp, resp.Explain(err)
	}
}

// knownAbsent tells whether the route was found missing lately.
func (c *Client) knownAbsent(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.absent[key]
	return ok && c.now().Sub(at) < relearnAfter
}

// learn remembers whether the route is missing; a route that answered is
// forgotten, so an updated Tuliprox is believed at once.
func (c *Client) learn(key string, missing bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case !missing:
		delete(c.absent, key)
	case len(c.absent) < maxAbsent:
		if c.absent == nil {
			c.absent = map[string]time.Time{}
		}
		c.absent[key] = c.now()
	}
}

// Now reads the clock the client was given.
func (c *Client) Now() time.Time { return c.now() }

// GetJSON GETs route and decodes its JSON answer into out.
func (c *Client) GetJSON(ctx context.Context, call Call, out any) error {
	call.Method = http.MethodGet
	resp, err := c.Do(ctx, call)
	if err != nil {
		return err
	}
	return Decode(resp, out)
}

// Decode reads a 2xx JSON body; numbers stay exact (json.Number).
func Decode(resp *upstream.Response, out any) error {
	if len(bytes.TrimSpace(resp.Body)) == 0 {
		return toolerr.New(toolerr.UpstreamUnavailable, "Tuliprox answered HTTP %d with an empty body where JSON was expected", resp.Status)
	}
	d := json.NewDecoder(bytes.NewReader(resp.Body))
	d.UseNumber()
	if err := d.Decode(out); err != nil {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Tuliprox answered with a body that is not the expected JSON")
	}
	return nil
}

// check maps a final status to a tool error, nil for a usable 2xx.
func (c *Client) check(resp *upstream.Response, call Call) error {
	s := resp.Status
	route := strings.ToUpper(orGet(call.Method)) + " /api/v1/" + strings.Join(call.Route, "/")
	switch {
	case s >= 200 && s < 300:
		if isHTML(resp.Header) {
			// A Web UI page answered (a proxy's or an SPA's catch-all):
			// the route is not there.
			return unsupported(call)
		}
		return nil
	case s == http.StatusUnauthorized:
		return toolerr.New(toolerr.AuthFailed, "HTTP 401: Tuliprox rejected a fresh token of the configured user; check that the user still exists and is not throttled")
	case s == http.StatusForbidden:
		perm := call.Permission
		if perm == "" {
			perm = "the permission of " + route
		}
		return toolerr.New(toolerr.Forbidden, "HTTP 403: the Tuliprox user lacks %s; add it to the user's group in Tuliprox (groups.txt) or leave this tool alone", perm)
	case (s == http.StatusNotFound) && call.NotFound != "" && isJSON(resp.Header):
		return toolerr.New(toolerr.NotFound, "HTTP 404: %s", call.NotFound)
	case s == http.StatusNotFound || s == http.StatusMethodNotAllowed:
		return unsupported(call)
	case s == http.StatusConflict:
		return toolerr.New(toolerr.Busy, "HTTP 409: an update is already queued in Tuliprox; check the update status and try again when it has run")
	case s == http.StatusServiceUnavailable && call.Feature != "":
		return toolerr.New(toolerr.UpstreamUnavailable, "HTTP 503: %s is disabled in Tuliprox; enable it there to use this tool", call.Feature)
	case s == http.StatusTooManyRequests:
		return toolerr.New(toolerr.Busy, "HTTP 429: Tuliprox is throttling requests; retry later")
	case s == http.StatusBadRequest && call.BadRequest != "":
		return toolerr.New(toolerr.InvalidArgument, "HTTP 400: %s", call.BadRequest)
	case s == http.StatusBadRequest:
		return toolerr.New(toolerr.InvalidArgument, "HTTP 400: Tuliprox rejected the request to %s; check the arguments (names of targets and inputs, dates)", route)
	case s == http.StatusRequestTimeout || s >= 500:
		return toolerr.New(toolerr.UpstreamUnavailable, "HTTP %d: Tuliprox failed on %s (after %d attempt(s)); try again later", s, route, resp.Attempts)
	}
	return toolerr.New(toolerr.UpstreamUnavailable, "HTTP %d: Tuliprox answered %s unexpectedly", s, route)
}

// unsupported says a route is missing from this release and what it needs.
func unsupported(call Call) error {
	route := strings.ToUpper(orGet(call.Method)) + " /api/v1/" + strings.Join(call.Route, "/")
	needs := call.Needs
	if needs == "" {
		needs = "a release that has it"
	}
	return toolerr.Wrap(toolerr.NotFound, ErrUnsupported,
		"not supported by this Tuliprox release (needs %s): it has no %s", needs, route)
}

func orGet(m string) string {
	if m == "" {
		return http.MethodGet
	}
	return m
}

func mediaType(h http.Header) string {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt
}

func isHTML(h http.Header) bool { return mediaType(h) == "text/html" }

func isJSON(h http.Header) bool {
	mt := mediaType(h)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// session returns a usable sign-in and its generation. With renew set it
// replaces the sign-in of generation stale (unless another call already
// did). Concurrent callers share one sign-in request.
func (c *Client) session(ctx context.Context, stale uint64, renew bool) (session, uint64, error) {
	c.mu.Lock()
	usable := c.cur.valid && c.now().Before(c.cur.refresh)
	if usable && (!renew || c.gen != stale) {
		s, g := c.cur, c.gen
		c.mu.Unlock()
		return s, g, nil
	}
	if c.failed != nil && c.now().Before(c.failedUntil) {
		err := c.failed
		c.mu.Unlock()
		return session{}, 0, err
	}
	f := c.flight
	if f == nil {
		f = &signIn{done: make(chan struct{})}
		c.flight = f
		// The sign-in outlives a caller that gives up: others wait on it.
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.loginWait)
		go func() {
			defer cancel()
			s, err := c.signIn(lctx)
			c.mu.Lock()
			f.s, f.err = s, err
			c.failed = nil
			if err == nil {
				c.cur = s
				c.gen++
			} else if toolerr.CodeOf(err) == toolerr.AuthFailed {
				c.failed, c.failedUntil = err, c.now().Add(signInHold)
			}
			c.flight = nil
			c.mu.Unlock()
			close(f.done)
		}()
	}
	c.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return session{}, 0, toolerr.Wrap(toolerr.Timeout, ctx.Err(), "gave up waiting for the sign-in to Tuliprox")
	}
	if f.err != nil {
		return session{}, 0, f.err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur, c.gen, nil
}

type tokenResponse struct {
	Token string `json:"token"`
}

// signIn posts the credentials to /auth/token.
func (c *Client) signIn(ctx context.Context) (session, error) {
	body, err := json.Marshal(map[string]string{"username": string(c.user), "password": string(c.pass)})
	if err != nil {
		return session{}, toolerr.Wrap(toolerr.Internal, err, "cannot encode the sign-in")
	}
	p, _ := upstream.Path("auth", "token")
	started := c.now()
	resp, err := c.up.Do(ctx, upstream.Request{Method: http.MethodPost, Path: p, Body: body, NoRetry: true})
	clear(body)
	if err != nil {
		return session{}, err
	}
	noCreds := len(c.user) == 0
	switch s := resp.Status; {
	case s == http.StatusUnauthorized && noCreds:
		return session{}, toolerr.New(toolerr.AuthFailed, "HTTP 401: Tuliprox requires web authentication; set %s_FILE and %s_FILE to a Web UI user", EnvUsername, EnvPassword)
	case s == http.StatusUnauthorized:
		return session{}, toolerr.New(toolerr.AuthFailed, "HTTP 401: Tuliprox rejected the sign-in; check %s_FILE and %s_FILE, or whether the user is throttled after failed sign-ins", EnvUsername, EnvPassword)
	case s == http.StatusForbidden:
		return session{}, toolerr.New(toolerr.AuthFailed, "HTTP 403: Tuliprox refused the sign-in: this user may not use the Web UI; use a Web UI user from the user file (web_ui.auth)")
	case s == http.StatusNotFound || s == http.StatusMethodNotAllowed || (s < 300 && !isJSON(resp.Header)):
		// Tuliprox serves /auth/token and the REST API only with its Web
		// UI on (main_api.rs); otherwise these paths are a bare 404.
		return session{}, toolerr.New(toolerr.UpstreamUnavailable, "no Tuliprox sign-in at /auth/token (HTTP %d); set TULIPROX_URL to the Web UI address including its path prefix (web_ui.path), and check that the Web UI is on (web_ui.enabled: Tuliprox serves its REST API only with it)", s)
	case s == http.StatusTooManyRequests:
		return session{}, toolerr.New(toolerr.Busy, "HTTP 429: Tuliprox is throttling sign-ins; retry later")
	case s < 200 || s >= 300:
		return session{}, toolerr.New(toolerr.UpstreamUnavailable, "HTTP %d: Tuliprox's sign-in failed; try again later", s)
	}
	var tr tokenResponse
	if err := json.Unmarshal(resp.Body, &tr); err != nil || tr.Token == "" {
		return session{}, toolerr.New(toolerr.UpstreamUnavailable, "Tuliprox's sign-in answered without a token")
	}
	if tr.Token == TokenNoAuth {
		c.log.WarnContext(ctx, "Tuliprox runs without web authentication: the service stays read-only")
		// Checked again after the usual lifetime, in case authentication
		// is switched on.
		return session{noAuth: true, refresh: started.Add(c.ttl), valid: true}, nil
	}
	if upstream.HeaderValue(tr.Token) != nil {
		return session{}, toolerr.New(toolerr.UpstreamUnavailable, "Tuliprox's sign-in answered with an unusable token")
	}
	return session{token: tr.Token, refresh: c.refreshAt(started, tr.Token), valid: true}, nil
}

// refreshAt is when to sign in again: ahead of the token's exp claim (read,
// not verified: only Tuliprox can verify it) by a tenth of its lifetime,
// between 5 s and 2 min; without a readable exp, by the configured TTL.
func (c *Client) refreshAt(issued time.Time, token string) time.Time {
	exp := issued.Add(c.ttl)
	var claims jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err == nil && claims.ExpiresAt != nil {
		exp = claims.ExpiresAt.Time
	}
	life := exp.Sub(issued)
	margin := min(max(life/10, 5*time.Second), 2*time.Minute)
	if life <= margin {
		return issued // already (nearly) expired: the next call signs in again
	}
	return exp.Add(-margin)
}

// Ready signs in (or uses the current token) and asks for the status: a
// 200, or a 403 from a user without system.read, means the URL and the
// credentials work.
func (c *Client) Ready(ctx context.Context) error {
	_, err := c.Do(ctx, Call{Route: []string{"status"}, Permission: "system.read"})
	if toolerr.CodeOf(err) == toolerr.Forbidden {
		return nil
	}
	return err
}
