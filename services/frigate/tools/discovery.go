package tools

import (
	"context"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/frigate/client"
)

var versionText = regexp.MustCompile(`^[0-9A-Za-z.+-]{1,64}$`)

// textAccept is the Accept header of Frigate's plain-text answers.
const textAccept = "text/plain, application/json"

// version reads GET /version (plain text). It needs the credentials like
// any other read: Frigate's nginx checks them for every /api path.
func version(ctx context.Context, r *client.Read) (string, error) {
	resp, err := r.Get(ctx, "/version", nil, textAccept)
	if err != nil {
		return "", err
	}
	if err := client.StatusErr(resp); err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(resp.Body))
	if !versionText.MatchString(v) {
		return "", malformed("version")
	}
	return v, nil
}

func (s *Service) config(ctx context.Context, r *client.Read) (rawConfig, error) {
	var rc rawConfig
	if err := r.GetJSON(ctx, "/config", nil, &rc); err != nil {
		return rawConfig{}, err
	}
	return rc, nil
}

func (s *Service) systemStatus(ctx context.Context, r *client.Read, _ toolkit.NoArgs) (any, error) {
	components := map[string]any{}
	out := map[string]any{
		"observedAt":          s.now().UTC().Format(time.RFC3339),
		"observedAtNote":      "the time this status was read, not a camera frame timestamp",
		"scope":               s.scope.Name(),
		"checkedReleases":     CheckedReleases,
		"components":          components,
		"authorizedApiAccess": "unknown",
	}
	// Reads are sequential on purpose: one call never uses more than one
	// of the FRIGATE_MAX_CONCURRENT upstream slots.
	var failures []error
	if resp, err := r.Get(ctx, "/", nil, textAccept); err == nil && client.StatusErr(resp) == nil {
		components["health"] = map[string]any{"ok": true}
	} else {
		if err == nil {
			err = client.StatusErr(resp)
		}
		failures = append(failures, err)
		components["health"] = map[string]any{"ok": false, "error": errorOf(err)}
	}
	if v, err := version(ctx, r); err == nil {
		class, warnings := classify(v)
		out["version"] = v
		out["compatibility"] = map[string]any{"classification": class, "scope": "status and discovery contracts only", "warnings": nonNil(warnings)}
		components["version"] = map[string]any{"ok": true}
	} else {
		failures = append(failures, err)
		components["version"] = map[string]any{"ok": false, "error": errorOf(err)}
	}
	var st rawStats
	err := r.GetJSON(ctx, "/stats", nil, &st)
	if err == nil {
		err = s.putStats(out, st)
	}
	switch {
	case err == nil:
		out["authorizedApiAccess"] = "confirmed"
		components["stats"] = map[string]any{"ok": true}
	default:
		if c := toolerr.CodeOf(err); c == toolerr.AuthFailed || c == toolerr.Forbidden {
			out["authorizedApiAccess"] = "denied"
		}
		failures = append(failures, err)
		components["stats"] = map[string]any{"ok": false, "error": errorOf(err)}
	}
	if len(failures) == 3 {
		return nil, failures[0]
	}
	out["ok"] = len(failures) == 0
	return out, nil
}

// putStats adds sanitized statistics: cameras outside the scope are
// dropped, and with a scope the global aggregates (detectors, total
// detection rate) are omitted, as they cannot be attributed to cameras.
func (s *Service) putStats(out map[string]any, st rawStats) error {
	if len(st.Cameras) > maxCameras || len(st.Detectors) > maxDetectors {
		return malformed("statistics")
	}
	cams := []CameraStats{}
	for name, c := range st.Cameras {
		if !cameraName.MatchString(name) {
			return malformed("statistics")
		}
		if !s.scope.Allows(name) {
			continue
		}
		cams = append(cams, CameraStats{Name: name, CameraFPS: orNil(c.CameraFPS), ProcessFPS: orNil(c.ProcessFPS),
			SkippedFPS: orNil(c.SkippedFPS), DetectionFPS: orNil(c.DetectionFPS), DetectionEnabled: c.DetectionEnabled})
	}
	sort.Slice(cams, func(i, j int) bool { return cams[i].Name < cams[j].Name })
	out["cameras"] = cams
	if !s.scope.Restricted() {
		dets := []DetectorStats{}
		for name, d := range st.Detectors {
			if len(name) > maxNameLen || hasControl(name) {
				return malformed("statistics")
			}
			dets = append(dets, DetectorStats{Name: name, InferenceSpeedMS: orNil(d.InferenceSpeed)})
		}
		sort.Slice(dets, func(i, j int) bool { return dets[i].Name < dets[j].Name })
		out["detectors"] = dets
		if v := orNil(st.DetectionFPS); v != nil {
			out["detectionFps"] = v
		}
	} else {
		out["omitted"] = []string{"detectors", "detectionFps"}
	}
	if st.Service != nil {
		svc := map[string]any{}
		if v := orNil(st.Service.Uptime); v != nil {
			svc["uptimeSeconds"] = v
		}
		if v := orNil(st.Service.LastUpdated); v != nil {
			svc["statsUpdatedAt"] = unixISO(*v)
		}
		out["service"] = svc
	}
	return nil
}

