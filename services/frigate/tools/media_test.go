package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

func imageOf(t *testing.T, res *mcp.CallToolResult) (image.Image, int) {
	t.Helper()
	for _, c := range res.Content {
		if ic, ok := c.(mcp.ImageContent); ok {
			if ic.MIMEType != "image/jpeg" {
				t.Fatalf("MIME type %s", ic.MIMEType)
			}
			data, err := base64.StdEncoding.DecodeString(ic.Data)
			if err != nil {
				t.Fatal(err)
			}
			img, err := jpeg.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("not a JPEG: %v", err)
			}
			return img, len(data)
		}
	}
	t.Fatalf("no image content in %+v", res.Content)
	return nil, 0
}

func TestSnapshotsAreBounded(t *testing.T) {
	withSnap := demoEvents()[0]
	noSnap := demoEvents()[1]
	tests := []struct {
		name      string
		set       func(*Settings)
		tool      string
		args      map[string]any
		maxHeight int
		maxBytes  int
	}{
		{"event snapshot at the default bound", nil, "frigate_get_event_snapshot", map[string]any{"eventId": withSnap.ID}, 720, DefaultImageMaxBytes},
		{"event snapshot, smaller height asked", nil, "frigate_get_event_snapshot", map[string]any{"eventId": withSnap.ID, "height": 180, "crop": true}, 180, DefaultImageMaxBytes},
		{"latest frame under a tight byte budget", func(s *Settings) { s.ImageMaxBytes = 12 << 10 }, "frigate_get_latest_frame", map[string]any{"camera": "driveway"}, 720, 12 << 10},
		{"latest frame, height above the cap", func(s *Settings) { s.ImageMaxHeight = 240 }, "frigate_get_latest_frame", map[string]any{"camera": "driveway", "height": 1080}, 240, DefaultImageMaxBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{settings: tc.set})
			res := h.raw(t, tc.tool, tc.args)
			if res.IsError {
				t.Fatalf("failed: %+v", res.Content)
			}
			img, n := imageOf(t, res)
			if img.Bounds().Dy() > tc.maxHeight || n > tc.maxBytes {
				t.Errorf("image %dx%d, %d bytes; bound height %d, bytes %d", img.Bounds().Dx(), img.Bounds().Dy(), n, tc.maxHeight, tc.maxBytes)
			}
			var raw map[string]any
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if raw["height"] != float64(img.Bounds().Dy()) || raw["bytes"] != float64(n) {
				t.Errorf("details do not describe the image: %v", raw)
			}
			assertNoSecrets(t, h)
		})
	}

	t.Run("event without a snapshot", func(t *testing.T) {
		h := newHarness(t, harnessOpts{})
		msg := h.mustFail(t, "frigate_get_event_snapshot", map[string]any{"eventId": noSnap.ID}, "not_found")
		if !strings.Contains(msg, "no snapshot") {
			t.Errorf("message: %q", msg)
		}
		if n := len(h.requests("snapshot.jpg")); n != 0 {
			t.Error("snapshot requested for an event without one")
		}
	})
	// An unknown camera is 404 "Camera not found"; from 0.17 a non-admin
	// asking for a path that names no camera is refused first (403,
	// require_admin_by_default).
	t.Run("unknown camera", func(t *testing.T) {
		for rel, code := range map[fakefrigate.Release]string{fakefrigate.Release016: "not_found", fakefrigate.Release017: "forbidden"} {
			h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) { o.Release = rel }})
			h.mustFail(t, "frigate_get_latest_frame", map[string]any{"camera": "attic"}, code)
			h.mustFail(t, "frigate_get_latest_frame", map[string]any{"camera": "../config"}, "invalid_argument")
		}
	})
	t.Run("not a JPEG", func(t *testing.T) {
		h := newHarness(t, harnessOpts{front: func(_ *harness, next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "latest.jpg") {
					w.Header().Set("Content-Type", "image/jpeg")
					_, _ = w.Write([]byte("<html>" + errorBody))
					return
				}
				next.ServeHTTP(w, r)
			})
		}})
		h.mustFail(t, "frigate_get_latest_frame", map[string]any{"camera": "driveway"}, "upstream_unavailable")
		assertNoSecrets(t, h)
	})
}

// Frigate 0.18 serves an offline camera's last preview frame and marks it
// X-Frigate-Offline (frigate/api/media.py latest_frame); the result says
// the camera is offline instead of passing the picture off as live.
func TestLatestFrameOfAnOfflineCameraSaysSo(t *testing.T) {
	for _, rel := range []fakefrigate.Release{fakefrigate.Release017, fakefrigate.Release018} {
		h := newHarness(t, harnessOpts{fake: func(o *fakefrigate.Options) {
			o.Release = rel
			o.Cameras = fakefrigate.DemoCameras()
			o.Cameras[1].Offline = true
		}})
		res := h.raw(t, "frigate_get_latest_frame", map[string]any{"camera": fakefrigate.DemoCameras()[1].Name})
		if res.IsError {
			t.Fatalf("%s: %v", rel, res.Content)
		}
		var details map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &details)
		if got := details["offline"] == true; got != (rel == fakefrigate.Release018) {
			t.Errorf("%s: offline = %v", rel, details["offline"])
		}
	}
}
