// Package fakeradarr is a fake Radarr (API v3) for tests and the demo
// profile. It answers the routes the radarr_ tools use with the shapes and
// status codes of Radarr's OpenAPI document, checks the API key as Radarr
// does (X-Api-Key header or apikey query parameter, else 401), keeps
// interactive-search results in a release cache like Radarr (a grab of a
// release that is not cached is 404), and carries the awkward cases: a
// rejected release, one with downloadAllowed=false, one whose grab the
// indexer refuses (409), a release whose GUID is a link with a passkey,
// download links with a Prowlarr API key, and slow release searches.
package fakeradarr

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

// Port is the port Radarr listens on by default.
const Port = 7878

// Credentials planted in the seeded data (download links, a GUID, history
// data). No tool result may contain them.
const (
	ProwlarrKey    = "prowlarr-SECRET-key-in-radarr-9d2f"
	TrackerPasskey = "9f8e7d6c5b4a39281706SECRETpk"
)

// PlantedSecrets lists the credentials in the seeded data.
func PlantedSecrets() []string { return []string{ProwlarrKey, TrackerPasskey} }

// GUIDs of the seeded releases of movie 2 (Dune: Part Two).
const (
	GUIDApproved    = "https://nzbgeek.info/geekseek.php?guid=dune2-2160p"
	GUIDRejected    = "tl-dune2-720p-cam"
	GUIDNotAllowed  = "1337x-dune2-unmapped"
	GUIDHeldBack    = "drunkenslug-dune2-1080p"
	GUIDRefused     = "https://1337x.to/torrent/4242/Dune-Part-Two-1080p/"
	GUIDWithPasskey = "https://www.torrentleech.org/rss/download/7777/" + TrackerPasskey + "/Dune.Part.Two.torrent"
)

// Request is one request the fake received.
type Request = arrfake.Request

// Server is a fake Radarr. It is safe for concurrent use. Its embedded
// SearchHooks slow or hold GET /release.
type Server struct {
	arrfake.SearchHooks
	key string
	mux *http.ServeMux
	now time.Time

	rec      arrfake.Recorder
	mu       sync.Mutex
	movies   []map[string]any
	commands map[int]map[string]any
	nextCmd  int
	cache    map[string]bool // indexerId/guid of releases a search returned
	evicted  map[string]bool // never cached, to simulate an expired cache
	unmapped map[string]bool // indexerId/guid of cached releases Radarr could not match to a movie
	grabs    []map[string]any
	refused  map[string]bool
}

// New returns a fake Radarr seeded with plausible data that accepts apiKey.
func New(apiKey string) *Server {
	s := &Server{
		key: apiKey, mux: http.NewServeMux(), now: time.Date(2025, 11, 3, 12, 0, 0, 0, time.UTC),
		commands: map[int]map[string]any{}, nextCmd: 1001, cache: map[string]bool{}, evicted: map[string]bool{}, unmapped: map[string]bool{},
		refused: map[string]bool{GUIDRefused: true},
	}
	s.movies = seedMovies(s.now)
	s.mux.HandleFunc("GET /api/v3/system/status", s.status)
	s.mux.HandleFunc("GET /api/v3/movie", s.movieList)
	s.mux.HandleFunc("GET /api/v3/movie/lookup", s.lookup)
	s.mux.HandleFunc("GET /api/v3/movie/{id}", s.movie)
	s.mux.HandleFunc("GET /api/v3/wanted/missing", s.missing)
	s.mux.HandleFunc("GET /api/v3/calendar", s.calendar)
	s.mux.HandleFunc("GET /api/v3/queue", s.queue)
	s.mux.HandleFunc("GET /api/v3/history", s.history)
	s.mux.HandleFunc("GET /api/v3/health", s.health)
	s.mux.HandleFunc("GET /api/v3/diskspace", s.diskSpace)
	s.mux.HandleFunc("GET /api/v3/command/{id}", s.command)
	s.mux.HandleFunc("POST /api/v3/command", s.postCommand)
	s.mux.HandleFunc("GET /api/v3/release", s.releases)
	s.mux.HandleFunc("POST /api/v3/release", s.grab)
	return s
}

// NewDemo is the fake for the demo profile: seeded data, the given API
// key, and release searches that take three seconds like real indexers.
func NewDemo(apiKey string) http.Handler {
	s := New(apiKey)
	s.SetSearchDelay(3 * time.Second)
	return s
}

// Evict keeps the release guid out of the cache from now on, as if
// Radarr's cache had expired it: a grab then answers 404.
func (s *Server) Evict(guid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evicted[guid] = true
	for k := range s.cache {
		if strings.HasSuffix(k, "/"+guid) {
			delete(s.cache, k)
		}
	}
}

