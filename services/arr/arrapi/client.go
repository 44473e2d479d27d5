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
	"strconv"
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
	up      *upstream.Client
	// searches bounds the indexer searches in flight (MaxSearches).
	searches chan struct{}
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
	up, err := upstream.New(upstream.Config{
		Name: display, Setting: App(cfg.App).Env().URL, BaseURL: cfg.URL, Timeout: cfg.Timeout, CAFile: cfg.CAFile,
		AllowHTTP: cfg.AllowHTTP, Header: header, UserAgent: "toolgate-arr", Logger: cfg.Logger, Reason: Reason,
		MaxBytes: 16 << 20, // a full series or movie list of a big library is several MiB
	})
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, display: display, root: strings.TrimRight(cfg.APIRoot, "/"), up: up, searches: make(chan struct{}, MaxSearches)}, nil
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
	return c.mapErr(c.up.GetJSON(ctx, c.root+path, q, out))
}

// MaxSearches bounds one app's indexer searches in flight, whichever tool
// starts them; one more answers busy at once.
const MaxSearches = 2

// GetSlow is Get for requests that make the application search its
// indexers: SearchTimeout instead of Timeout, never retried (a retry would
// repeat the whole search on every indexer), and at most MaxSearches at
// once.
func (c *Client) GetSlow(ctx context.Context, path string, q url.Values, out any) error {
	select {
	case c.searches <- struct{}{}:
		defer func() { <-c.searches }()
	default:
		return toolerr.New(toolerr.Busy, "%s already runs %d indexer searches; retry shortly", c.display, MaxSearches)
	}
	r := upstream.Request{Path: c.root + path, Query: q, Timeout: c.cfg.SearchTimeout, NoRetry: true}
	return c.mapErr(c.up.DoJSON(ctx, r, out))
}

