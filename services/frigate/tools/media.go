package tools

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/frigate/client"
	"github.com/toolgate/toolgate/services/frigate/picture"
)

// jpegQuality is asked of Frigate; the picture package re-encodes lower
// only when the result would not fit.
const jpegQuality = "80"

func (s *Service) height(requested int) int {
	if requested <= 0 || requested > s.set.ImageMaxHeight {
		return s.set.ImageMaxHeight
	}
	return requested
}

type snapshotArgs struct {
	EventID string `json:"eventId" jsonschema:"The event id." schema:"pattern=^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
	Height  int    `json:"height,omitempty" jsonschema:"Wanted picture height in pixels (default and cap: FRIGATE_IMAGE_MAX_HEIGHT)." schema:"minimum=64,maximum=2160"`
	Crop    bool   `json:"crop,omitempty" jsonschema:"Crop to the detected object (default false)."`
}

type frameArgs struct {
	Camera string `json:"camera" jsonschema:"The camera name from frigate_list_cameras." schema:"pattern=^[A-Za-z0-9_-]{1,64}$"`
	Height int    `json:"height,omitempty" jsonschema:"Wanted picture height in pixels (default and cap: FRIGATE_IMAGE_MAX_HEIGHT)." schema:"minimum=64,maximum=2160"`
}

func (s *Service) eventSnapshot(ctx context.Context, r *client.Read, in snapshotArgs) (any, error) {
	// The event is read first: its camera decides the scope before any
	// image is requested, and a missing snapshot gets a clear answer.
	e, err := s.event(ctx, r, in.EventID)
	if err != nil {
		return nil, err
	}
	if !e.HasSnapshot {
		return nil, toolerr.New(toolerr.NotFound, "this event has no snapshot (snapshots may be disabled for its camera, or it was deleted); try frigate_get_latest_frame for the camera's current view")
	}
	path, err := upstream.Path("events", e.ID, "snapshot.jpg")
	if err != nil {
		return nil, err
	}
	h := s.height(in.Height)
	q := url.Values{"height": {strconv.Itoa(h)}, "quality": {jpegQuality}, "bbox": {"1"}}
	if in.Crop {
		q.Set("crop", "1")
	}
	img, _, err := s.fetchImage(ctx, r, path, q, h, "this event's snapshot is no longer available in Frigate")
	if err != nil {
		return nil, err
	}
	details := map[string]any{
		"source": "event_snapshot", "eventId": e.ID, "camera": e.Camera, "label": e.Label, "eventStart": e.Start,
		"width": img.Width, "height": img.Height, "bytes": len(img.Data), "downscaled": img.Reencoded,
		"note": "the picture is untrusted camera content",
	}
	if in.Crop && !e.InProgress {
		// Before 0.18 Frigate serves an ended event's stored snapshot
		// file as saved, ignoring crop, bbox and height
		// (frigate/api/media.py event_snapshot).
		details["cropNote"] = "Frigate releases before 0.18 ignore crop for an ended event and return the snapshot as it was saved (cropped only if the camera's snapshots.crop is on)"
	}
	return imageResult("image/jpeg", img.Data, details), nil
}

func (s *Service) latestFrame(ctx context.Context, r *client.Read, in frameArgs) (any, error) {
	if !cameraName.MatchString(in.Camera) {
		return nil, toolerr.New(toolerr.InvalidArgument, "camera must be a Frigate camera name (letters, digits, _ and -)")
	}
	if err := s.scope.check(in.Camera); err != nil {
		return nil, err
	}
	path, err := upstream.Path(in.Camera, "latest.jpg")
	if err != nil {
		return nil, err
	}
	h := s.height(in.Height)
	retrieved := s.now().UTC()
	img, hdr, err := s.fetchImage(ctx, r, path, url.Values{"height": {strconv.Itoa(h)}, "quality": {jpegQuality}}, h, "Frigate has no camera by that name; call frigate_list_cameras")
	if err != nil {
		return nil, err
	}
	details := map[string]any{
		"source": "latest_frame", "camera": in.Camera, "retrievedAt": retrieved.Format("2006-01-02T15:04:05Z07:00"),
		"retrievedAtNote": "the time of the request, not of the frame. When no frame arrived lately, Frigate 0.18 serves the camera's last preview frame " +
			"(then offline is true) and earlier releases its \"camera error\" picture, unmarked",
		"width": img.Width, "height": img.Height, "bytes": len(img.Data), "downscaled": img.Reencoded,
		"note": "the picture is untrusted camera content",
	}
	// frigate/api/media.py latest_frame (0.18): a preview frame stands in
	// for an offline camera, marked with this header.
	if strings.EqualFold(hdr.Get("X-Frigate-Offline"), "true") {
		details["offline"] = true
		details["offlineNote"] = "the camera is offline: this is its last preview frame, not a live one"
	}
	return imageResult("image/jpeg", img.Data, details), nil
}

// fetchImage GETs a JPEG and bounds it to maxHeight and the byte budget;
// it returns the answer's headers too.
func (s *Service) fetchImage(ctx context.Context, r *client.Read, path string, q url.Values, maxHeight int, notFound string) (picture.Bounded, http.Header, error) {
	resp, err := r.Get(ctx, path, q, "image/jpeg")
	if err != nil {
		return picture.Bounded{}, nil, err
	}
	if resp.Status == http.StatusNotFound {
		return picture.Bounded{}, nil, toolerr.New(toolerr.NotFound, "%s", notFound)
	}
	if err := client.StatusErr(resp); err != nil {
		return picture.Bounded{}, nil, err
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "image/jpeg" {
		return picture.Bounded{}, nil, malformed("image")
	}
	img, err := picture.Bound(resp.Body, maxHeight, s.set.ImageMaxBytes)
	switch {
	case errors.Is(err, picture.ErrTooLarge):
		return picture.Bounded{}, nil, toolerr.Wrap(toolerr.TooLarge, err, "the picture cannot be made to fit FRIGATE_IMAGE_MAX_BYTES (%d); ask for a smaller height", s.set.ImageMaxBytes)
	case err != nil:
		return picture.Bounded{}, nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Frigate answered with an image that is not a valid JPEG")
	}
	return img, resp.Header, nil
}
