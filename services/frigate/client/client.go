// Package client talks to Frigate's HTTP API on behalf of the frigate tool
// service: it owns the three authentication modes (a managed /login session,
// an external bearer token, no authentication on a trusted network) and
// sends every request through the bounded upstream client.
package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// Mode is how the service authenticates to Frigate.
type Mode int

// The authentication modes; the operator picks exactly one.
const (
	// Managed signs in with POST /login and sends the session cookie.
	Managed Mode = iota + 1
	// Bearer forwards an externally issued JWT verbatim and never refreshes it.
	Bearer
	// Unauthenticated sends no credentials (trusted network, port 5000).
	Unauthenticated
)

// String names the mode for results and logs.
func (m Mode) String() string {
	switch m {
	case Managed:
		return "managed_session"
	case Bearer:
		return "bearer"
	case Unauthenticated:
		return "unauthenticated"
	}
	return "unknown"
}

// DefaultCookieName is Frigate's default auth.cookie_name.
const DefaultCookieName = "frigate_token"

// Config configures a Client.
type Config struct {
	// Upstream is the bounded client's configuration; BaseURL is the exact
	// API root including /api.
	Upstream upstream.Config
	Mode     Mode
	// Username and Password are used in Managed mode only.
	Username string
	Password []byte
	// Token is the bearer token in Bearer mode.
	Token []byte
	// CookieName is Frigate's auth.cookie_name (default frigate_token).
	CookieName string
}

// Client is a Frigate API client. It is safe for concurrent use.
type Client struct {
	up     *upstream.Client
	mode   Mode
	user   string
	pass   []byte
	bearer string
	cookie string

	// lock serializes logins so concurrent reads share one; a channel
	// rather than a mutex, so a waiter gives up when its deadline ends.
	lock chan struct{}
	// The fields below are guarded by lock.
	session  string
	gen      uint64 // increments with every successful login
	rejected bool   // Frigate refused the credentials; never try them again
}

// ErrCredentialsRejected is the cause of the error returned once Frigate has
// refused the managed account's username or password.
var ErrCredentialsRejected = errors.New("frigate rejected the username or password")

// New validates cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	c := &Client{mode: cfg.Mode, user: cfg.Username, pass: cfg.Password, cookie: cfg.CookieName, lock: make(chan struct{}, 1)}
	if c.cookie == "" {
		c.cookie = DefaultCookieName
	}
	switch cfg.Mode {
	case Managed:
		if cfg.Username == "" || len(cfg.Password) == 0 {
			return nil, errors.New("frigate client: managed mode needs a username and a password")
		}
	case Bearer:
		if len(cfg.Token) == 0 {
			return nil, errors.New("frigate client: bearer mode needs a token")
		}
		c.bearer = "Bearer " + string(cfg.Token)
		if upstream.HeaderValue(c.bearer) != nil {
			return nil, errors.New("frigate client: the bearer token contains control characters")
		}
	case Unauthenticated:
	default:
		return nil, errors.New("frigate client: unknown authentication mode")
	}
	if cfg.Upstream.Name == "" {
		cfg.Upstream.Name = "Frigate"
	}
	// Frigate's reasons are redacted with the password and token too: the
	// password travels in a login body, not in a header.
	cfg.Upstream.Secrets = append(slices.Clone(cfg.Upstream.Secrets), cfg.Password, cfg.Token)
	if cfg.Upstream.Reason == nil {
		cfg.Upstream.Reason = reason
	}
	up, err := upstream.New(cfg.Upstream)
	if err != nil {
		return nil, err
	}
	c.up = up
	return c, nil
}

// Mode returns the authentication mode.
func (c *Client) Mode() Mode { return c.mode }

// Begin starts one tool call's reads. A Read re-authenticates at most once,
// whatever number of requests it makes.
func (c *Client) Begin() *Read { return &Read{c: c} }

// Read is the authentication state of one tool call.
type Read struct {
	c        *Client
	relogged bool
}

// Get sends an authenticated GET and returns the final response whatever
// its status, except that 401 and 403 become errors: in managed mode a 401
// triggers one new login per Read and one repeat of the request; the
// second 401 is reported. Health (/) and /version go through Get too:
// their FastAPI routes are public, but on the authenticated port Frigate's
// nginx sends every /api path except /api/login through its auth_request
// (docker/main/rootfs/usr/local/nginx/conf/nginx.conf, 0.14 to 0.18).
func (r *Read) Get(ctx context.Context, path string, q url.Values, accept string) (*upstream.Response, error) {
	req := upstream.Request{Path: path, Query: q, Header: http.Header{}}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	switch r.c.mode {
	case Bearer:
		req.Header.Set("Authorization", r.c.bearer)
		return authChecked(r.c.up.Do(ctx, req))
	case Unauthenticated:
		return authChecked(r.c.up.Do(ctx, req))
	}
	tok, gen, err := r.c.login(ctx, 0)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", r.c.cookie+"="+tok)
	resp, err := r.c.up.Do(ctx, req)
	if err != nil || resp.Status != http.StatusUnauthorized {
		return authChecked(resp, err)
	}
	if r.relogged {
		return nil, toolerr.New(toolerr.AuthFailed, "Frigate rejected the session again after this call had already signed in anew; check the account and Frigate's auth settings")
	}
	r.relogged = true
	if tok, _, err = r.c.login(ctx, gen); err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", r.c.cookie+"="+tok)
	resp, err = r.c.up.Do(ctx, req)
	if err == nil && resp.Status == http.StatusUnauthorized {
		return nil, toolerr.New(toolerr.AuthFailed, "Frigate revoked the session and rejected it again right after a new login; check the account and Frigate's auth settings")
	}
	return authChecked(resp, err)
}

