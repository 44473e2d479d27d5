// Package arrapi is the small typed base client shared by the Sonarr,
// Radarr and Prowlarr tool modules of the arr service.
//
// It covers what the *arr APIs have in common: the API key in the
// X-Api-Key header (never in the URL), the <APP>_* settings, the calls and
// types that are identical across Sonarr and Radarr v3 (system status,
// health, disk space, commands, the paging envelope), error mapping with
// app-specific hints, a scrubber for download links that carry keys, and
// the readiness check of every configured app.
//
// All requests go through internal/upstream, so they are bounded
// (deadline, byte cap, no redirects, retries only for reads).
package arrapi

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
)

// Client talks to one *arr application. It is safe for concurrent use.
type Client struct {
	cfg     Config
	display string
	root    string
	fast    *upstream.Client
	slow    *upstream.Client
}

// New validates cfg and builds a Client.
func New(cfg Config) (*Client, error) {
	if cfg.App == "" {
		return nil, errors.New("arrapi: Config.App is empty")
	}
	if len(cfg.APIKey) == 0 {
		return nil, errors.New("arrapi: " + cfg.App + ": API key is empty")
	}
	if cfg.APIRoot == "" {
		cfg.APIRoot = "/api/v3"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.SearchTimeout <= 0 {
		cfg.SearchTimeout = DefaultSearchTimeout
	}
	display := DisplayName(cfg.App)
	header := http.Header{"X-Api-Key": {string(cfg.APIKey)}, "Accept": {"application/json"}}
	base := upstream.Config{
		Name: display, BaseURL: cfg.URL, Timeout: cfg.Timeout, CAFile: cfg.CAFile,
		AllowHTTP: cfg.AllowHTTP, Header: header, UserAgent: "toolgate-arr", Logger: cfg.Logger,
		MaxBytes: 16 << 20, // a full series or movie list of a big library is several MiB
	}
	fast, err := upstream.New(base)
	if err != nil {
		return nil, err
	}
	// Indexer searches are slow and costly for the indexers: a longer
	// deadline, and no retries that would repeat the whole search.
	slowCfg := base
	slowCfg.Timeout = cfg.SearchTimeout
	slowCfg.Retries = -1
	slowCfg.MaxConcurrent = 2
	slow, err := upstream.New(slowCfg)
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, display: display, root: strings.TrimRight(cfg.APIRoot, "/"), fast: fast, slow: slow}, nil
}

// DisplayName is the capitalised application name used in messages
// ("sonarr" → "Sonarr").
func DisplayName(app string) string {
	if app == "" {
		return ""
	}
	return strings.ToUpper(app[:1]) + app[1:]
}

// App returns the lower-case application name.
func (c *Client) App() string { return c.cfg.App }

// SearchTimeout is the deadline of indexer searches; tools that call
// GetSlow set their toolkit.Tool.Timeout a little above it.
func (c *Client) SearchTimeout() time.Duration { return c.cfg.SearchTimeout }

// Timeout is the deadline of ordinary requests.
func (c *Client) Timeout() time.Duration { return c.cfg.Timeout }

// Secret returns the API key for the service's redactor. It is nil-safe:
// an unconfigured app (nil Client) has no secret.
func (c *Client) Secret() toolkit.Secret {
	if c == nil {
		return nil
	}
	return toolkit.Secret(c.cfg.APIKey)
}

// Get GETs path (relative to the API root, e.g. "/series" or one built
// with upstream.Path) and decodes the JSON answer into out.
func (c *Client) Get(ctx context.Context, path string, q url.Values, out any) error {
	return c.mapErr(c.fast.GetJSON(ctx, c.root+path, q, out))
}

// GetSlow is Get for requests that make the application search its
// indexers: SearchTimeout instead of Timeout, and never retried.
func (c *Client) GetSlow(ctx context.Context, path string, q url.Values, out any) error {
	return c.mapErr(c.slow.GetJSON(ctx, c.root+path, q, out))
}

// Post POSTs in as JSON to path and decodes the answer into out (nil
// discards it). It is never retried.
func (c *Client) Post(ctx context.Context, path string, in, out any) error {
	return c.mapErr(c.fast.PostJSON(ctx, c.root+path, in, out))
}

// Status returns the HTTP status behind err when the application answered
// with a non-2xx status, or 0.
func Status(err error) int {
	var se *upstream.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

// mapErr rewrites the messages whose fix is app-specific; the code and the
// hidden cause (for Status) are kept.
func (c *Client) mapErr(err error) error {
	if err == nil {
		return nil
	}
	env := EnvFor(c.cfg.App)
	switch s := Status(err); {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return toolerr.Wrap(toolerr.AuthFailed, err,
			"%s rejected the API key (HTTP %d); check the API key in %s (%s: Settings → General → Security → API Key)",
			c.display, s, env.APIKey+"_FILE", c.display)
	case s == http.StatusNotFound:
		return toolerr.Wrap(toolerr.NotFound, err, "%s has no such item (HTTP 404)", c.display)
	}
	switch toolerr.CodeOf(err) {
	case toolerr.UpstreamUnavailable, toolerr.Timeout:
		var te *toolerr.Error
		errors.As(err, &te)
		return toolerr.Wrap(te.Code, err, "%s (%s)", te.Message, env.URL)
	}
	return err
}

// Grab POSTs exactly {"guid", "indexerId"} to /release (Sonarr and Radarr
// v3): the application takes the release from the cache of its recent
// interactive searches and hands it to its download client. The refusals
// (404 not in the cache, 409 refused by the indexer or download client)
// are left to the caller, whose messages name its own tools.
func (c *Client) Grab(ctx context.Context, guid string, indexerID int) error {
	body := struct {
		GUID      string `json:"guid"`
		IndexerID int    `json:"indexerId"`
	}{guid, indexerID}
	return c.Post(ctx, "/release", body, nil)
}
