// Package tools is the frigate tool service's domain: read-only tools over
// Frigate's API (status, cameras, capabilities, events, semantic search,
// snapshots and latest frames) with a camera scope, bounded time windows,
// explicit completeness reporting and bounded images.
package tools

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/frigate/client"
)

// CheckedReleases are the Frigate releases whose source
// (blakeblackshear/frigate at these tags) every request of this service
// was checked against; docs/services/frigate.md lists what differs.
var CheckedReleases = []string{"0.14.1", "0.15.2", "0.16.4", "0.17.2", "0.18.0-beta1"}

// releaseNotes are what a checked minor release lacks or does
// differently, as the results of this service see it.
var releaseNotes = map[int][]string{
	14: {"Frigate 0.14 has no semantic search (frigate_search_events answers unsupported)",
		"Frigate 0.14 reads a picture's height as h, not height: pictures arrive at full size and are downscaled here"},
	15: {"Frigate 0.15 has no roles: the account sees every camera"},
	16: {"Frigate 0.16 does not check a role's cameras: a viewer sees every camera"},
}

// olderNotes apply to every checked release before 0.18.
var olderNotes = []string{
	"before 0.18 an ended event's snapshot ignores crop (it comes as saved), and an offline camera's latest frame is Frigate's unmarked \"camera error\" picture",
}

// Service holds what every frigate tool needs.
type Service struct {
	set    Settings
	limits toolkit.Limits // the toolkit's bounds, reported by capabilities
	fc     *client.Client
	scope  Scope
	now    func() time.Time
	// semantic is the semantic-search capability last observed by a search.
	semantic atomic.Value
}

// NewClient builds the Frigate client from the settings.
func NewClient(set Settings, log *slog.Logger) (*client.Client, error) {
	return client.New(client.Config{
		Upstream: upstream.Config{
			Name:    "Frigate",
			Setting: "FRIGATE_URL",
			BaseURL: set.APIRoot.String(),
			// Each attempt may use the whole deadline; the call's context
			// carries the one deadline shared by all of a read's requests.
			Timeout:  set.Timeout,
			MaxBytes: int64(set.MaxResponseBytes),
			// The toolkit bounds the calls (FRIGATE_MAX_CONCURRENT), and
			// each call reads sequentially: this bound never binds first.
			MaxConcurrent: toolkit.MaxConcurrentLimit,
			CAFile:        set.CAFile,
			AllowHTTP:     set.AllowHTTP,
			UserAgent:     "toolgate-frigate",
			Logger:        log,
		},
		Mode: set.Auth, Username: set.Username, Password: set.Password, Token: set.Token, CookieName: set.CookieName,
	})
}

// New returns the service over an existing client; now nil means time.Now.
func New(set Settings, limits toolkit.Limits, fc *client.Client, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	s := &Service{set: set, limits: limits, fc: fc, scope: NewScope(set.Cameras), now: now}
	s.semantic.Store("unknown")
	return s
}

// Ready checks that Frigate answers and accepts the credentials.
func (s *Service) Ready(ctx context.Context) error {
	r := s.fc.Begin()
	if s.fc.Mode() == client.Unauthenticated {
		resp, err := r.Get(ctx, "/version", nil, textAccept)
		if err != nil {
			return err
		}
		return client.StatusErr(resp)
	}
	var profile map[string]any
	return r.GetJSON(ctx, "/profile", nil, &profile)
}

// read is a tool's handler: each call gets its own client.Read, which
// carries the call's one login retry.
func read[In any](s *Service, fn func(ctx context.Context, r *client.Read, in In) (any, error)) *toolkit.Handler {
	return toolkit.ReadFor(func(ctx context.Context, in In) (any, error) {
		return fn(ctx, s.fc.Begin(), in)
	})
}

// imageResult is the one place that decides how a picture leaves the
// service: as MCP image content via the toolkit, with details alongside.
func imageResult(mime string, data []byte, details any) any {
	return toolkit.Image{MIMEType: mime, Data: data, Details: details}
}

// Scope is the camera allowlist.
type Scope struct {
	allowed map[string]bool
	list    []string
}

// NewScope returns a scope over cameras; none means unrestricted.
func NewScope(cameras []string) Scope {
	if len(cameras) == 0 {
		return Scope{}
	}
	s := Scope{allowed: map[string]bool{}}
	for _, c := range cameras {
		if !s.allowed[c] {
			s.allowed[c] = true
			s.list = append(s.list, c)
		}
	}
	return s
}

