// Package tools is the tuliprox tool service's domain: the 14 read and 2
// write tools of the seed's catalog over Tuliprox's REST API, with the
// configuration redacted by the seed's rules and stricter, and every other
// result stripped of provider URLs and Xtream path credentials.
package tools

import (
	"context"
	"log/slog"
	"strings"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/tuliprox/client"
)

// Module wires the tuliprox service: settings, the signed-in client,
// tools, instructions, the password for redaction and readiness.
var Module = fx.Module("tuliprox",
	fx.Provide(
		func() (client.Settings, error) { return client.LoadSettings(config.FromEnv()) },
		func(set client.Settings, log *slog.Logger) (*Service, error) {
			c, err := client.NewFromSettings(set, client.Options{Logger: log})
			if err != nil {
				return nil, err
			}
			return New(set, c, log), nil
		},
		func(s *Service) toolkit.ReadyFunc { return s.Ready },
		func(s *Service) toolkit.Instructions { return toolkit.Instructions(s.Instructions()) },
	),
	toolkit.ProvideTools((*Service).Tools),
	toolkit.ProvideSecret(func(s client.Settings) toolkit.Secret { return toolkit.Secret(s.Secret()) }),
	toolkit.DefaultLimits(toolkit.Limits{MaxConcurrent: 4}),
)

// Service holds what every tool needs.
type Service struct {
	set client.Settings
	c   *client.Client
	log *slog.Logger
	rel release
}

// New returns the service over a Tuliprox client.
func New(set client.Settings, c *client.Client, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{set: set, c: c, log: log}
}

// Ready checks that Tuliprox answers and accepts the sign-in.
func (s *Service) Ready(ctx context.Context) error { return s.c.Ready(ctx) }

// Instructions is the guidance every tool shares, said once here.
func (s *Service) Instructions() string {
	var b strings.Builder
	b.WriteString("Tuliprox (IPTV proxy) through its REST API, as a Tuliprox Web UI user whose group limits what answers; " +
		"a tool whose permission the user lacks fails with HTTP 403 and returns no data. ")
	b.WriteString("Playlists and EPG: start with tuliprox_list_playlist_sources for target and input names; the playlist and EPG tools read stored data only. " +
		"Page with offset += returned while has_more is true; limit is clamped (limit_clamped says so). " +
		"skipped_records or skipped_playlist_records above 0 means a damaged database, and a note explains a 0 result; read notes. ")
	b.WriteString("EPG problems: tuliprox_query_playlist_items with epg_status=unmatched or missing_id, then tuliprox_query_target_epg_channels with issue=expired or unreferenced, then tuliprox_get_target_epg_channel for one id. ")
	b.WriteString("HTTP 503 means the feature is off in Tuliprox (stream history, QoS); \"not supported by this Tuliprox release (needs ...)\" means the release lacks the route: " +
		"published releases (3.3.x) lack the playlist, EPG, event and update-status tools, so use the others there. " +
		"Stream history covers the last 7 days unless from/to say otherwise. ")
	if s.set.AllowWrites {
		b.WriteString("Writes: tuliprox_update_playlists requests a playlist update (all targets when none are named); its outcome is queued (with a run id; HTTP 409 means one is already queued) " +
			"or accepted (a release that may have dropped it in favour of an update already waiting: read the note). tuliprox_update_geoip refreshes the GeoIP database; " +
			"both are refused while Tuliprox runs without web authentication.")
	}
	return strings.TrimSpace(b.String())
}
