// Package fakefrigate is a fake Frigate NVR for tests and the demo profile.
// It answers the part of Frigate's API the frigate tool service uses, as
// blakeblackshear/frigate's source does at the release it plays (Release,
// default 0.17): POST /api/login setting the frigate_token cookie, plain-text
// health and version, stats, config, profile, events with their filters and
// sort orders, semantic search (the 100 nearest over all events, then the
// filters), event snapshots and latest frames as generated JPEGs.
//
// Like Frigate behind its nginx on the authenticated port 8971, every /api
// path except /api/login and /api/logout needs the session cookie or a
// bearer token, health and version included (nginx's auth_request covers
// all of /api/); Options.Unauthenticated plays the internal port 5000.
package fakefrigate

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/image/draw"
)

// CookieName is Frigate's default auth.cookie_name.
const CookieName = "frigate_token"

// maxRecorded bounds what the fake remembers of the requests it served:
// tests look at the last few, and a demo stack left running must not grow.
const maxRecorded = 10_000

// searchK is how many nearest neighbours Frigate's vector search returns
// per search type (frigate/embeddings/__init__.py: "AND k = 100"), before
// any filter of the request is applied.
const searchK = 100

// Camera is one configured camera.
type Camera struct {
	Name          string
	Enabled       bool
	DetectEnabled bool
	Zones         []string
	Track         []string
	// RTSP is the camera's input URL; it usually holds credentials, which
	// is why the service must never pass configuration through.
	RTSP string
	FPS  float64
	// Offline: no frame arrived within ffmpeg.retry_interval. Its latest
	// frame is Frigate's "camera error" picture, or from 0.18 its last
	// preview frame marked X-Frigate-Offline.
	Offline bool
}

// Event is one tracked object.
type Event struct {
	ID       string
	Camera   string
	Label    string
	SubLabel string
	Zones    []string
	Start    float64
	// End is zero while the event is in progress.
	End         float64
	HasClip     bool
	HasSnapshot bool
	// Score is data.score, the score of the frame the snapshot shows:
	// Frigate's min_score, max_score and score sorting use it.
	Score float64
	// TopScore is data.top_score, the best score while tracking; zero
	// means the same as Score.
	TopScore float64
	// Description is generated text; semantic description search matches it.
	Description string
	// Reviews is how many review segments list the event; the semantic
	// search answers one row per segment (a left join), one row for none.
	Reviews int
}

// Options seed a Fake.
type Options struct {
	// Release is the Frigate release to play; "" is Release017.
	Release Release
	// Users maps user names to passwords for POST /api/login.
	Users map[string]string
	// Tokens are bearer tokens accepted as if issued by /api/login.
	Tokens []string
	// Version overrides the release's version text.
	Version string
	Cameras []Camera
	Events  []Event
	// SemanticSearch is Frigate's semantic_search.enabled.
	SemanticSearch bool
	// Unauthenticated serves like Frigate's internal port 5000: nothing
	// needs a session and the caller is admin.
	Unauthenticated bool
	// AuthDisabled is auth.enabled: false on the authenticated port:
	// every request passes as the viewer "viewer".
	AuthDisabled bool
	// RoleCameras, when not nil, are the cameras the role of every session
	// may see (auth.roles). From 0.17 Frigate enforces it per request.
	RoleCameras []string
}

// Fake is a fake Frigate. It is safe for concurrent use.
type Fake struct {
	mu       sync.Mutex
	opts     Options
	sessions map[string]bool
	logins   int
	frames   map[string][]byte // camera -> full-size JPEG
	requests []string
}

// New returns a fake seeded with opts.
func New(opts Options) *Fake {
	if opts.Release == "" {
		opts.Release = Release017
	}
	if opts.Version == "" {
		opts.Version = opts.Release.Version()
	}
	f := &Fake{opts: opts, sessions: map[string]bool{}, frames: map[string][]byte{}}
	for _, t := range opts.Tokens {
		f.sessions[t] = true
	}
	return f
}

// Revoke ends every session issued by /api/login (as a JWT secret rotation
// or a Frigate restart with a new secret would); bearer tokens from
// Options.Tokens are revoked too.
func (f *Fake) Revoke() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sessions = map[string]bool{}
}

// SetSemanticSearch turns semantic search on or off.
func (f *Fake) SetSemanticSearch(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.SemanticSearch = on
}