// GetJSON is Get for a JSON answer: a non-2xx status becomes an error and
// the body is decoded into out.
func (r *Read) GetJSON(ctx context.Context, path string, q url.Values, out any) error {
	resp, err := r.Get(ctx, path, q, "application/json")
	if err != nil {
		return err
	}
	if err := StatusErr(resp); err != nil {
		return err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Frigate answered with a body that is not the expected JSON")
	}
	return nil
}

// StatusErr maps a non-2xx status to an error whose message names the
// status and ends with Frigate's own reason ({"success": false,
// "message": …}, FastAPI's {"detail": …}), framed; never the body.
func StatusErr(resp *upstream.Response) error {
	if resp.Status == http.StatusUnprocessableEntity {
		return resp.Explain(toolerr.New(toolerr.InvalidArgument, "Frigate rejected the request parameters (HTTP 422)"))
	}
	return resp.Err()
}

func authChecked(resp *upstream.Response, err error) (*upstream.Response, error) {
	switch {
	case err != nil:
		return nil, err
	case resp.Status == http.StatusUnauthorized:
		return nil, upstream.Explain(toolerr.Wrap(toolerr.AuthFailed, resp.StatusError(), "Frigate rejected the request as unauthenticated (HTTP 401)"))
	case resp.Status == http.StatusForbidden:
		return nil, upstream.Explain(toolerr.Wrap(toolerr.Forbidden, resp.StatusError(), "Frigate refused access (HTTP 403); the account's role may not cover this camera or endpoint"))
	}
	return resp, nil
}

// login returns a session token. stale is the generation of a token the
// caller saw rejected (0: any current token will do); a newer token is
// reused, so concurrent reads whose session was revoked share one login.
func (c *Client) login(ctx context.Context, stale uint64) (string, uint64, error) {
	select {
	case c.lock <- struct{}{}:
	case <-ctx.Done():
		return "", 0, toolerr.Wrap(toolerr.Timeout, ctx.Err(), "the call's deadline passed while waiting for the Frigate login")
	}
	defer func() { <-c.lock }()
	if c.rejected {
		return "", 0, credentialsRejected()
	}
	if c.session != "" && c.gen != stale {
		return c.session, c.gen, nil
	}
	c.session = ""
	body, err := json.Marshal(map[string]string{"user": c.user, "password": string(c.pass)})
	if err != nil {
		return "", 0, toolerr.Wrap(toolerr.Internal, err, "cannot encode the login request")
	}
	resp, err := c.up.Do(ctx, upstream.Request{Method: http.MethodPost, Path: "/login", Body: body})
	if err != nil {
		return "", 0, err
	}
	switch s := resp.Status; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden || s == http.StatusBadRequest || s == http.StatusUnprocessableEntity:
		// Remembered so a wrong password is not tried again on every
		// call, which would trip Frigate's login rate limit.
		c.rejected = true
		return "", 0, credentialsRejected()
	case s == http.StatusNotFound:
		// Frigate with auth.enabled: false answers its login route 404
		// "Authentication is disabled" (frigate/api/auth.py).
		return "", 0, upstream.Explain(toolerr.Wrap(toolerr.AuthFailed, resp.StatusError(),
			"Frigate has no login (HTTP 404 on /api/login: its authentication is off); run the service without credentials (FRIGATE_TRUSTED_UNAUTHENTICATED=true, on a trusted network) or turn Frigate's auth on"))
	case s < 200 || s > 299:
		return "", 0, upstream.Explain(toolerr.Wrap(toolerr.CodeOf(resp.Err()), resp.StatusError(), "Frigate's login failed (HTTP %d); try again later", s))
	}
	for _, ck := range (&http.Response{Header: resp.Header}).Cookies() {
		if ck.Name == c.cookie && ck.Value != "" && upstream.HeaderValue(ck.Value) == nil {
			c.session = ck.Value
			c.gen++
			return c.session, c.gen, nil
		}
	}
	return "", 0, toolerr.New(toolerr.AuthFailed, "Frigate accepted the login but set no %s cookie; check FRIGATE_AUTH_COOKIE_NAME against Frigate's auth.cookie_name", c.cookie)
}

func credentialsRejected() error {
	return toolerr.Wrap(toolerr.AuthFailed, ErrCredentialsRejected,
		"Frigate rejected the configured username or password; the service will not try them again: fix the secret and restart the service")
}

// reason is Frigate's explanation of a refused request, except a 403's:
// require_camera_access (frigate/api/auth.py) answers "Access denied to
// camera 'x'. Allowed: [...]", naming every camera the account's role may
// see — a list wider than the service's camera scope.
func reason(status int, header http.Header, body []byte) string {
	if status == http.StatusForbidden {
		return ""
	}
	return upstream.DefaultReason(status, header, body)
}
