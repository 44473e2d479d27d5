package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// Version is what a server reports about itself.
type Version struct {
	Mode Mode `json:"mode"`
	// API is the path prefix the service uses.
	API string `json:"api"`
	// AppVersion and APIVersion are the server's own figures.
	AppVersion string `json:"appVersion"`
	APIVersion any    `json:"apiVersion,omitempty"`
}

// hostHint explains the usual reason why neither version path answers.
const hostHint = "ERSATZTV_URL must point at ErsatzTV's UI port (ETV_UI_PORT, default 8409) and include its base path (ETV_BASE_URL): " +
	"ErsatzTV answers 404 to API requests that arrive on its streaming port (ETV_STREAMING_PORT) unless their Host is localhost, " +
	"and this service does not fake a localhost Host"

// Detect asks the server which API it speaks: GET /api/v1/version with
// the machine key (keyed), then GET /api/version without it (plain). A
// JSON answer from /api/v1/version means V1; upstream ErsatzTV answers
// that path with its web app (200 text/html), 404, or — with OpenID
// Connect on — a redirect to its identity provider, and its /api/version
// with JSON. hasKey says whether keyed carries a key, for the message when
// a V1 server refuses.
func Detect(ctx context.Context, keyed, plain *upstream.Client, hasKey bool) (Version, error) {
	resp, err := keyed.Do(ctx, upstream.Request{Method: http.MethodGet, Path: "/api/v1/version"})
	switch {
	case errors.Is(err, upstream.ErrRedirect):
		// Upstream ErsatzTV with OpenID Connect on: its web app's
		// fallback page (/_Host) needs a login and redirects to the
		// identity provider, while its /api stays open (Startup.cs).
		return detectLegacy(ctx, plain)
	case err != nil:
		return Version{}, err
	}
	switch s := resp.Status; {
	case s == http.StatusOK && isJSON(resp):
		return parseVersion(V1, resp.Body)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		if !hasKey {
			return Version{}, toolerr.New(toolerr.AuthFailed,
				"ErsatzTV serves the /api/v1 API, which needs its machine key: set ERSATZTV_API_KEY_FILE (the key is shown on the machine-key screen, GET /api/v1/auth/machine-key, or stored in /config/api.key)")
		}
		return Version{}, toolerr.New(toolerr.AuthFailed,
			"ErsatzTV serves the /api/v1 API and rejected the key in ERSATZTV_API_KEY_FILE (HTTP %d); use the server's machine key", s)
	case s == http.StatusOK, s == http.StatusNotFound:
		// Upstream ErsatzTV: its web app or nothing at /api/v1.
	default:
		return Version{}, toolerr.New(toolerr.UpstreamUnavailable, "ErsatzTV answered GET /api/v1/version with HTTP %d; check ERSATZTV_URL", s)
	}
	return detectLegacy(ctx, plain)
}

// detectLegacy asks GET /api/version without the key: upstream ErsatzTV
// answers {"apiVersion": 3, "appVersion": …}.
func detectLegacy(ctx context.Context, plain *upstream.Client) (Version, error) {
	resp, err := plain.Do(ctx, upstream.Request{Method: http.MethodGet, Path: "/api/version"})
	if err != nil {
		return Version{}, err
	}
	switch {
	case resp.Status == http.StatusOK && isJSON(resp):
		return parseVersion(Legacy, resp.Body)
	case resp.Status == http.StatusNotFound:
		return Version{}, toolerr.New(toolerr.NotFound, "neither /api/v1/version nor /api/version answered (HTTP 404): %s", hostHint)
	case resp.Status == http.StatusOK:
		return Version{}, toolerr.New(toolerr.UpstreamUnavailable, "ERSATZTV_URL answers, but not with ErsatzTV's API (no JSON at /api/version); check the URL and its base path")
	}
	return Version{}, toolerr.New(toolerr.UpstreamUnavailable, "ErsatzTV answered GET /api/version with HTTP %d; check ERSATZTV_URL", resp.Status)
}

func isJSON(resp *upstream.Response) bool {
	b := bytes.TrimSpace(resp.Body)
	return len(b) > 0 && (b[0] == '{' || b[0] == '"') && json.Valid(b)
}

// parseVersion reads {"apiVersion": …, "appVersion": "…"}, or a bare
// version string as older ErsatzTV releases answer.
func parseVersion(mode Mode, body []byte) (Version, error) {
	v := Version{Mode: mode, API: mode.Base()}
	var s string
	if json.Unmarshal(body, &s) == nil {
		v.AppVersion = s
		return v, nil
	}
	var obj struct {
		APIVersion any    `json:"apiVersion"`
		AppVersion string `json:"appVersion"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		return v, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "ErsatzTV's version answer is not the expected JSON")
	}
	v.AppVersion, v.APIVersion = obj.AppVersion, obj.APIVersion
	return v, nil
}

// Version reads the server's version now, in the client's mode.
func (c *Client) Version(ctx context.Context) (Version, error) {
	resp, err := c.Do(ctx, Request{Method: http.MethodGet, Path: []string{"version"}})
	if err != nil {
		return Version{}, err
	}
	return parseVersion(c.mode, resp.Body)
}