// Logins is the number of POST /api/login requests received.
func (f *Fake) Logins() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logins
}

// Requests lists "METHOD path?query" for every request received.
func (f *Fake) Requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// caller is who a request comes as, after the auth check.
type caller struct {
	admin bool
	// cameras the caller's role may see; nil means all.
	cameras []string
}

func (c caller) sees(camera string) bool {
	return c.cameras == nil || slices.Contains(c.cameras, camera)
}

type handler func(w http.ResponseWriter, r *http.Request, c caller)

// Handler serves the API under /api.
func (f *Fake) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/login", f.login)
	mux.Handle("GET /api/{$}", f.auth(func(w http.ResponseWriter, _ *http.Request, _ caller) {
		text(w, http.StatusOK, "Frigate is running. Alive and healthy!")
	}))
	mux.Handle("GET /api/version", f.auth(func(w http.ResponseWriter, _ *http.Request, _ caller) {
		f.mu.Lock()
		v := f.opts.Version
		f.mu.Unlock()
		text(w, http.StatusOK, v)
	}))
	mux.Handle("GET /api/profile", f.auth(f.profile))
	mux.Handle("GET /api/stats", f.auth(f.stats))
	mux.Handle("GET /api/config", f.auth(f.config))
	mux.Handle("GET /api/events", f.auth(f.events))
	mux.Handle("GET /api/events/search", f.auth(f.search))
	mux.Handle("GET /api/events/{id}", f.auth(f.event))
	mux.Handle("GET /api/events/{id}/snapshot.jpg", f.auth(f.snapshot))
	mux.Handle("GET /api/{camera}/{file}", f.auth(f.latest))
	// Everything else under /api still passes nginx's auth first.
	mux.Handle("/api/", f.auth(func(w http.ResponseWriter, _ *http.Request, _ caller) { f.notFound(w, "Not Found") }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
		if len(f.requests) > maxRecorded {
			f.requests = f.requests[len(f.requests)-maxRecorded:]
		}
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

func text(w http.ResponseWriter, status int, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(s))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func message(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"success": false, "message": msg})
}

// notFound answers a missing event as the release does: Flask's plain
// text (0.14), FastAPI's JSON string (0.15 and later).
func (f *Fake) notFound(w http.ResponseWriter, msg string) {
	if f.opts.Release.flask() {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(msg))
		return
	}
	writeJSON(w, http.StatusNotFound, msg)
}

// nginx401 is what Frigate's nginx answers when its auth_request fails.
const nginx401 = "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"

func (f *Fake) login(w http.ResponseWriter, r *http.Request) {
	var body struct {
		User     *string `json:"user"`
		Password *string `json:"password"`
	}
	f.mu.Lock()
	f.logins++
	rel, authOff := f.opts.Release, f.opts.AuthDisabled
	f.mu.Unlock()
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil || body.User == nil || body.Password == nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{{"type": "missing", "loc": []string{"body"}, "msg": "Field required"}}})
		return
	}
	if authOff && rel.loginRefusedWhenAuthOff() {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Authentication is disabled"})
		return
	}
	f.mu.Lock()
	want, ok := f.opts.Users[*body.User]
	f.mu.Unlock()
	if !ok || want != *body.Password {
		status := http.StatusUnauthorized
		if rel.flask() {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, map[string]string{"message": "Login failed"})
		return
	}
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	tok := "eyJhbGciOiJIUzI1NiJ9." + hex.EncodeToString(b)
	f.mu.Lock()
	f.sessions[tok] = true
	f.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: "/", HttpOnly: true, Expires: time.Now().Add(24 * time.Hour)})
	w.WriteHeader(http.StatusOK)
}

// auth admits a request as nginx's auth_request and Frigate's /auth do:
// anything on the internal port, anything when auth is disabled, else a
// live session cookie or bearer token.
func (f *Fake) auth(next handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		c := caller{admin: f.opts.Unauthenticated}
		ok := f.opts.Unauthenticated || f.opts.AuthDisabled
		if ck, err := r.Cookie(CookieName); err == nil && f.sessions[ck.Value] {
			ok = true
		}
		if tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found && f.sessions[tok] {
			ok = true
		}
		if !c.admin && f.opts.Release.cameraRoles() && f.opts.RoleCameras != nil {
			c.cameras = append([]string(nil), f.opts.RoleCameras...)
		}
		f.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Location", "/login")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(nginx401))
			return
		}
		next(w, r, c)
	})
}

