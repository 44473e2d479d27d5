package fakefrigate

import (
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type client struct {
	t   *testing.T
	url string
}

func serve(t *testing.T, o Options) (*Fake, client) {
	t.Helper()
	if o.Users == nil {
		o.Users = map[string]string{DemoUser: DemoPassword}
	}
	if o.Cameras == nil {
		o.Cameras = DemoCameras()
	}
	if o.Events == nil {
		o.Events = DemoEvents(time.Now())
	}
	f := New(o)
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return f, client{t, srv.URL}
}

func (c client) login(pw string) (*http.Response, *http.Cookie) {
	c.t.Helper()
	res, err := http.Post(c.url+"/api/login", "application/json", strings.NewReader(`{"user":"`+DemoUser+`","password":"`+pw+`"}`))
	if err != nil {
		c.t.Fatal(err)
	}
	res.Body.Close()
	for _, ck := range res.Cookies() {
		if ck.Name == CookieName {
			return res, ck
		}
	}
	return res, nil
}

func (c client) get(path string, ck *http.Cookie) (*http.Response, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url+path, nil)
	if ck != nil {
		req.AddCookie(ck)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

// On the authenticated port Frigate's nginx sends every /api path but
// /api/login through auth_request (nginx.conf, every release 0.14-0.18):
// health and version too, although their FastAPI routes are public.
func TestEveryPathButLoginNeedsASessionOnTheAuthenticatedPort(t *testing.T) {
	for _, rel := range Releases {
		t.Run(string(rel), func(t *testing.T) {
			_, c := serve(t, Options{Release: rel})
			for _, p := range []string{"/api/", "/api/version", "/api/stats", "/api/config", "/api/profile", "/api/events", "/api/front_door/latest.jpg"} {
				if res, _ := c.get(p, nil); res.StatusCode != http.StatusUnauthorized {
					t.Errorf("%s without a session: %d", p, res.StatusCode)
				}
			}
			_, ck := c.login(DemoPassword)
			if ck == nil {
				t.Fatal("no session cookie")
			}
			res, body := c.get("/api/version", ck)
			if res.StatusCode != http.StatusOK || string(body) != rel.Version() || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("version: %d %q", res.StatusCode, body)
			}
		})
	}
}

// The internal port 5000 passes everything, as admin.
func TestInternalPortNeedsNothing(t *testing.T) {
	_, c := serve(t, Options{Unauthenticated: true})
	for _, p := range []string{"/api/", "/api/version", "/api/stats", "/api/events?limit=2", "/api/front_door/latest.jpg?height=90"} {
		if res, _ := c.get(p, nil); res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", p, res.StatusCode)
		}
	}
}

// A wrong password: 0.14's Flask login answers 400, FastAPI's 401; with
// auth disabled, 0.18 answers every login 404.
func TestLoginAnswersByRelease(t *testing.T) {
	for _, rel := range Releases {
		_, c := serve(t, Options{Release: rel})
		want := http.StatusUnauthorized
		if rel == Release014 {
			want = http.StatusBadRequest
		}
		if res, ck := c.login("wrong"); res.StatusCode != want || ck != nil {
			t.Errorf("%s: wrong password %d", rel, res.StatusCode)
		}
		if res, ck := c.login(DemoPassword); res.StatusCode != http.StatusOK || ck == nil {
			t.Errorf("%s: login %d", rel, res.StatusCode)
		}
		_, c = serve(t, Options{Release: rel, AuthDisabled: true})
		want = http.StatusOK
		if rel == Release018 {
			want = http.StatusNotFound
		}
		if res, _ := c.login(DemoPassword); res.StatusCode != want {
			t.Errorf("%s with auth disabled: login %d, want %d", rel, res.StatusCode, want)
		}
	}
}