// Restricted reports whether an allowlist is configured.
func (s Scope) Restricted() bool { return s.allowed != nil }

// Allows reports whether camera may be observed.
func (s Scope) Allows(camera string) bool { return s.allowed == nil || s.allowed[camera] }

// Name is "restricted" or "unrestricted".
func (s Scope) Name() string {
	if s.Restricted() {
		return "restricted"
	}
	return "unrestricted"
}

// check refuses cameras outside the scope. The message names neither the
// camera nor the scope's size, so a refusal reveals nothing about either.
func (s Scope) check(cameras ...string) error {
	for _, c := range cameras {
		if !s.Allows(c) {
			return errOutOfScope
		}
	}
	return nil
}

var errOutOfScope = toolerr.New(toolerr.Forbidden, "a requested camera is outside this service's camera scope (FRIGATE_CAMERAS); nothing was requested from Frigate")

// cameraFilter returns the cameras to send upstream: the requested ones
// after the scope check, else the whole scope (nil when unrestricted).
func (s Scope) cameraFilter(requested []string) ([]string, error) {
	if len(requested) > 0 {
		if err := s.check(requested...); err != nil {
			return nil, err
		}
		return requested, nil
	}
	return s.list, nil
}

// Window is a validated event interval in UTC Unix seconds.
type Window struct {
	After     float64 `json:"after"`
	Before    float64 `json:"before"`
	AfterISO  string  `json:"afterUtc"`
	BeforeISO string  `json:"beforeUtc"`
}

// msThreshold: a seconds value this large is in the year 5138; it is a
// millisecond timestamp from a JavaScript-minded caller.
const msThreshold = 1e11

func (s *Service) window(after, before float64) (Window, error) {
	for _, v := range []struct {
		name string
		v    float64
	}{{"after", after}, {"before", before}} {
		if math.IsNaN(v.v) || math.IsInf(v.v, 0) || v.v < 0 {
			return Window{}, toolerr.New(toolerr.InvalidArgument, "%s must be a non-negative number of UTC Unix seconds", v.name)
		}
		if v.v >= msThreshold {
			return Window{}, toolerr.New(toolerr.InvalidArgument, "%s looks like milliseconds; after and before are UTC Unix seconds (divide by 1000)", v.name)
		}
	}
	if after >= before {
		return Window{}, toolerr.New(toolerr.InvalidArgument, "the window is reversed or empty: before must be later than after")
	}
	if max := s.set.MaxWindow.Seconds(); before-after > max {
		return Window{}, toolerr.New(toolerr.InvalidArgument, "the window is %.0f seconds long; at most %.0f are allowed (FRIGATE_EVENTS_MAX_WINDOW_SECONDS): split it into smaller windows", before-after, max)
	}
	return Window{After: after, Before: before, AfterISO: unixISO(after), BeforeISO: unixISO(before)}, nil
}

// classify places a Frigate version: the minor releases 0.14 to 0.18 were
// checked against their source and are supported, with notes on what each
// lacks; older releases (no /api/login, a different API) are unsupported;
// anything newer is unknown.
func classify(version string) (string, []string) {
	v := strings.TrimSpace(version)
	base, suffix, hasSuffix := strings.Cut(v, "-")
	var major, minor, patch int
	n, _ := fmt.Sscanf(base, "%d.%d.%d", &major, &minor, &patch)
	switch {
	case n < 2 || major != 0 || hasSuffix && !isHex(suffix) && !strings.HasPrefix(suffix, "beta") && !strings.HasPrefix(suffix, "rc"):
		return "unknown", []string{fmt.Sprintf("this Frigate version was not checked (checked: %s); reads may still work", strings.Join(CheckedReleases, ", "))}
	case minor < 14:
		return "unsupported", []string{"Frigate releases before 0.14 are not supported; results may be wrong or incomplete"}
	case minor > 18:
		return "unknown", []string{fmt.Sprintf("this Frigate release is newer than the checked ones (%s); reads may still work", strings.Join(CheckedReleases, ", "))}
	}
	notes := append([]string(nil), releaseNotes[minor]...)
	if minor < 18 {
		notes = append(notes, olderNotes...)
	}
	return "supported", notes
}

func isHex(s string) bool {
	if len(s) < 6 || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// errorOf renders an error for a component of a partial result.
func errorOf(err error) map[string]any {
	return map[string]any{"code": toolerr.CodeOf(err), "message": toolerr.MessageOf(err)}
}