// Post POSTs in as JSON to path and decodes the answer into out (nil
// discards it). It is never retried.
func (c *Client) Post(ctx context.Context, path string, in, out any) error {
	return c.mapErr(c.up.PostJSON(ctx, c.root+path, in, out))
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

// mapErr rewrites the messages whose fix is app-specific; the code, the
// hidden cause (for Status) and the application's reason are kept.
func (c *Client) mapErr(err error) error {
	if err == nil {
		return nil
	}
	env := EnvFor(c.cfg.App)
	switch s := Status(err); {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return upstream.Explain(toolerr.Wrap(toolerr.AuthFailed, err,
			"%s rejected the API key (HTTP %d); check the API key in %s (%s: Settings → General → Security → API Key)",
			c.display, s, env.Credential+"_FILE", c.display))
	case s == http.StatusNotFound:
		return upstream.Explain(toolerr.Wrap(toolerr.NotFound, err, "%s has no such item (HTTP 404)", c.display))
	case s != 0:
		return err // the application answered: its URL is right
	}
	switch toolerr.CodeOf(err) {
	case toolerr.UpstreamUnavailable, toolerr.Timeout:
		var te *toolerr.Error
		errors.As(err, &te)
		if strings.Contains(te.Message, env.URL) {
			return err // the upstream client named the setting already
		}
		return toolerr.Wrap(te.Code, err, "%s (%s)", te.Message, env.URL)
	}
	return err
}

// Reason picks the application's reason out of an error body of Sonarr,
// Radarr or Prowlarr, which share one error pipeline (Sonarr.Http's
// ErrorManagement): a validation failure is a JSON list of
// {propertyName, errorMessage, attemptedValue, severity, …}; any other
// error is {message, description, content}, whose description is the
// exception with its stack trace (never shown) and whose message starts
// with the status's name when an ApiException made it ("BadRequest: …",
// dropped here); model-binding failures and NotFound() are ASP.NET
// ProblemDetails.
func Reason(status int, h http.Header, body []byte) string {
	r := upstream.DefaultReason(status, h, body)
	return strings.TrimPrefix(r, strings.ReplaceAll(http.StatusText(status), " ", "")+": ")
}

// GrabRequest is the body of POST /release. GUID and IndexerID find the
// release in the cache; MovieID (Radarr), SeriesID and EpisodeID (Sonarr)
// are what ReleaseController.DownloadRelease uses for a release it could
// not match itself ("Unable to find matching movie, will need to be
// manually provided"); a matched release ignores them.
type GrabRequest struct {
	GUID      string `json:"guid"`
	IndexerID int    `json:"indexerId"`
	MovieID   int    `json:"movieId,omitempty"`
	SeriesID  int    `json:"seriesId,omitempty"`
	EpisodeID int    `json:"episodeId,omitempty"`
}

// Grab POSTs req to /release (Sonarr and Radarr v3): the application
// takes the release from the cache of its recent interactive searches (30
// minutes) and hands it to its download client. Its refusals are
// explained, with the application's reason, and searchTool (the app's
// release search tool) named as the way to a current release.
func (c *Client) Grab(ctx context.Context, req GrabRequest, searchTool string) error {
	err := c.Post(ctx, "/release", req, nil)
	var se *upstream.StatusError
	errors.As(err, &se)
	switch s := Status(err); {
	case err == nil:
		return nil
	case s == http.StatusNotFound && strings.Contains(se.Reason, "manually provided"):
		// DownloadRelease: the release is cached, but the application
		// cannot tell which movie or episodes it is, even with the ids
		// sent.
		return upstream.Explain(toolerr.Wrap(toolerr.InvalidArgument, err,
			"%s could not grab the release (HTTP 404): it cannot tell which movie or episodes the release is; nothing was grabbed — pick another release from %s", c.display, searchTool))
	case s == http.StatusNotFound:
		return upstream.Explain(toolerr.Wrap(toolerr.NotFound, err,
			"%s could not grab the release (HTTP 404); nothing was grabbed — it keeps search results for 30 minutes: search again with %s and preview the grab again", c.display, searchTool))
	case s == http.StatusConflict:
		return upstream.Explain(toolerr.Wrap(toolerr.UpstreamUnavailable, err,
			"%s could not grab the release: the indexer or the download client refused it (HTTP 409); nothing was grabbed — check %s_health and the download client, or pick another release", c.display, c.cfg.App))
	case s >= 400 && s < 500 && s != http.StatusUnauthorized && s != http.StatusForbidden && s != http.StatusTooManyRequests:
		return upstream.Explain(toolerr.Wrap(toolerr.InvalidArgument, err, "%s refused the grab (HTTP %d); nothing was grabbed", c.display, s))
	}
	return err
}

// GetByID GETs one item by its numeric id (/<kind>/<id>) into out. An
// unknown id is toolerr.NotFound saying where ids come from (hint: "find
// ids with sonarr_series_list").
func (c *Client) GetByID(ctx context.Context, kind string, id int, out any, hint string) error {
	p, err := IDPath(kind, id)
	if err != nil {
		return err
	}
	if err := c.Get(ctx, p, nil, out); err != nil {
		if Status(err) == http.StatusNotFound {
			return upstream.Explain(toolerr.Wrap(toolerr.NotFound, err, "%s has no %s with id %d; %s", c.display, kind, id, hint))
		}
		return err
	}
	return nil
}

// IDPath is the path of one item by its numeric id ("/series/7").
func IDPath(kind string, id int) (string, error) {
	if id < 1 {
		return "", toolerr.New(toolerr.InvalidArgument, "%s id must be a positive integer", kind)
	}
	return upstream.Path(kind, strconv.Itoa(id))
}

// CommandStarted is what a confirmed command (a search) answers in every
// app.
type CommandStarted struct {
	CommandID int    `json:"command_id"`
	Command   string `json:"command"`
	Status    string `json:"status"`
	// Next says how to follow the command.
	Next string `json:"next"`
}

// Grabbed is what a confirmed grab answers in every app.
type Grabbed struct {
	Grabbed bool   `json:"grabbed"`
	Title   string `json:"title"`
	Indexer string `json:"indexer"`
	// Next says how to follow the download; Note is the promise about
	// existing files.
	Next string `json:"next"`
	Note string `json:"note"`
}