func (f *Fake) profile(w http.ResponseWriter, _ *http.Request, c caller) {
	user, role := "viewer", "viewer"
	if c.admin {
		user, role = "anonymous", "admin"
	}
	out := map[string]any{"username": user}
	switch f.opts.Release {
	case Release014, Release015:
	case Release016:
		out["role"] = role
	default:
		out["role"] = role
		cams := c.cameras
		if cams == nil {
			for _, cam := range f.cameras() {
				cams = append(cams, cam.Name)
			}
		}
		out["allowed_cameras"] = cams
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) cameras() []Camera {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Camera(nil), f.opts.Cameras...)
}

func (f *Fake) stats(w http.ResponseWriter, _ *http.Request, c caller) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cams := map[string]any{}
	total := 0.0
	for i, cam := range f.opts.Cameras {
		det := 0.0
		if cam.DetectEnabled {
			det = 1.5
		}
		total += det
		fps := cam.FPS
		if cam.Offline {
			fps = 0
		}
		// 0.18 leaves out the cameras a non-admin role may not see.
		if f.opts.Release == Release018 && !c.sees(cam.Name) {
			continue
		}
		cams[cam.Name] = map[string]any{
			"camera_fps": fps, "process_fps": fps, "skipped_fps": 0.0, "detection_fps": det,
			"detection_enabled": cam.DetectEnabled, "pid": 400 + i, "capture_pid": 500 + i, "ffmpeg_pid": 600 + i,
			"audio_rms": 0.0, "audio_dBFS": 0.0,
		}
	}
	now := float64(time.Now().Unix())
	writeJSON(w, http.StatusOK, map[string]any{
		"cameras":       cams,
		"detectors":     map[string]any{"coral": map[string]any{"inference_speed": 8.42, "detection_start": 0.0, "pid": 301}},
		"detection_fps": total,
		"cpu_usages":    map[string]any{"1": map[string]any{"cmdline": "/usr/lib/ffmpeg/7.0/bin/ffmpeg -i rtsp://admin:camera-password@10.0.0.21/stream", "cpu": "3.1", "mem": "0.7"}},
		"processes":     map[string]any{"go2rtc": map[string]any{"pid": 77}},
		"service": map[string]any{
			"uptime": 86400, "version": f.opts.Version, "latest_version": f.opts.Version, "last_updated": now,
			"storage":      map[string]any{"/media/frigate/recordings": map[string]any{"total": 1000000.0, "used": 250000.0, "free": 750000.0, "mount_type": "ext4"}},
			"temperatures": map[string]any{},
		},
	})
}

func (f *Fake) config(w http.ResponseWriter, _ *http.Request, _ caller) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cams := map[string]any{}
	labels := map[string]bool{}
	for _, c := range f.opts.Cameras {
		zones := map[string]any{}
		for _, z := range c.Zones {
			zones[z] = map[string]any{"coordinates": "0.1,0.1,0.9,0.1,0.9,0.9,0.1,0.9", "objects": []string{}}
		}
		for _, l := range c.Track {
			labels[l] = true
		}
		cams[c.Name] = map[string]any{
			"name": c.Name, "enabled": c.Enabled,
			"ffmpeg":    map[string]any{"inputs": []map[string]any{{"path": c.RTSP, "roles": []string{"detect", "record"}}}},
			"detect":    map[string]any{"enabled": c.DetectEnabled, "width": 1280, "height": 720, "fps": 5},
			"zones":     zones,
			"objects":   map[string]any{"track": c.Track},
			"snapshots": map[string]any{"enabled": true},
		}
	}
	track := make([]string, 0, len(labels))
	for l := range labels {
		track = append(track, l)
	}
	sort.Strings(track)
	out := map[string]any{
		"cameras": cams,
		"objects": map[string]any{"track": track},
		"mqtt":    map[string]any{"enabled": true, "host": "mqtt.lan", "user": "frigate", "password": "mqtt-password-in-config"},
		"auth":    map[string]any{"enabled": !f.opts.AuthDisabled, "cookie_name": CookieName},
	}
	if f.opts.Release.semanticSearch() {
		out["semantic_search"] = map[string]any{"enabled": f.opts.SemanticSearch, "reindex": false, "model_size": "small"}
	}
	writeJSON(w, http.StatusOK, out)
}

