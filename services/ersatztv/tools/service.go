// Package tools is the ersatztv tool service's domain: the seed's 25 read
// and 23 write tools over ErsatzTV, in whichever of its two APIs the server
// speaks (detected at start), with the writes that replace a whole object
// made safe by a preview that reads the current state and shows a diff.
package tools

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

// Module wires the ersatztv service: settings, detection of the API,
// tools, instructions, the key for redaction and readiness.
var Module = fx.Module("ersatztv",
	fx.Provide(
		func() (Settings, error) { return LoadSettings(config.FromEnv()) },
		func(set Settings, log *slog.Logger) (*Service, error) {
			// ErsatzTV often starts with the host, and more slowly than
			// this service: detection waits for it a while.
			ctx, cancel := context.WithTimeout(context.Background(), DetectWait+set.Upstream.Timeout)
			defer cancel()
			return Start(ctx, set, log)
		},
		func(s *Service) toolkit.ReadyFunc { return s.Ready },
		func(s *Service) toolkit.Instructions { return toolkit.Instructions(s.Instructions()) },
	),
	toolkit.ProvideTools((*Service).Tools),
	toolkit.ProvideSecret(func(s Settings) toolkit.Secret { return toolkit.Secret(s.Upstream.Secret) }),
)

// Service holds what every tool needs.
type Service struct {
	set Settings
	c   *client.Client
	// version is what the server reported at start (zero when the mode
	// was configured rather than detected).
	version client.Version
	log     *slog.Logger
}

// Start builds the clients and settles the mode: ERSATZTV_MODE when set,
// else by asking the server. A server that cannot be asked stops the
// start with a message that says what to fix (or to set ERSATZTV_MODE).
func Start(ctx context.Context, set Settings, log *slog.Logger) (*Service, error) {
	keyed, plain, err := set.clients(log)
	if err != nil {
		return nil, err
	}
	s := &Service{set: set, log: log}
	switch set.Mode {
	case ModeV1:
		s.c = client.New(client.V1, keyed)
		return s, nil
	case ModeLegacy:
		s.c = client.New(client.Legacy, plain)
		return s, nil
	}
	v, err := detect(ctx, keyed, plain, set, log)
	if err != nil {
		return nil, fmt.Errorf("cannot tell which ErsatzTV API %s serves (or set %s=v1|legacy): %s",
			set.Upstream.Env.URL, EnvMode, toolerr.MessageOf(err))
	}
	s.version = v
	if v.Mode == client.V1 {
		s.c = client.New(client.V1, keyed)
	} else {
		s.c = client.New(client.Legacy, plain)
	}
	log.Info("ErsatzTV API detected", "mode", v.Mode, "api", v.API)
	return s, nil
}

// DetectWait is how long the start waits for an ErsatzTV that is not up
// yet (refused connections, timeouts, 5xx), asking again every second.
const DetectWait = 30 * time.Second

// detect asks until ErsatzTV answers or ctx ends; an answer that settles
// nothing (a wrong key, no ErsatzTV at the URL) ends it at once.
func detect(ctx context.Context, keyed, plain *upstream.Client, set Settings, log *slog.Logger) (client.Version, error) {
	for {
		v, err := client.Detect(ctx, keyed, plain, set.Upstream.Secret != nil)
		code := toolerr.CodeOf(err)
		if err == nil || (code != toolerr.UpstreamUnavailable && code != toolerr.Timeout) {
			return v, err
		}
		log.Info("ErsatzTV does not answer yet; asking again", "error", toolerr.MessageOf(err))
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(time.Second):
		}
	}
}

// Mode is the API the service speaks.
func (s *Service) Mode() client.Mode { return s.c.Mode() }

// Ready checks that ErsatzTV still answers its version in the service's
// mode (with the key accepted, for /api/v1).
func (s *Service) Ready(ctx context.Context) error {
	_, err := s.c.Version(ctx)
	return err
}

// Instructions is the guidance every tool shares, said once here rather
// than in each description.
func (s *Service) Instructions() string {
	var b strings.Builder
	if s.Mode() == client.V1 {
		b.WriteString("ErsatzTV (live TV channels from a media library) through its /api/v1 API. ")
		b.WriteString("Ids are integers from the list tools. Act on the id a row names for that purpose: a playout row's channelId for channel tools (reset), its id for playout tools; the two id spaces overlap. ")
		b.WriteString("Paged tools: pageNum is 0-based (the first page is 0); pageSize is clamped to the cap in the tool's description; " +
			"results report the effective pageSize, totalCount and hasMore: keep paging while hasMore is true. ")
		b.WriteString("Search takes Lucene queries: type:movie|show|season|episode|artist|music_video|other_video|song|image|remote_stream, title:…, id:(1 OR 2), AND/OR. ")
		b.WriteString("An etag in a result can be passed back as ifMatch where a tool takes it. ")
	} else {
		b.WriteString("ErsatzTV (live TV channels from a media library) through upstream ErsatzTV's /api, which offers fewer tools than the /api/v1 API: " +
			"channels, smart collections, FFmpeg profiles, sessions, version, library scans and playout resets. Channels are addressed by their number. ")
	}
	if s.set.AllowWrites {
		b.WriteString("Writes: give only what should change. The preview reads the current state, shows the complete request and a field-by-field diff, " +
			"and the confirm sends exactly that; nothing you leave out is cleared. Deletes and playout resets need a person's approval.")
	}
	return strings.TrimSpace(b.String())
}
