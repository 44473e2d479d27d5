// Package client talks to ErsatzTV in either of its two API shapes: the
// versioned /api/v1 contract of ErsatzTV forks such as ChicoryTV (machine
// key in X-Api-Key on every request) and upstream ErsatzTV's unversioned
// /api (no key). Detect finds out which one a server speaks. Every request
// goes through internal/upstream: one deadline over headers and body, a
// byte cap while streaming, no redirects, bounded retries of reads.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// Mode is the API an ErsatzTV server speaks.
type Mode string

const (
	// V1 is the /api/v1 contract (key required, paged reads, ETags).
	V1 Mode = "v1"
	// Legacy is upstream ErsatzTV's unversioned /api.
	Legacy Mode = "legacy"
)

// Base is the path prefix of the mode's API.
func (m Mode) Base() string {
	if m == V1 {
		return "/api/v1"
	}
	return "/api"
}

// maxETag bounds an ETag taken from an answer: it goes back upstream as
// If-Match and to the model.
const maxETag = 128

// Client sends requests to one ErsatzTV in one mode.
type Client struct {
	mode Mode
	up   *upstream.Client
}

// New returns a client for mode over up. For V1, up must send the machine
// key; for Legacy it should not (the server does not ask for it).
func New(mode Mode, up *upstream.Client) *Client { return &Client{mode: mode, up: up} }

// Mode is the API the client speaks.
func (c *Client) Mode() Mode { return c.mode }

// Request is one call relative to the mode's base (/api/v1 or /api).
type Request struct {
	Method string
	// Path holds the segments after the base, unescaped: each is checked
	// (no "", "." or "..", no control characters) and escaped, so a value
	// such as "a/b" stays one segment and can never reach another route.
	Path  []string
	Query url.Values
	// Body, when not nil, is sent as JSON.
	Body any
	// IfMatch is sent as If-Match when not empty; a value with control
	// characters (CR, LF, …) is refused before anything is sent.
	IfMatch string
}

// Response is a successful answer.
type Response struct {
	Status int
	Body   []byte
	// ETag is the answer's ETag header, if it carried a sane one.
	ETag string
}

// Do sends r and returns the 2xx answer; any other status is an error
// whose message names the status and never the upstream body.
func (c *Client) Do(ctx context.Context, r Request) (*Response, error) {
	segs := append(strings.Split(strings.TrimPrefix(c.mode.Base(), "/"), "/"), r.Path...)
	path, err := upstream.Path(segs...)
	if err != nil {
		return nil, err
	}
	req := upstream.Request{Method: r.Method, Path: path, Query: r.Query}
	if r.IfMatch != "" {
		if err := upstream.HeaderValue(r.IfMatch); err != nil {
			return nil, toolerr.New(toolerr.InvalidArgument, "ifMatch must not contain control characters (CR, LF, …); nothing was sent")
		}
		req.Header = http.Header{"If-Match": {r.IfMatch}}
	}
	if r.Body != nil {
		b, err := json.Marshal(r.Body)
		if err != nil {
			return nil, toolerr.Wrap(toolerr.Internal, err, "cannot encode the request to ErsatzTV")
		}
		req.Body = b
	}
	// PUT and DELETE are idempotent by HTTP's rules and by this API's.
	req.Idempotent = r.Method == http.MethodPut || r.Method == http.MethodDelete
	resp, err := c.up.Do(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := statusErr(resp); err != nil {
		return nil, err
	}
	out := &Response{Status: resp.Status, Body: resp.Body}
	if tag := resp.Header.Get("ETag"); tag != "" && len(tag) <= maxETag && upstream.HeaderValue(tag) == nil {
		out.ETag = tag
	}
	return out, nil
}

// statusErr explains the statuses this API gives meaning to, and leaves
// the rest to upstream's mapping; either way ErsatzTV's own reason (a
// ProblemDetails detail or title, a plain-text answer) ends the message.
func statusErr(resp *upstream.Response) error {
	cause := resp.StatusError()
	switch resp.Status {
	case http.StatusPreconditionFailed:
		return upstream.Explain(toolerr.Wrap(toolerr.Forbidden, cause, "ErsatzTV refused the write because the data changed since it was read (HTTP 412); nothing was written: preview again"))
	case http.StatusUnprocessableEntity:
		return upstream.Explain(toolerr.Wrap(toolerr.InvalidArgument, cause, "ErsatzTV rejected the request because a referenced id does not exist (HTTP 422); nothing was changed"))
	case http.StatusConflict:
		return upstream.Explain(toolerr.Wrap(toolerr.InvalidArgument, cause, "ErsatzTV refused the change as conflicting (HTTP 409); nothing was changed"))
	}
	return resp.Err()
}

// Get reads path and decodes its JSON answer into a generic value
// (numbers kept exact).
func (c *Client) Get(ctx context.Context, path []string, q url.Values) (any, *Response, error) {
	resp, err := c.Do(ctx, Request{Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return nil, nil, err
	}
	v, err := Decode(resp.Body)
	return v, resp, err
}

// GetInto reads path and decodes its JSON answer into out.
func (c *Client) GetInto(ctx context.Context, path []string, q url.Values, out any) (*Response, error) {
	resp, err := c.Do(ctx, Request{Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "ErsatzTV answered with a body that is not the expected JSON")
	}
	return resp, nil
}

// Decode parses a JSON answer into generic values, numbers as json.Number;
// an empty body is nil.
func Decode(body []byte) (any, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "ErsatzTV answered with a body that is not JSON")
	}
	return v, nil
}

// IsNotFound reports whether err is ErsatzTV's 404.
func IsNotFound(err error) bool {
	var se *upstream.StatusError
	return errors.As(err, &se) && se.Status == http.StatusNotFound
}