// eventRow is an event as its database row (frigate/models.py, Event):
// every column, the deprecated top_score, score, region, box, area and
// ratio columns as new events leave them (null, 1.0 for ratio), the
// detection details in data.
func eventRow(e Event) map[string]any {
	var end any
	if e.End != 0 {
		end = e.End
	}
	var sub any
	if e.SubLabel != "" {
		sub = e.SubLabel
	}
	zones := e.Zones
	if zones == nil {
		zones = []string{}
	}
	top := e.TopScore
	if top == 0 {
		top = e.Score
	}
	return map[string]any{
		"id": e.ID, "label": e.Label, "sub_label": sub, "camera": e.Camera, "start_time": e.Start, "end_time": end,
		"top_score": nil, "score": nil, "false_positive": nil, "zones": zones,
		"thumbnail": base64.StdEncoding.EncodeToString([]byte("thumbnail-bytes-of-" + e.ID)),
		"has_clip":  e.HasClip, "has_snapshot": e.HasSnapshot, "region": nil, "box": nil, "area": nil,
		"retain_indefinitely": false, "ratio": 1.0, "plus_id": nil, "model_hash": "a1b2c3", "detector_type": "edgetpu", "model_type": "ssd",
		"data": map[string]any{"type": "object", "score": e.Score, "top_score": top, "description": e.Description,
			"box": []float64{0.4, 0.3, 0.1, 0.3}, "region": []float64{0.3, 0.2, 0.3, 0.5}, "attributes": []any{}},
	}
}

// pick copies the named keys of row.
func pick(row map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = row[k]
	}
	return out
}

// The columns each event read answers with (frigate/api/event.py, the
// same from v0.14.1 to v0.18.0-beta1):
var (
	// listColumns: events() selects these and answers them as they are
	// (a JSONResponse, so its response_model=list[EventResponse] filters
	// nothing); thumbnail only with include_thumbnails.
	listColumns = []string{"id", "camera", "label", "zones", "start_time", "end_time", "has_clip", "has_snapshot",
		"plus_id", "retain_indefinitely", "sub_label", "top_score", "false_positive", "box", "data"}
	// oneColumns: event() returns model_to_dict(event), which FastAPI cuts
	// to EventResponse (0.15 and later; 0.14's Flask route answers every
	// column).
	oneColumns = []string{"id", "label", "sub_label", "camera", "start_time", "end_time", "false_positive", "zones",
		"thumbnail", "has_clip", "has_snapshot", "retain_indefinitely", "plus_id", "model_hash", "detector_type", "model_type", "data"}
	// searchColumns: events_search() selects these (thumb_path from a
	// left join on the review segment holding the event) and keeps only
	// searchDataKeys of data; thumbnail only with include_thumbnails.
	searchColumns  = []string{"id", "camera", "label", "sub_label", "zones", "start_time", "end_time", "has_clip", "has_snapshot", "top_score", "data", "plus_id", "thumb_path"}
	searchDataKeys = []string{"attributes", "type", "score", "top_score", "description", "sub_label_score", "average_estimated_speed",
		"velocity_angle", "path_data", "recognized_license_plate", "recognized_license_plate_score"}
)

// listJSON renders an event of GET /events.
func listJSON(e Event, thumbnails bool) map[string]any {
	row := eventRow(e)
	out := pick(row, listColumns...)
	if thumbnails {
		out["thumbnail"] = row["thumbnail"]
	}
	return out
}

// oneJSON renders GET /events/{id}.
func (f *Fake) oneJSON(e Event) map[string]any {
	row := eventRow(e)
	if f.opts.Release.flask() {
		return row
	}
	return pick(row, oneColumns...)
}

// searchJSON renders an event of GET /events/search.
func searchJSON(e Event, thumbnails bool) map[string]any {
	row := eventRow(e)
	row["thumb_path"] = "/media/frigate/clips/review/thumb-" + e.Camera + "-" + e.ID + ".webp"
	out := pick(row, searchColumns...)
	data := map[string]any{}
	for k, v := range row["data"].(map[string]any) {
		if slices.Contains(searchDataKeys, k) {
			data[k] = v
		}
	}
	out["data"] = data
	if thumbnails {
		out["thumbnail"] = row["thumbnail"]
	}
	return out
}

func list(v string) []string {
	if v == "" || v == "all" {
		return nil
	}
	return strings.Split(v, ",")
}

func floatArg(r *http.Request, name string) (float64, bool, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, false, true
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, true, err == nil
}