// Missing events and the search route, per release.
func TestMissingEventsAndSearchByRelease(t *testing.T) {
	for _, rel := range Releases {
		t.Run(string(rel), func(t *testing.T) {
			_, c := serve(t, Options{Release: rel})
			_, ck := c.login(DemoPassword)
			res, body := c.get("/api/events/nosuch", ck)
			wantType, wantBody := "application/json", `"Event not found"`
			if rel == Release014 {
				wantType, wantBody = "text/html", "Event not found"
			}
			if res.StatusCode != http.StatusNotFound || !strings.HasPrefix(res.Header.Get("Content-Type"), wantType) || strings.TrimSpace(string(body)) != wantBody {
				t.Errorf("missing event: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
			}
			res, body = c.get("/api/events/search?query=person", ck)
			switch {
			case rel == Release014 && res.StatusCode != http.StatusNotFound:
				t.Errorf("0.14 has no search, got %d", res.StatusCode)
			case rel != Release014 && (res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Semantic search is not enabled")):
				t.Errorf("search while disabled: %d %s", res.StatusCode, body)
			}
		})
	}
}

// From 0.17 a role's cameras are checked per request: an event of another
// camera is 403 and lists leave its events out silently.
func TestRoleCamerasFrom017(t *testing.T) {
	for _, rel := range Releases {
		t.Run(string(rel), func(t *testing.T) {
			events := DemoEvents(time.Now())
			_, c := serve(t, Options{Release: rel, Events: events, RoleCameras: []string{"front_door"}})
			_, ck := c.login(DemoPassword)
			var other Event
			for _, e := range events {
				if e.Camera != "front_door" {
					other = e
				}
			}
			res, _ := c.get("/api/events/"+other.ID, ck)
			_, body := c.get("/api/events?cameras=driveway,front_door", ck)
			var listed []map[string]any
			_ = json.Unmarshal(body, &listed)
			onlyFront := true
			for _, e := range listed {
				onlyFront = onlyFront && e["camera"] == "front_door"
			}
			enforced := rel == Release017 || rel == Release018
			if enforced != (res.StatusCode == http.StatusForbidden) || enforced != onlyFront {
				t.Errorf("event of another camera: %d; list only front_door: %v", res.StatusCode, onlyFront)
			}
		})
	}
}

// An offline camera's latest frame: the camera-error picture before 0.18,
// the last preview marked X-Frigate-Offline from 0.18.
func TestOfflineCameraFrame(t *testing.T) {
	for _, rel := range Releases {
		cams := DemoCameras()
		cams[0].Offline = true
		_, c := serve(t, Options{Release: rel, Unauthenticated: true, Cameras: cams})
		res, body := c.get("/api/"+cams[0].Name+"/latest.jpg", nil)
		if _, err := jpeg.Decode(strings.NewReader(string(body))); res.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("%s: %d %v", rel, res.StatusCode, err)
		}
		if got := res.Header.Get("X-Frigate-Offline") == "true"; got != (rel == Release018) {
			t.Errorf("%s: X-Frigate-Offline %v", rel, got)
		}
	}
}

// Pictures are sized with h on 0.14 and height later; an ended event's
// snapshot ignores the size before 0.18 (the stored file is served).
func TestPictureHeightByRelease(t *testing.T) {
	for _, rel := range Releases {
		events := DemoEvents(time.Now())
		_, c := serve(t, Options{Release: rel, Unauthenticated: true, Events: events})
		height := func(path string) int {
			_, body := c.get(path, nil)
			cfg, err := jpeg.DecodeConfig(strings.NewReader(string(body)))
			if err != nil {
				t.Fatalf("%s %s: %v", rel, path, err)
			}
			return cfg.Height
		}
		wantFrame := map[bool]int{true: 720, false: 180}[rel == Release014]
		if got := height("/api/front_door/latest.jpg?height=180"); got != wantFrame {
			t.Errorf("%s: latest.jpg?height=180 is %d high", rel, got)
		}
		if rel == Release014 {
			if got := height("/api/front_door/latest.jpg?h=180"); got != 180 {
				t.Errorf("0.14: latest.jpg?h=180 is %d high", got)
			}
		}
		var ended Event
		for _, e := range events {
			if e.End != 0 && e.HasSnapshot {
				ended = e
			}
		}
		wantSnap := map[bool]int{true: 180, false: 720}[rel == Release018]
		if got := height(fmt.Sprintf("/api/events/%s/snapshot.jpg?height=180", ended.ID)); got != wantSnap {
			t.Errorf("%s: ended event's snapshot?height=180 is %d high", rel, got)
		}
	}
}

// Semantic search takes the 100 nearest events over the whole database
// and filters those: a matching event outside them is never found, even
// when the window holds nothing else.
func TestSearchFiltersOnlyTheHundredNearest(t *testing.T) {
	now := time.Now()
	var events []Event
	for i := range 120 {
		events = append(events, Event{ID: fmt.Sprintf("near-%03d", i), Camera: "driveway", Label: "car",
			Start: float64(now.Add(-48 * time.Hour).Unix()), End: 1, Score: 0.8, Description: "red car"})
	}
	inWindow := Event{ID: "far-one", Camera: "driveway", Label: "car", Start: float64(now.Add(-time.Hour).Unix()), End: 1, Score: 0.8, Description: "a red vehicle"}
	events = append(events, inWindow)
	_, c := serve(t, Options{Unauthenticated: true, SemanticSearch: true, Events: events})
	after := now.Add(-2 * time.Hour).Unix()
	_, body := c.get(fmt.Sprintf("/api/events/search?query=red+car+parked&search_type=description&after=%d", after), nil)
	var got []map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err, string(body))
	}
	if len(got) != 0 {
		t.Fatalf("the window's only event is not among the 100 nearest, yet came back: %v", got)
	}
	_, body = c.get("/api/events/search?query=red+car&search_type=description&limit=200", nil)
	_ = json.Unmarshal(body, &got)
	if len(got) != searchK {
		t.Errorf("an unfiltered search returned %d, want the %d nearest", len(got), searchK)
	}
}