// SetMovieFile gives movie id a file (or takes it away), as an import
// would, so tests can change the upstream between preview and confirm.
func (s *Server) SetMovieFile(id int, has bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.movies {
		if m["id"] == id {
			m["hasFile"] = has
			if has {
				m["movieFile"] = movieFile(id, 1000+id, "Bluray-1080p", 7, 10_737_418_240, s.now)
				m["movieFileId"] = 1000 + id
			} else {
				delete(m, "movieFile")
				m["movieFileId"] = 0
			}
		}
	}
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request { return s.rec.Requests() }

// Commands returns the bodies of the commands posted so far.
func (s *Server) Commands() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for id := 1001; id < s.nextCmd; id++ {
		out = append(out, s.commands[id]["body"].(map[string]any))
	}
	return out
}

// Grabs returns the bodies of the successful grabs so far.
func (s *Server) Grabs() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grabs)
}

// ServeHTTP records the request, checks the API key and routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := arrfake.ReadBody(r)
	s.rec.Record(r, body)
	if !arrfake.Authorized(r, s.key) {
		arrfake.Unauthorized(w)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// clientException is the exception Radarr's release routes throw for their
// refusals; the error pipeline answers its status and message.
const clientException = "NzbDrone.Core.Exceptions.NzbDroneClientException"

func intParam(w http.ResponseWriter, q url.Values, name string, def int) (int, bool) {
	n, err := arrfake.IntParam(q, name, def)
	if err != nil {
		arrfake.InvalidValue(w, name, q.Get(name))
		return 0, false
	}
	return n, true
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, map[string]any{
		"appName": "Radarr", "instanceName": "Radarr", "version": "5.26.2.10099", "buildTime": "2025-09-01T00:00:00Z",
		"isDebug": false, "isProduction": true, "isAdmin": false, "isUserInteractive": false,
		"startupPath": "/app/radarr/bin", "appData": "/config", "osName": "ubuntu", "osVersion": "24.04",
		"isNetCore": true, "isLinux": true, "isOsx": false, "isWindows": false, "isDocker": true,
		"mode": "console", "branch": "master", "databaseType": "sqLite", "databaseVersion": "3.45.1",
		"authentication": "forms", "migrationVersion": 241, "urlBase": "", "runtimeVersion": "8.0.11",
		"runtimeName": ".NET", "startTime": s.now.Add(-72 * time.Hour).Format(time.RFC3339),
	})
}

func (s *Server) snapshot() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]map[string]any, len(s.movies))
	for i, m := range s.movies {
		c := make(map[string]any, len(m))
		for k, v := range m {
			c[k] = v
		}
		out[i] = c
	}
	return out
}

func (s *Server) find(id int) map[string]any {
	for _, m := range s.snapshot() {
		if m["id"] == id {
			return m
		}
	}
	return nil
}

func (s *Server) movieList(w http.ResponseWriter, r *http.Request) {
	tmdb, ok := intParam(w, r.URL.Query(), "tmdbId", 0)
	if !ok {
		return
	}
	out := []map[string]any{}
	for _, m := range s.snapshot() {
		if tmdb == 0 || m["tmdbId"] == tmdb {
			out = append(out, m)
		}
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) movie(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		w.WriteHeader(http.StatusNotFound) // no {id:int} route matches
		return
	}
	m := s.find(id)
	if m == nil {
		arrfake.NotFound(w)
		return
	}
	arrfake.WriteJSON(w, http.StatusOK, m)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	term := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("term")))
	if term == "" {
		arrfake.WriteJSON(w, http.StatusOK, []any{})
		return
	}
	out := []map[string]any{}
	for _, m := range append(s.snapshot(), tmdbOnly()...) {
		if strings.Contains(strings.ToLower(m["title"].(string)), term) {
			out = append(out, m)
		}
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

// paged answers a page of records as Radarr's PagingResourceMapper does:
// the asked sort key when the controller allows it, else its default; the
// asked direction, descending when none is asked. sortBy orders records
// by a key (nil: they are in order already). queue pages like the queue
// controller (arrfake.QueuePageOf).
func paged(w http.ResponseWriter, q url.Values, records []map[string]any, allowed []string, def string, sortBy func(key string, a, b map[string]any) int, queue bool) {
	page, ok := intParam(w, q, "page", 1)
	if !ok {
		return
	}
	size, ok := intParam(w, q, "pageSize", 10)
	if !ok {
		return
	}
	page, size = max(page, 1), max(size, 1)
	key := def
	if k := q.Get("sortKey"); slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, k) }) {
		key = k
	}
	dir := q.Get("sortDirection")
	if dir == "" {
		dir = "descending"
	}
	if sortBy != nil {
		records = slices.Clone(records)
		slices.SortStableFunc(records, func(a, b map[string]any) int { return sortBy(key, a, b) })
		if !strings.EqualFold(dir, "ascending") {
			slices.Reverse(records)
		}
	}
	if queue {
		arrfake.WriteJSON(w, http.StatusOK, arrfake.QueuePageOf(records, page, size, key, dir))
		return
	}
	arrfake.WriteJSON(w, http.StatusOK, arrfake.PageOf(records, page, size, key, dir))
}