// filter applies the shared /events and /events/search filters as
// frigate/api/event.py builds its WHERE clauses: after and before are
// strict and ignored when 0, cameras are intersected with the role's,
// min_score and max_score compare data.score.
func (f *Fake) filter(r *http.Request, events []Event, c caller) ([]Event, bool) {
	q := r.URL.Query()
	cams, labels, zones, subs := list(q.Get("cameras")), list(q.Get("labels")), list(q.Get("zones")), list(q.Get("sub_labels"))
	after, hasAfter, ok1 := floatArg(r, "after")
	before, hasBefore, ok2 := floatArg(r, "before")
	minScore, hasMin, ok3 := floatArg(r, "min_score")
	maxScore, hasMax, ok4 := floatArg(r, "max_score")
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, false
	}
	flag := func(name string) (bool, bool) {
		v := q.Get(name)
		return v == "1" || v == "true", v != ""
	}
	hasClip, fClip := flag("has_clip")
	hasSnap, fSnap := flag("has_snapshot")
	inProg, fProg := flag("in_progress")
	fold := f.opts.Release.foldedSubLabels()
	var out []Event
	for _, e := range events {
		switch {
		case !c.sees(e.Camera),
			cams != nil && !slices.Contains(cams, e.Camera),
			labels != nil && !slices.Contains(labels, e.Label),
			subs != nil && !subMatch(subs, e.SubLabel, fold),
			zones != nil && !zoneMatch(zones, e.Zones),
			hasAfter && after != 0 && !(e.Start > after),
			hasBefore && before != 0 && !(e.Start < before),
			hasMin && e.Score < minScore,
			hasMax && e.Score > maxScore,
			fClip && e.HasClip != hasClip,
			fSnap && e.HasSnapshot != hasSnap,
			fProg && (e.End == 0) != inProg:
			continue
		}
		out = append(out, e)
	}
	return out, true
}

// subMatch is Frigate's sub-label filter: the sub-label equals a wanted
// one, or contains it as "<want>," or ", <want>" (a joined list); "None"
// matches events without one. Case is ignored from 0.18 on.
func subMatch(want []string, sub string, fold bool) bool {
	for _, w := range want {
		if w == "None" {
			if sub == "" {
				return true
			}
			continue
		}
		s := sub
		if fold {
			s, w = strings.ToLower(s), strings.ToLower(w)
		}
		if s != "" && (s == w || strings.Contains(s, w+",") || strings.Contains(s, ", "+w)) {
			return true
		}
	}
	return false
}

func zoneMatch(want, zones []string) bool {
	for _, w := range want {
		if w == "None" && len(zones) == 0 || slices.Contains(zones, w) {
			return true
		}
	}
	return false
}

func (f *Fake) snapshotEvents() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.opts.Events...)
}

func (f *Fake) events(w http.ResponseWriter, r *http.Request, c caller) {
	q := r.URL.Query()
	limit := 100
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			validation(w, "limit")
			return
		}
		limit = n
	}
	events, ok := f.filter(r, f.snapshotEvents(), c)
	if !ok {
		validation(w, "query")
		return
	}
	var less func(a, b Event) bool
	switch q.Get("sort") {
	case "score_asc":
		less = func(a, b Event) bool { return a.Score < b.Score }
	case "score_desc":
		less = func(a, b Event) bool { return a.Score > b.Score }
	case "date_asc":
		less = func(a, b Event) bool { return a.Start < b.Start }
	default:
		less = func(a, b Event) bool { return a.Start > b.Start }
	}
	sort.SliceStable(events, func(i, j int) bool { return less(events[i], events[j]) })
	if limit >= 0 && len(events) > limit {
		events = events[:limit]
	}
	thumbs := q.Get("include_thumbnails") != "0"
	out := make([]map[string]any, 0, len(events))
	for _, e := range events {
		out = append(out, listJSON(e, thumbs))
	}
	writeJSON(w, http.StatusOK, out)
}

func validation(w http.ResponseWriter, field string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{{"type": "parsing", "loc": []string{"query", field}, "msg": "Input should be a valid number"}}})
}

