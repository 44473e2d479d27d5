// Package tools is the unraid service's domain: read-only diagnosis of an
// Unraid server over its official GraphQL API (system, array and parity,
// disks, Docker, VMs, shares, notifications, logs, network, UPS), and the
// optional managed actions behind UNRAID_ALLOW_WRITES.
package tools

import (
	"context"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// EnvMaxRequests bounds the service's requests to Unraid per 10 seconds
// (Unraid itself throttles at 100).
const EnvMaxRequests = "UNRAID_MAX_REQUESTS_PER_10S"

// Module provides the unraid tools.
var Module = fx.Module("unraid",
	toolkit.Upstream(unraidapi.App, func(c *upstream.Config) {
		c.UserAgent = "toolgate-unraid"
		// Every request passes the rate limiter once; a hidden retry
		// would spend Unraid's throttle budget behind its back.
		c.Retries = -1
		c.MaxConcurrent = 4
	}),
	fx.Provide(newLimiter, unraidapi.New, New),
	fx.Provide(func(s *Service) toolkit.ReadyFunc { return s.Ready }),
	toolkit.ProvideTools((*Service).Tools),
	toolkit.DefaultLimits(toolkit.Limits{MaxConcurrent: 4, MaxResultBytes: 256 << 10}),
	fx.Supply(toolkit.Instructions(Instructions)),
)

// Instructions steer the model once for every tool.
const Instructions = `Read-only diagnosis of one Unraid NAS: system load, array and parity, disks, Docker containers and their logs, VMs, shares, notifications, system logs, network, UPS. Pick the one tool that answers the question; an empty answer is an answer. Sizes come as raw numbers with their unit in the field name (_kb, _bytes) and a human form beside them. Lists are paged: follow next_offset only when needed. Actions (start/stop containers and VMs, parity checks, archiving notifications) exist only when the operator enabled them; each shows a preview to confirm.`

func newLimiter() (*unraidapi.Limiter, error) {
	l := config.FromEnv()
	n := l.Int(EnvMaxRequests, unraidapi.DefaultPer10s, 1, unraidapi.ThrottleLimit)
	if err := l.Err(); err != nil {
		return nil, err
	}
	return unraidapi.NewLimiter(n, unraidapi.DefaultMaxWait, nil, nil), nil
}

// Service holds what every tool needs.
type Service struct {
	api *unraidapi.Client
	now func() time.Time
	log *slog.Logger
}

// New returns the service over a client.
func New(api *unraidapi.Client, log *slog.Logger) *Service {
	return &Service{api: api, now: time.Now, log: log}
}

// Ready checks that Unraid answers and accepts the key.
func (s *Service) Ready(ctx context.Context) error {
	var out unraidapi.ReadyData
	_, err := s.api.Query(ctx, unraidapi.Ready, nil, &out)
	return err
}

// Tools lists the reads and the managed actions (the toolkit registers the
// actions only with UNRAID_ALLOW_WRITES=true).
func (s *Service) Tools() []toolkit.Tool {
	return append(s.reads(), s.writes()...)
}
