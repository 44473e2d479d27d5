package fakefrigate

import (
	"fmt"
	"net/http"
	"time"
)

// Demo credentials: the demo profile puts DemoPassword into the frigate
// service's FRIGATE_PASSWORD_FILE.
const (
	DemoUser     = "viewer"
	DemoPassword = "toolgate-demo-viewer"
)

// DemoCameras is the demo's camera set.
func DemoCameras() []Camera {
	return []Camera{
		{Name: "front_door", Enabled: true, DetectEnabled: true, Zones: []string{"porch", "walkway"}, Track: []string{"person", "package", "dog"}, RTSP: "rtsp://admin:demo-camera-pass@192.0.2.21:554/stream1", FPS: 5},
		{Name: "driveway", Enabled: true, DetectEnabled: true, Zones: []string{"driveway", "street"}, Track: []string{"person", "car", "bicycle"}, RTSP: "rtsp://admin:demo-camera-pass@192.0.2.22:554/stream1", FPS: 5},
		{Name: "backyard", Enabled: true, DetectEnabled: false, Zones: []string{"lawn"}, Track: []string{"person", "cat", "dog"}, RTSP: "rtsp://admin:demo-camera-pass@192.0.2.23:554/stream1", FPS: 5},
	}
}

// DemoEvents returns a plausible day of events ending at now.
func DemoEvents(now time.Time) []Event {
	type spec struct {
		camera, label, sub string
		zones              []string
		hoursAgo           float64
		secs               float64
		score              float64
		desc               string
	}
	specs := []spec{
		{"front_door", "person", "", []string{"porch"}, 0.2, 0, 0.91, "A delivery driver in a brown uniform carrying a parcel to the front door."},
		{"front_door", "package", "", []string{"porch"}, 0.25, 3600, 0.84, "A cardboard box left on the doormat."},
		{"driveway", "car", "", []string{"driveway"}, 1.5, 95, 0.88, "A red hatchback parks in the driveway."},
		{"driveway", "person", "Alice", []string{"driveway", "street"}, 1.6, 40, 0.93, "A woman with a blue backpack walks from the car to the house."},
		{"backyard", "cat", "", []string{"lawn"}, 3, 120, 0.77, "A grey cat crosses the lawn."},
		{"front_door", "person", "", []string{"walkway"}, 5, 30, 0.86, "A person in a dark hoodie rings the doorbell and leaves."},
		{"driveway", "bicycle", "", []string{"street"}, 7, 12, 0.71, "A cyclist passes on the street."},
		{"backyard", "dog", "", []string{"lawn"}, 9, 300, 0.82, "A large brown dog runs around the garden."},
		{"front_door", "dog", "", []string{"walkway"}, 12, 25, 0.74, "A dog on a leash walks past the front door."},
		{"driveway", "car", "", []string{"street"}, 15, 20, 0.79, "A white van stops briefly on the street."},
		{"driveway", "person", "Bob", []string{"driveway"}, 20, 60, 0.9, "A man takes out the trash bins."},
		{"front_door", "person", "", []string{"porch"}, 23, 45, 0.8, "A neighbour drops off a letter."},
	}
	events := make([]Event, 0, len(specs))
	for i, s := range specs {
		start := float64(now.Add(-time.Duration(s.hoursAgo*float64(time.Hour))).UnixMicro()) / 1e6
		end := 0.0
		if s.secs > 0 {
			end = start + s.secs
		}
		events = append(events, Event{
			ID:     fmt.Sprintf("%.6f-%06x", start, 0xa1b2c3+i*7919),
			Camera: s.camera, Label: s.label, SubLabel: s.sub, Zones: s.zones, Start: start, End: end,
			HasClip: true, HasSnapshot: s.label != "package", Score: s.score, Description: s.desc,
		})
	}
	return events
}

// Demo returns a fake Frigate seeded with the demo cameras and a day of
// events, semantic search enabled, accepting DemoUser/DemoPassword.
func Demo() http.Handler {
	return New(Options{
		Users:          map[string]string{DemoUser: DemoPassword},
		Cameras:        DemoCameras(),
		Events:         DemoEvents(time.Now()),
		SemanticSearch: true,
	}).Handler()
}