// distance is the fake's embedding distance of an event to a query: lower
// for more query words in the searched text, and a distance for every
// event, as a vector search has (it never answers "no match").
func distance(e Event, searchType string, words []string) float64 {
	var corpus string
	switch searchType {
	case "thumbnail":
		corpus = strings.ToLower(e.Label + " " + e.SubLabel + " " + e.Camera + " " + strings.Join(e.Zones, " "))
	case "description":
		corpus = strings.ToLower(e.Description)
	}
	n := 0
	for _, wd := range words {
		if strings.Contains(corpus, wd) {
			n++
		}
	}
	if n == 0 {
		// Unrelated events are far, but still neighbours; the id keeps
		// the order stable.
		h := 0
		for i := 0; i < len(e.ID); i++ {
			h = (h*31 + int(e.ID[i])) % 1000
		}
		return 1.5 + float64(h)/10000
	}
	return 1 - float64(n)/float64(len(words))*0.8
}

type hit struct {
	e      Event
	d      float64
	source string
}

// search is GET /events/search as frigate/api/event.py serves it: the 100
// nearest events of each search type over the whole database come first,
// the request's filters (window, cameras, labels, …) apply to those only,
// then the nearest limit are returned.
func (f *Fake) search(w http.ResponseWriter, r *http.Request, c caller) {
	if !f.opts.Release.semanticSearch() {
		// Flask routes /events/search to /events/<id>.
		f.notFound(w, "Event not found")
		return
	}
	q := r.URL.Query()
	query := strings.ToLower(strings.TrimSpace(q.Get("query")))
	if query == "" && q.Get("event_id") == "" {
		message(w, http.StatusBadRequest, "A search query must be supplied")
		return
	}
	f.mu.Lock()
	enabled := f.opts.SemanticSearch
	f.mu.Unlock()
	if !enabled {
		message(w, http.StatusBadRequest, "Semantic search is not enabled")
		return
	}
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			validation(w, "limit")
			return
		}
		limit = n
	}
	searchType := q.Get("search_type")
	if searchType == "" {
		searchType = "thumbnail"
	}
	all := f.snapshotEvents()
	words := strings.Fields(query)
	nearest := map[string]hit{}
	for _, st := range strings.Split(searchType, ",") {
		if st != "thumbnail" && st != "description" {
			continue
		}
		var hs []hit
		for _, e := range all {
			hs = append(hs, hit{e, distance(e, st, words), st})
		}
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].d < hs[j].d })
		for _, h := range hs[:min(searchK, len(hs))] {
			if old, ok := nearest[h.e.ID]; !ok || h.d < old.d {
				nearest[h.e.ID] = h
			}
		}
	}
	var candidates []Event
	for _, e := range all {
		if _, ok := nearest[e.ID]; ok {
			candidates = append(candidates, e)
		}
	}
	events, ok := f.filter(r, candidates, c)
	if !ok {
		validation(w, "query")
		return
	}
	hits := make([]hit, 0, len(events))
	for _, e := range events {
		hits = append(hits, nearest[e.ID])
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].d < hits[j].d })
	if len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]map[string]any, 0, len(hits))
	for _, h := range hits {
		for range max(h.e.Reviews, 1) {
			m := searchJSON(h.e, q.Get("include_thumbnails") != "0")
			m["search_distance"] = h.d
			m["search_source"] = h.source
			out = append(out, m)
		}
	}
	// The limit cuts the joined rows, after sorting.
	if len(out) > limit {
		out = out[:limit]
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) find(id string) (Event, bool) {
	for _, e := range f.snapshotEvents() {
		if e.ID == id {
			return e, true
		}
	}
	return Event{}, false
}

// forbidden is FastAPI's HTTPException(403) from require_camera_access.
func forbidden(w http.ResponseWriter, camera string, c caller) {
	writeJSON(w, http.StatusForbidden, map[string]string{"detail": fmt.Sprintf("Access denied to camera '%s'. Allowed: %v", camera, c.cameras)})
}

func (f *Fake) event(w http.ResponseWriter, r *http.Request, c caller) {
	e, ok := f.find(r.PathValue("id"))
	if !ok {
		f.notFound(w, "Event not found")
		return
	}
	if !c.sees(e.Camera) {
		forbidden(w, e.Camera, c)
		return
	}
	writeJSON(w, http.StatusOK, f.oneJSON(e))
}

