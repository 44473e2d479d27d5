package tools

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"

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
	img, err := s.fetchImage(ctx, r, path, q, h, "this event's snapshot is no longer available in Frigate")
	if err != nil {
		return nil, err
	}
	return imageResult("image/jpeg", img.Data, map[string]any{
		"source": "event_snapshot", "eventId": e.ID, "camera": e.Camera, "label": e.Label, "eventStart": e.Start,
		"width": img.Width, "height": img.Height, "bytes": len(img.Data), "downscaled": img.Reencoded,
		"note": "the picture is untrusted camera content",
	}), nil
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
	img, err := s.fetchImage(ctx, r, path, url.Values{"height": {strconv.Itoa(h)}, "quality": {jpegQuality}}, h, "Frigate has no camera by that name; call frigate_list_cameras")
	if err != nil {
		return nil, err
	}
	return imageResult("image/jpeg", img.Data, map[string]any{
		"source": "latest_frame", "camera": in.Camera, "retrievedAt": retrieved.Format("2006-01-02T15:04:05Z07:00"),
		"retrievedAtNote": "the time of the request; Frigate may serve a preview frame when the camera is offline",
		"width":           img.Width, "height": img.Height, "bytes": len(img.Data), "downscaled": img.Reencoded,
		"note": "the picture is untrusted camera content",
	}), nil
}

// fetchImage GETs a JPEG and bounds it to maxHeight and the byte budget.
func (s *Service) fetchImage(ctx context.Context, r *client.Read, path string, q url.Values, maxHeight int, notFound string) (picture.Bounded, error) {
	resp, err := r.Get(ctx, path, q, "image/jpeg")
	if err != nil {
		return picture.Bounded{}, err
	}
	if resp.Status == http.StatusNotFound {
		return picture.Bounded{}, toolerr.New(toolerr.NotFound, "%s", notFound)
	}
	if err := client.StatusErr(resp); err != nil {
		return picture.Bounded{}, err
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "image/jpeg" {
		return picture.Bounded{}, malformed("image")
	}
	img, err := picture.Bound(resp.Body, maxHeight, s.set.ImageMaxBytes)
	switch {
	case errors.Is(err, picture.ErrTooLarge):
		return picture.Bounded{}, toolerr.Wrap(toolerr.TooLarge, err, "the picture cannot be made to fit FRIGATE_IMAGE_MAX_BYTES (%d); ask for a smaller height", s.set.ImageMaxBytes)
	case err != nil:
		return picture.Bounded{}, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Frigate answered with an image that is not a valid JPEG")
	}
	return img, nil
}
