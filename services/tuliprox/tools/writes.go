package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/tuliprox/client"
)

type updateArgs struct {
	Targets []string `json:"targets,omitempty" jsonschema:"Target names; omit or leave empty for all targets." schema:"maxItems=50,uniqueItems,items.minLength=1,items.maxLength=200"`
}

// updatePreview is what tuliprox_update_playlists would do. It holds no
// timestamps, so an unchanged Tuliprox gives the same preview at confirm.
type updatePreview struct {
	Action string `json:"action"`
	// Targets are the targets that would update, by name.
	Targets    []string `json:"targets"`
	AllTargets bool     `json:"all_targets"`
	// UpdateState is Tuliprox's current update state (idle, queued,
	// running), or "unknown" where the release does not report it.
	UpdateState string `json:"update_state"`
	Note        string `json:"note,omitempty"`
}

type geoipPreview struct {
	Action string `json:"action"`
	Note   string `json:"note"`
}

// errNoAuth refuses writes to a Tuliprox without web authentication, as
// the seed's server forces read-only there.
var errNoAuth = toolerr.New(toolerr.Forbidden,
	"Tuliprox runs without web authentication, so toolgate keeps it read-only; enable web_ui.auth in Tuliprox to allow updates")

// writable refuses writes while Tuliprox has web authentication off.
func (s *Service) writable(ctx context.Context) error {
	noAuth, err := s.c.NoAuth(ctx)
	if err != nil {
		return err
	}
	if noAuth {
		return errNoAuth
	}
	return nil
}

func (s *Service) updatePlaylistsTool() toolkit.Tool {
	return toolkit.Tool{
		Name: ToolUpdatePlaylist, Title: "Update playlists",
		Description: "Queue a playlist update of the named targets (all when none), which fetches from the providers. Needs playlist.write.",
		Annotations: toolkit.Annotations{Idempotent: true, OpenWorld: true},
		Handler:     toolkit.WriteFor(s.previewUpdate, s.applyUpdate),
	}
}

func (s *Service) updateGeoIPTool() toolkit.Tool {
	return toolkit.Tool{
		Name: ToolUpdateGeoIP, Title: "Update GeoIP database",
		Description: "Download and reload Tuliprox's GeoIP database. Needs reverse_proxy.geoip enabled and system.write.",
		Annotations: toolkit.Annotations{Idempotent: true, OpenWorld: true},
		Timeout:     150 * time.Second,
		Handler:     toolkit.WriteFor(s.previewGeoIP, s.applyGeoIP),
	}
}

// targetNames lists the configured targets; ok is false where this
// release or this user cannot list them.
func (s *Service) targetNames(ctx context.Context) ([]string, bool, error) {
	var src struct {
		Targets []struct {
			Name string `json:"name"`
		} `json:"targets"`
	}
	err := s.c.GetJSON(ctx, client.Call{Route: []string{"playlist", "sources"}, Permission: permPlaylistRead}, &src)
	switch {
	case errors.Is(err, client.ErrUnsupported), toolerr.CodeOf(err) == toolerr.Forbidden:
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	names := make([]string, 0, len(src.Targets))
	for _, t := range src.Targets {
		names = append(names, t.Name)
	}
	return names, true, nil
}

func (s *Service) updateState(ctx context.Context) (string, error) {
	var st struct {
		State string `json:"state"`
	}
	err := s.c.GetJSON(ctx, client.Call{Route: []string{"playlist", "update", "status"}, Permission: permPlaylistRead}, &st)
	switch {
	case errors.Is(err, client.ErrUnsupported), toolerr.CodeOf(err) == toolerr.Forbidden:
		return "unknown", nil
	case err != nil:
		return "", err
	}
	switch st.State {
	case "idle", "queued", "running":
		return st.State, nil
	}
	return "unknown", nil
}

func (s *Service) previewUpdate(ctx context.Context, in updateArgs) (updatePreview, error) {
	if err := s.writable(ctx); err != nil {
		return updatePreview{}, err
	}
	names, listed, err := s.targetNames(ctx)
	if err != nil {
		return updatePreview{}, err
	}
	p := updatePreview{Action: "queue a playlist update; Tuliprox then fetches these targets' inputs from the providers"}
	switch {
	case len(in.Targets) == 0:
		p.AllTargets, p.Targets = true, names
		if !listed {
			p.Targets = []string{}
			p.Note = "every target (this Tuliprox version or user cannot list them by name)"
		}
	default:
		if listed {
			var unknown []string
			for _, t := range in.Targets {
				if !contains(names, t) {
					unknown = append(unknown, t)
				}
			}
			if len(unknown) > 0 {
				return updatePreview{}, toolerr.New(toolerr.InvalidArgument, "Tuliprox has no target named %s; its targets are: %s",
					strings.Join(quote(unknown), ", "), strings.Join(quote(names), ", "))
			}
		}
		p.Targets = append([]string(nil), in.Targets...)
		sort.Strings(p.Targets)
	}
	if p.UpdateState, err = s.updateState(ctx); err != nil {
		return updatePreview{}, err
	}
	if p.UpdateState == "queued" || p.UpdateState == "running" {
		p.Note = strings.TrimSpace(p.Note + " An update is already " + p.UpdateState + "; Tuliprox refuses another until it has run.")
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func quote(list []string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		b, _ := json.Marshal(v)
		out[i] = string(b)
	}
	return out
}

func (s *Service) applyUpdate(ctx context.Context, _ updateArgs, p updatePreview) (map[string]any, error) {
	body := []string{} // empty: every target, as the Web UI sends it
	if !p.AllTargets {
		body = p.Targets
	}
	resp, err := s.c.Do(ctx, client.Call{Method: http.MethodPost, Route: []string{"playlist", "update"}, Body: body,
		Permission: permPlaylistWrite, NoRetry: true})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"queued": true, "targets": p.Targets, "all_targets": p.AllTargets,
		"next": "follow the run with " + ToolUpdateStatus}
	var run struct {
		RunID json.Number `json:"run_id"`
	}
	if len(resp.Body) > 0 && json.Unmarshal(resp.Body, &run) == nil && run.RunID != "" {
		out["run_id"] = run.RunID
	}
	return out, nil
}

func (s *Service) previewGeoIP(ctx context.Context, _ toolkit.NoArgs) (geoipPreview, error) {
	if err := s.writable(ctx); err != nil {
		return geoipPreview{}, err
	}
	return geoipPreview{
		Action: "download the GeoIP database from the source configured in Tuliprox and reload it",
		Note:   "needs reverse_proxy.geoip enabled in Tuliprox; the download may take a minute",
	}, nil
}

func (s *Service) applyGeoIP(ctx context.Context, _ toolkit.NoArgs, _ geoipPreview) (map[string]any, error) {
	// Sent once: a retried download would only repeat the work.
	_, err := s.c.Do(ctx, client.Call{Route: []string{"geoip", "update"}, Permission: permSystemWrite, NoRetry: true, Timeout: 120 * time.Second,
		BadRequest: "GeoIP is disabled in Tuliprox (reverse_proxy.geoip) or the download failed; check Tuliprox's log"})
	if err != nil {
		return nil, err
	}
	return map[string]any{"updated": true}, nil
}