// snapshot serves an event's snapshot. Before 0.18 an ended event's is the
// stored file, whatever height, bbox, crop or quality ask; 0.14 reads the
// height as h. From 0.17 a camera the role may not see is 404 too (the
// 403 is caught by the handler's catch-all).
func (f *Fake) snapshot(w http.ResponseWriter, r *http.Request, c caller) {
	e, ok := f.find(r.PathValue("id"))
	switch {
	case !ok:
		message(w, http.StatusNotFound, "Event not found")
		return
	case !c.sees(e.Camera):
		message(w, http.StatusNotFound, "Unknown error occurred")
		return
	case !e.HasSnapshot:
		message(w, http.StatusNotFound, "Snapshot not available")
		return
	}
	height := f.heightArg(r)
	if e.End != 0 && f.opts.Release != Release018 {
		height = 0
	}
	f.serveJPEG(w, e.Camera+"/"+e.ID, cameraColor(e.Camera), height)
}

// heightArg is the requested picture height: h on 0.14, height later.
func (f *Fake) heightArg(r *http.Request) int {
	name := "height"
	if f.opts.Release.flask() {
		name = "h"
	}
	h, _ := strconv.Atoi(r.URL.Query().Get(name))
	return h
}

func (f *Fake) latest(w http.ResponseWriter, r *http.Request, c caller) {
	name, file := r.PathValue("camera"), r.PathValue("file")
	ext, isLatest := strings.CutPrefix(file, "latest.")
	var cam *Camera
	for _, x := range f.cameras() {
		if x.Name == name {
			cam = &x
		}
	}
	if f.opts.Release.cameraRoles() && !c.admin && (cam == nil || !c.sees(name)) {
		// A non-admin path that names no camera needs admin (0.17's
		// require_admin_by_default); a camera of another role is 403.
		if cam == nil {
			writeJSON(w, http.StatusForbidden, map[string]string{"detail": "Access denied. A user with the admin role is required."})
		} else {
			forbidden(w, name, c)
		}
		return
	}
	if !isLatest {
		f.notFound(w, "Not Found")
		return
	}
	if cam == nil {
		message(w, http.StatusNotFound, "Camera not found")
		return
	}
	if ext != "jpg" && ext != "jpeg" && ext != "webp" && ext != "png" {
		validation(w, "extension")
		return
	}
	switch {
	case cam.Offline && f.opts.Release.previewFallback():
		w.Header().Set("X-Frigate-Offline", "true")
		f.serveJPEG(w, name+"/preview", color.RGBA{R: 90, G: 90, B: 90, A: 255}, f.heightArg(r))
	case cam.Offline:
		f.serveJPEG(w, "camera-error", color.RGBA{R: 200, G: 30, B: 30, A: 255}, f.heightArg(r))
	default:
		f.serveJPEG(w, name, cameraColor(name), f.heightArg(r))
	}
}

func (f *Fake) serveJPEG(w http.ResponseWriter, key string, c color.RGBA, height int) {
	f.mu.Lock()
	full, ok := f.frames[key]
	if !ok {
		full = Frame(1280, 720, c)
		f.frames[key] = full
	}
	f.mu.Unlock()
	data := full
	if height > 0 && height < 720 {
		src, _ := jpeg.Decode(bytes.NewReader(full))
		dst := image.NewRGBA(image.Rect(0, 0, 1280*height/720, height))
		draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
		var buf bytes.Buffer
		_ = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 80})
		data = buf.Bytes()
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

func cameraColor(name string) color.RGBA {
	var h byte
	for i := 0; i < len(name); i++ {
		h = h*31 + name[i]
	}
	return color.RGBA{R: 60 + h%120, G: 90 + (h/3)%100, B: 120 + (h/7)%100, A: 255}
}

// Frame draws a w×h JPEG that looks like a camera frame: a sky-to-ground
// gradient, a house-like block and noise, so it compresses like a photo
// rather than a flat colour.
func Frame(w, h int, tint color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	seed := uint32(tint.R)<<16 | uint32(tint.G)<<8 | uint32(tint.B)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			seed = seed*1664525 + 1013904223
			n := byte(seed >> 27)
			c := color.RGBA{R: tint.R/2 + byte(y*100/h) + n, G: tint.G/2 + byte(y*80/h) + n, B: tint.B/2 + n, A: 255}
			if y > h*2/3 {
				c = color.RGBA{R: 40 + n, G: 90 + byte(x*60/w) + n, B: 40 + n, A: 255}
			}
			if x > w/3 && x < w*2/3 && y > h/3 && y < h*5/6 {
				c = color.RGBA{R: 150 + n, G: 110 + n, B: 80 + n, A: 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
	return buf.Bytes()
}
