package tools

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Bounds on what an upstream answer may hold. A larger answer is refused
// rather than cut, so a result never silently misses cameras or events.
const (
	maxCameras   = 256
	maxDetectors = 32
	maxZones     = 64
	maxLabels    = 256
	maxNameLen   = 64
)

var (
	eventID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// labelText allows what Frigate labels and sub-labels hold (names
	// with spaces, accents) but no control characters or commas, which
	// Frigate uses as the list separator in queries.
	labelText = regexp.MustCompile(`^[^\x00-\x1f\x7f,]{1,64}$`)
	zoneName  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

func malformed(what string) error {
	return toolerr.New(toolerr.UpstreamUnavailable, "Frigate answered with malformed or oversized %s data; refusing it rather than guessing", what)
}

// rawEvent is the part of Frigate's EventResponse the tools read. Notably
// absent: thumbnail (an embedded image), data.description (generated text)
// and recognized license plates.
type rawEvent struct {
	ID          *string         `json:"id"`
	Label       *string         `json:"label"`
	SubLabel    json.RawMessage `json:"sub_label"`
	Camera      *string         `json:"camera"`
	StartTime   *float64        `json:"start_time"`
	EndTime     *float64        `json:"end_time"`
	Zones       []string        `json:"zones"`
	HasClip     bool            `json:"has_clip"`
	HasSnapshot bool            `json:"has_snapshot"`
	TopScore    *float64        `json:"top_score"`
	Data        struct {
		Score    *float64 `json:"score"`
		TopScore *float64 `json:"top_score"`
		Speed    *float64 `json:"average_estimated_speed"`
	} `json:"data"`
	SearchDistance *float64 `json:"search_distance"`
	SearchSource   *string  `json:"search_source"`
}

// Event is one tracked object as the tools return it.
type Event struct {
	ID          string   `json:"id"`
	Camera      string   `json:"camera"`
	Label       string   `json:"label"`
	SubLabel    string   `json:"subLabel,omitempty"`
	Zones       []string `json:"zones"`
	StartTime   float64  `json:"startTime"`
	Start       string   `json:"start"`
	EndTime     *float64 `json:"endTime,omitempty"`
	End         string   `json:"end,omitempty"`
	InProgress  bool     `json:"inProgress"`
	HasClip     bool     `json:"hasClip"`
	HasSnapshot bool     `json:"hasSnapshot"`
	// Score is data.score, the detection score of the frame the snapshot
	// shows: the value Frigate's min_score, max_score and score orderings
	// use. TopScore is data.top_score, the best score while tracking.
	Score    *float64 `json:"score,omitempty"`
	TopScore *float64 `json:"topScore,omitempty"`
	Speed    *float64 `json:"speed,omitempty"`
	// SearchDistance is a distance (lower is closer), not a confidence.
	SearchDistance *float64 `json:"searchDistance,omitempty"`
	SearchSource   string   `json:"searchSource,omitempty"`
}

func finite(f *float64) bool { return f != nil && !math.IsNaN(*f) && !math.IsInf(*f, 0) }

func unixISO(sec float64) string {
	return time.Unix(0, int64(sec*float64(time.Second))).UTC().Format(time.RFC3339)
}

// toEvent validates one upstream event.
func (r rawEvent) toEvent() (Event, error) {
	switch {
	case r.ID == nil || !eventID.MatchString(*r.ID),
		r.Camera == nil || !cameraName.MatchString(*r.Camera),
		r.Label == nil || !labelText.MatchString(*r.Label),
		!finite(r.StartTime) || *r.StartTime < 0,
		r.EndTime != nil && !finite(r.EndTime),
		len(r.Zones) > maxZones:
		return Event{}, malformed("event")
	}
	e := Event{
		ID: *r.ID, Camera: *r.Camera, Label: *r.Label, Zones: []string{},
		StartTime: *r.StartTime, Start: unixISO(*r.StartTime), EndTime: r.EndTime,
		InProgress: r.EndTime == nil, HasClip: r.HasClip, HasSnapshot: r.HasSnapshot,
	}
	if r.EndTime != nil {
		e.End = unixISO(*r.EndTime)
	}
	for _, z := range r.Zones {
		if !zoneName.MatchString(z) {
			return Event{}, malformed("event")
		}
		e.Zones = append(e.Zones, z)
	}
	sub, err := subLabel(r.SubLabel)
	if err != nil {
		return Event{}, err
	}
	e.SubLabel = sub
	// Frigate filters and sorts by data.score; showing top_score as the
	// score would make minScore and score_desc look wrong.
	if finite(r.Data.Score) {
		e.Score = r.Data.Score
	}
	for _, s := range []*float64{r.Data.TopScore, r.TopScore} {
		if finite(s) {
			e.TopScore = s
			break
		}
	}
	if finite(r.Data.Speed) {
		e.Speed = r.Data.Speed
	}
	if r.SearchDistance != nil {
		if !finite(r.SearchDistance) {
			return Event{}, malformed("search")
		}
		e.SearchDistance = r.SearchDistance
	}
	if r.SearchSource != nil {
		if *r.SearchSource != "thumbnail" && *r.SearchSource != "description" {
			return Event{}, malformed("search")
		}
		e.SearchSource = *r.SearchSource
	}
	return e, nil
}

// subLabel accepts Frigate's string or null, and the older [name, score].
func subLabel(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var pair []json.RawMessage
		if json.Unmarshal(raw, &pair) != nil || len(pair) == 0 || json.Unmarshal(pair[0], &s) != nil {
			return "", malformed("event")
		}
	}
	if s == "" {
		return "", nil
	}
	if utf8.RuneCountInString(s) > 128 || !utf8.ValidString(s) || hasControl(s) {
		return "", malformed("event")
	}
	return s, nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// rawConfig is the allowlisted part of GET /config: camera identifiers,
// zone names, detection state and tracked labels. Inputs, RTSP URLs,
// credentials and paths are never decoded.
type rawConfig struct {
	Cameras map[string]struct {
		Enabled *bool `json:"enabled"`
		Detect  struct {
			Enabled *bool `json:"enabled"`
		} `json:"detect"`
		Zones   map[string]json.RawMessage `json:"zones"`
		Objects struct {
			Track []string `json:"track"`
		} `json:"objects"`
	} `json:"cameras"`
	Objects struct {
		Track []string `json:"track"`
	} `json:"objects"`
	SemanticSearch struct {
		Enabled *bool `json:"enabled"`
	} `json:"semantic_search"`
}

// Camera is one camera's discovery record.
type Camera struct {
	Name          string   `json:"name"`
	Enabled       *bool    `json:"enabled,omitempty"`
	DetectEnabled *bool    `json:"detectEnabled,omitempty"`
	Zones         []string `json:"zones"`
	Labels        []string `json:"trackedLabels"`
}

func (rc rawConfig) cameras() ([]Camera, error) {
	if len(rc.Cameras) > maxCameras {
		return nil, malformed("configuration")
	}
	out := make([]Camera, 0, len(rc.Cameras))
	for name, c := range rc.Cameras {
		if !cameraName.MatchString(name) || len(c.Zones) > maxZones || len(c.Objects.Track) > maxLabels {
			return nil, malformed("configuration")
		}
		cam := Camera{Name: name, Enabled: c.Enabled, DetectEnabled: c.Detect.Enabled, Zones: []string{}, Labels: []string{}}
		for z := range c.Zones {
			if !zoneName.MatchString(z) {
				return nil, malformed("configuration")
			}
			cam.Zones = append(cam.Zones, z)
		}
		for _, l := range c.Objects.Track {
			if !labelText.MatchString(l) {
				return nil, malformed("configuration")
			}
			cam.Labels = append(cam.Labels, l)
		}
		sort.Strings(cam.Zones)
		sort.Strings(cam.Labels)
		out = append(out, cam)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// rawStats is the part of GET /stats the status tool reads. Process
// command lines, storage paths and hardware details are never decoded.
type rawStats struct {
	Cameras map[string]struct {
		CameraFPS        *float64 `json:"camera_fps"`
		ProcessFPS       *float64 `json:"process_fps"`
		SkippedFPS       *float64 `json:"skipped_fps"`
		DetectionFPS     *float64 `json:"detection_fps"`
		DetectionEnabled *bool    `json:"detection_enabled"`
	} `json:"cameras"`
	Detectors map[string]struct {
		InferenceSpeed *float64 `json:"inference_speed"`
	} `json:"detectors"`
	DetectionFPS *float64 `json:"detection_fps"`
	Service      *struct {
		Uptime      *float64 `json:"uptime"`
		LastUpdated *float64 `json:"last_updated"`
	} `json:"service"`
}

// CameraStats is one camera's sanitized statistics.
type CameraStats struct {
	Name             string   `json:"name"`
	CameraFPS        *float64 `json:"cameraFps,omitempty"`
	ProcessFPS       *float64 `json:"processFps,omitempty"`
	SkippedFPS       *float64 `json:"skippedFps,omitempty"`
	DetectionFPS     *float64 `json:"detectionFps,omitempty"`
	DetectionEnabled *bool    `json:"detectionEnabled,omitempty"`
}

// DetectorStats is one detector's inference speed.
type DetectorStats struct {
	Name             string   `json:"name"`
	InferenceSpeedMS *float64 `json:"inferenceSpeedMs,omitempty"`
}

func orNil(f *float64) *float64 {
	if finite(f) {
		return f
	}
	return nil
}
