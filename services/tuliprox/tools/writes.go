package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strconv"
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
	// running), or "unknown" where the release (3.3.x) or the user cannot
	// read it.
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
		Description: "Request a playlist update of the named targets (all when none), which fetches from the providers. Needs playlist.write.",
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
	err := s.c.GetJSON(ctx, client.Call{Route: []string{"playlist", "sources"}, Permission: permPlaylistRead, Needs: needsSeedAPI}, &src)
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
	err := s.c.GetJSON(ctx, client.Call{Route: []string{"playlist", "update", "status"}, Permission: permPlaylistRead, Needs: needsSeedAPI}, &st)
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
	p := updatePreview{Action: "request a playlist update; Tuliprox then fetches these targets' inputs from the providers"}
	switch {
	case len(in.Targets) == 0:
		p.AllTargets, p.Targets = true, names
		if !listed {
			p.Targets = []string{}
			p.Note = "every target (this Tuliprox release or user cannot list them by name)."
		}
	case !listed:
		p.Note = "Target names not checked (this Tuliprox release or user cannot list them); Tuliprox refuses an unknown one."
		fallthrough
	default:
		if listed {
			var unknown []string
			for _, t := range in.Targets {
				if !containsFold(names, t) {
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
	switch p.UpdateState {
	case "queued", "running":
		p.Note = strings.TrimSpace(p.Note + " An update is already " + p.UpdateState + "; Tuliprox refuses another until it has run.")
	case "unknown":
		p.Note = strings.TrimSpace(p.Note + " " + unknownStateNote)
	}
	return p, nil
}

// unknownStateNote is what a release without the update status means for
// a request (v1_api_playlist.rs, 3.3.x: one update waits at most; a
// request while one waits is answered 202 and dropped).
const unknownStateNote = "Tuliprox does not report here whether an update is waiting; if one is, it answers this request like any other and drops it, and only the waiting update's targets are updated."

// containsFold matches a target name as Tuliprox does, ignoring ASCII case.
func containsFold(list []string, s string) bool {
	for _, v := range list {
		if asciiEqualFold(v, s) {
			return true
		}
	}
	return false
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
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
	out := map[string]any{"targets": p.Targets, "all_targets": p.AllTargets}
	var run struct {
		RunID json.Number `json:"run_id"`
	}
	if json.Unmarshal(resp.Body, &run) == nil && run.RunID != "" {
		// The seed's API: queued under a run id, a second request is a 409.
		out["outcome"], out["run_id"] = "queued", run.RunID
		out["next"] = "follow the run with " + ToolUpdateStatus
		return out, nil
	}
	// 3.3.x answers 202 without a body whether it queued the request or
	// dropped it because another was already waiting.
	out["outcome"] = "accepted"
	out["note"] = "Tuliprox accepted the request (HTTP " + strconv.Itoa(resp.Status) + ") without a run id: it either queued this update or, " +
		"if another was already waiting, dropped it in favour of that one, whose targets may differ. This release reports no update status: " +
		"Tuliprox's log says \"Update process started\" for each run."
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