// byTitle orders movies by title for every sort key of wanted/missing the
// fake knows.
func byTitle(_ string, a, b map[string]any) int {
	return strings.Compare(strings.ToLower(a["title"].(string)), strings.ToLower(b["title"].(string)))
}

func (s *Server) missing(w http.ResponseWriter, r *http.Request) {
	monitored := r.URL.Query().Get("monitored") != "false"
	var recs []map[string]any
	for _, m := range s.snapshot() {
		if m["hasFile"] == false && m["monitored"] == monitored {
			recs = append(recs, m)
		}
	}
	if recs == nil {
		recs = []map[string]any{}
	}
	paged(w, r.URL.Query(), recs, []string{"movieMetadata.digitalRelease", "movieMetadata.inCinemas", "movieMetadata.physicalRelease",
		"movieMetadata.sortTitle", "movieMetadata.year", "movies.lastSearchTime"}, "movieMetadata.sortTitle", byTitle, false)
}

func (s *Server) calendar(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	start, err1 := time.Parse(time.RFC3339, q.Get("start"))
	end, err2 := time.Parse(time.RFC3339, q.Get("end"))
	if err1 != nil {
		arrfake.InvalidValue(w, "start", q.Get("start"))
		return
	}
	if err2 != nil {
		arrfake.InvalidValue(w, "end", q.Get("end"))
		return
	}
	unmonitored := q.Get("unmonitored") == "true"
	out := []map[string]any{}
	for _, m := range s.snapshot() {
		if !unmonitored && m["monitored"] == false {
			continue
		}
		for _, k := range []string{"inCinemas", "digitalRelease", "physicalRelease"} {
			v, _ := m[k].(string)
			if t, err := time.Parse(time.RFC3339, v); err == nil && !t.Before(start) && !t.After(end) {
				out = append(out, m)
				break
			}
		}
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, []any{
		map[string]any{"id": 0, "source": "DownloadClientCheck", "type": "warning",
			"message": "Unable to communicate with qBittorrent. Connection refused", "wikiUrl": "https://wiki.servarr.com/radarr/system#download-clients-are-unavailable-due-to-failures"},
	})
}

func (s *Server) diskSpace(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, []any{
		map[string]any{"id": 0, "path": "/", "label": "overlay", "freeSpace": int64(40) << 30, "totalSpace": int64(100) << 30},
		map[string]any{"id": 0, "path": "/movies", "label": "user", "freeSpace": int64(2) << 40, "totalSpace": int64(16) << 40},
	})
}

func (s *Server) command(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		w.WriteHeader(http.StatusNotFound) // no {id:int} route matches
		return
	}
	s.mu.Lock()
	c, ok := s.commands[id]
	s.mu.Unlock()
	if !ok {
		arrfake.NotFound(w)
		return
	}
	arrfake.WriteJSON(w, http.StatusOK, c)
}

func (s *Server) postCommand(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	name, _ := body["name"].(string)
	if name == "" {
		arrfake.ValidationFailed(w, arrfake.Failure{Property: "Name", Message: "'Name' must not be empty.", Attempted: ""})
		return
	}
	display, known := map[string]string{"MoviesSearch": "Movies Search", "RefreshMovie": "Refresh Movie", "RescanMovie": "Rescan Movie", "MissingMoviesSearch": "Missing Movies Search"}[name]
	if !known {
		// The command type is looked up with Single(): an unknown name
		// throws, and the pipeline answers 500.
		arrfake.ClientError(w, http.StatusInternalServerError, "System.InvalidOperationException", "Sequence contains no matching element")
		return
	}
	s.mu.Lock()
	id := s.nextCmd
	s.nextCmd++
	c := map[string]any{
		"id": id, "name": name, "commandName": display, "body": body, "priority": "normal",
		"status": "queued", "result": "unknown", "queued": s.now.Format(time.RFC3339), "trigger": "manual",
		"sendUpdatesToClient": true, "updateScheduledTask": true,
	}
	s.commands[id] = c
	s.mu.Unlock()
	// Created(id): 201 with the command's location.
	w.Header().Set("Location", "/api/v3/command/"+strconv.Itoa(id))
	arrfake.WriteJSON(w, http.StatusCreated, c)
}