type camerasArgs struct {
	Camera string `json:"camera,omitempty" jsonschema:"Only this camera." schema:"pattern=^[A-Za-z0-9_-]{1,64}$"`
}

func (s *Service) listCameras(ctx context.Context, r *client.Read, in camerasArgs) (any, error) {
	if in.Camera != "" {
		if err := s.scope.check(in.Camera); err != nil {
			return nil, err
		}
	}
	rc, err := s.config(ctx, r)
	if err != nil {
		return nil, err
	}
	all, err := rc.cameras()
	if err != nil {
		return nil, err
	}
	cams := []Camera{}
	for _, c := range all {
		if s.scope.Allows(c.Name) && (in.Camera == "" || c.Name == in.Camera) {
			cams = append(cams, c)
		}
	}
	if in.Camera != "" && len(cams) == 0 {
		return nil, toolerr.New(toolerr.NotFound, "Frigate has no camera by that name; call frigate_list_cameras without a filter")
	}
	return map[string]any{"scope": s.scope.Name(), "cameras": cams}, nil
}

func (s *Service) capabilities(ctx context.Context, r *client.Read, _ toolkit.NoArgs) (any, error) {
	out := map[string]any{
		"checkedReleases": CheckedReleases,
		"limits": map[string]any{
			"scope":                  s.scope.Name(),
			"permittedCameraCount":   s.permittedCount(),
			"deadlineMs":             s.set.Timeout.Milliseconds(),
			"maxResponseBytes":       s.set.MaxResponseBytes,
			"maxResultBytes":         s.limits.MaxResultBytes,
			"maxConcurrent":          s.limits.MaxConcurrent,
			"eventsPageSize":         s.set.PageSize,
			"eventsMaxWindowSeconds": int64(s.set.MaxWindow.Seconds()),
			"imageMaxBytes":          s.set.ImageMaxBytes,
			"imageMaxHeight":         s.set.ImageMaxHeight,
		},
		"authMode": s.fc.Mode().String(),
	}
	discovery := "unknown"
	var warnings []string
	v, err := version(ctx, r)
	if err != nil {
		return nil, err
	}
	class, w := classify(v)
	warnings = append(warnings, w...)
	if class == "supported" {
		discovery = "supported"
	}
	semantic := s.semantic.Load()
	if strings.HasPrefix(v, "0.14.") {
		// 0.14 has no /events/search at all (frigate/api/event.py).
		semantic = "unsupported"
	}
	out["version"] = v
	out["compatibility"] = class
	caps := map[string]any{
		"systemStatus":    discovery,
		"cameraDiscovery": discovery,
		"events":          "unknown",
		"eventSnapshots":  "unknown",
		"latestFrame":     "unknown",
		// Only a real search shows whether it works; this tool never
		// runs one, so it reports what the last search observed.
		"semanticSearch": semantic,
	}
	out["capabilities"] = caps
	rc, err := s.config(ctx, r)
	if err != nil {
		var te *toolerr.Error
		if !errors.As(err, &te) {
			return nil, err
		}
		warnings = append(warnings, "tracked labels are unavailable: "+te.Message)
	} else {
		cams, err := rc.cameras()
		if err != nil {
			return nil, err
		}
		labels := map[string]bool{}
		for _, c := range cams {
			if s.scope.Allows(c.Name) {
				for _, l := range c.Labels {
					labels[l] = true
				}
			}
		}
		if !s.scope.Restricted() {
			for _, l := range rc.Objects.Track {
				if labelText.MatchString(l) {
					labels[l] = true
				}
			}
		}
		list := make([]string, 0, len(labels))
		for l := range labels {
			list = append(list, l)
		}
		sort.Strings(list)
		out["trackedLabels"] = list
		if rc.SemanticSearch.Enabled != nil {
			out["semanticSearchConfigured"] = *rc.SemanticSearch.Enabled
		}
	}
	out["warnings"] = nonNil(warnings)
	return out, nil
}

// permittedCount is the allowlist's size, or nil when unrestricted (the
// number of cameras then is Frigate's, shown by frigate_list_cameras).
func (s *Service) permittedCount() any {
	if !s.scope.Restricted() {
		return nil
	}
	return len(s.scope.list)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
