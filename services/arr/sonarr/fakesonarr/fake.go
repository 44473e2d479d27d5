// Package fakesonarr is a fake Sonarr (API v3 as served by Sonarr v4) for
// tests and the demo profile. It answers the routes the sonarr_ tools use
// with the shapes and status codes of Sonarr's OpenAPI document, checks
// the API key as Sonarr does (X-Api-Key header or apikey query parameter,
// else 401 with an empty body), keeps Sonarr's release cache semantics (a
// grab takes a release found by an earlier GET /release, else 404), and
// has the awkward cases built in: a rejected release, one with
// downloadAllowed=false and a passkey in its GUID, one that is never
// cached (grab 404), one the download client refuses (grab 409), and
// searches that can be held or slowed.
package fakesonarr

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

// modelNotFound is the exception a lookup of an unknown id throws outside
// GetResourceById; the pipeline answers it with 404 and its message.
const modelNotFound = "NzbDrone.Core.Datastore.ModelNotFoundException"

// Port is the port Sonarr listens on by default.
const Port = 8989

// Credentials planted in the seeded data (download links, history data,
// a tracker GUID). No tool result may contain them.
const (
	ProwlarrKey    = "prowlarr-SECRET-key-in-sonarr-links-55aa"
	TrackerPasskey = "tracker-SECRET-passkey-0099ffee"
)

// Release GUIDs of the seeded season 1 releases of series 1.
const (
	GUIDSeasonPack  = "nzbgeek-7f3a-expanse-s01-fun"
	GUIDEpisode5    = "nzbgeek-81c2-expanse-s01e05"
	GUIDRejected    = "nzbgeek-9911-expanse-s01-lq"
	GUIDUncached    = "nzbgeek-a001-expanse-s01e05-cachemiss"
	GUIDRefused     = "nzbgeek-b002-expanse-s01e06-refused"
	GUIDNotAllowed  = "https://tracker.example/download/4242?passkey=" + TrackerPasskey
	IndexerNZBgeek  = 1
	IndexerTorrents = 2
)

// Request is one request the fake received.
type Request = arrfake.Request

// Server is a fake Sonarr. It is safe for concurrent use. Its embedded
// SearchHooks slow or hold GET /release.
type Server struct {
	arrfake.SearchHooks
	key string
	mux *http.ServeMux
	now func() time.Time

	rec      arrfake.Recorder
	mu       sync.Mutex
	series   []*series
	episodes []*episode
	files    map[int]*episodeFile
	releases map[[2]int][]*release // (series id, season) → releases
	cache    map[string]*release   // indexerId/guid → release found by a search
	commands []*command
	grabs    []Grab
}

// Grab is a release handed to the download client.
type Grab struct {
	GUID      string
	IndexerID int
	Title     string
}

// New returns a fake Sonarr seeded with plausible data that accepts
// apiKey. now anchors air dates (nil means time.Now); pass a fixed clock
// in tests.
func New(apiKey string, now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	s := &Server{key: apiKey, mux: http.NewServeMux(), now: now, files: map[int]*episodeFile{}, releases: map[[2]int][]*release{}, cache: map[string]*release{}}
	s.seed()
	s.mux.HandleFunc("GET /api/v3/system/status", s.status)
	s.mux.HandleFunc("GET /api/v3/health", s.health)
	s.mux.HandleFunc("GET /api/v3/diskspace", s.diskSpace)
	s.mux.HandleFunc("GET /api/v3/series", s.seriesList)
	s.mux.HandleFunc("GET /api/v3/series/{id}", s.seriesGet)
	s.mux.HandleFunc("GET /api/v3/episode", s.episodeList)
	s.mux.HandleFunc("GET /api/v3/episode/{id}", s.episodeGet)
	s.mux.HandleFunc("GET /api/v3/episodefile", s.episodeFiles)
	s.mux.HandleFunc("GET /api/v3/wanted/missing", s.missing)
	s.mux.HandleFunc("GET /api/v3/calendar", s.calendar)
	s.mux.HandleFunc("GET /api/v3/queue", s.queue)
	s.mux.HandleFunc("GET /api/v3/history", s.history)
	s.mux.HandleFunc("GET /api/v3/command/{id}", s.commandGet)
	s.mux.HandleFunc("POST /api/v3/command", s.commandPost)
	s.mux.HandleFunc("GET /api/v3/release", s.releaseSearch)
	s.mux.HandleFunc("POST /api/v3/release", s.releaseGrab)
	return s
}

// NewDemo is the fake for the demo profile: seeded data, the given API
// key, and release searches that take two seconds like real indexers.
func NewDemo(apiKey string) http.Handler {
	s := New(apiKey, nil)
	s.SetSearchDelay(2 * time.Second)
	return s
}

// ServeHTTP checks the API key like Sonarr, records the request and
// routes it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !arrfake.Authorized(r, s.key) {
		arrfake.Unauthorized(w)
		return
	}
	body, err := arrfake.ReadBody(r)
	if err != nil {
		arrfake.APIError(w, http.StatusBadRequest, "cannot read the request body")
		return
	}
	s.rec.Record(r, body)
	s.mux.ServeHTTP(w, r)
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request { return s.rec.Requests() }

// Writes returns the requests that were not GETs.
func (s *Server) Writes() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method != http.MethodGet {
			out = append(out, r)
		}
	}
	return out
}

// Grabs returns the releases handed to the download client.
func (s *Server) Grabs() []Grab {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grabs)
}

// Commands returns the commands started through POST /command, oldest
// first, each as its name and episodeIds.
func (s *Server) Commands() []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Command, 0, len(s.commands))
	for _, c := range s.commands {
		out = append(out, Command{ID: c.ID, Name: c.Name, EpisodeIDs: slices.Clone(c.Body.EpisodeIDs)})
	}
	return out
}

// Command is a started command as Commands reports it.
type Command struct {
	ID         int
	Name       string
	EpisodeIDs []int
}

// SetHasFile gives an episode a file (or takes it away), as an import
// or a deletion would.
func (s *Server) SetHasFile(episodeID int, has bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.episodes {
		if e.ID != episodeID {
			continue
		}
		if has && !e.HasFile {
			s.addFile(e, "WEBDL-1080p", "NTb")
		}
		if !has && e.HasFile {
			delete(s.files, e.EpisodeFileID)
			e.HasFile, e.EpisodeFileID = false, 0
		}
	}
}

// RemoveRelease makes the indexers stop offering a release.
func (s *Server) RemoveRelease(guid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, rs := range s.releases {
		s.releases[k] = slices.DeleteFunc(rs, func(r *release) bool { return r.GUID == guid })
	}
}

// HoldSearches makes every GET /release wait until the returned function
// is called (or the request is canceled), to test slow indexers without
// sleeping.
func (s *Server) HoldSearches() (release func()) { return s.BlockSearches() }

func intParam(w http.ResponseWriter, q url.Values, name string, def int) (int, bool) {
	n, err := arrfake.IntParam(q, name, def)
	if err != nil {
		arrfake.InvalidValue(w, name, q.Get(name))
		return 0, false
	}
	return n, true
}

func boolParam(q url.Values, name string, def bool) bool {
	v, err := strconv.ParseBool(q.Get(name))
	if err != nil {
		return def
	}
	return v
}

func pathID(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		// The routes are {id:int}: anything else matches no route.
		w.WriteHeader(http.StatusNotFound)
		return 0, false
	}
	return n, true
}

// sorting is the sort key and direction a paged Sonarr list uses
// (PagingResourceMapper): the asked key when the controller allows it,
// else its default; the asked direction, descending when none is asked.
func sorting(q url.Values, allowed []string, def string) (key, dir string) {
	key = def
	if k := q.Get("sortKey"); slices.ContainsFunc(allowed, func(a string) bool { return strings.EqualFold(a, k) }) {
		key = k
	}
	dir = q.Get("sortDirection")
	if dir == "" {
		dir = "descending"
	}
	return key, dir
}

// pageOf answers a page of all; the records are already in the order of
// the default sort key, descending, and are reversed for ascending.
func pageOf[T any](w http.ResponseWriter, q url.Values, all []T, allowed []string, def string) (arrfake.Page, bool) {
	page, ok := intParam(w, q, "page", 1)
	if !ok {
		return arrfake.Page{}, false
	}
	size, ok := intParam(w, q, "pageSize", 10)
	if !ok {
		return arrfake.Page{}, false
	}
	page, size = max(page, 1), max(size, 1)
	key, dir := sorting(q, allowed, def)
	if key == def && strings.EqualFold(dir, "ascending") {
		all = slices.Clone(all)
		slices.Reverse(all)
	}
	return arrfake.PageOf(all, page, size, key, dir), true
}

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, map[string]any{
		"appName": "Sonarr", "instanceName": "Sonarr", "version": "4.0.14.2939", "buildTime": "2025-03-31T12:00:00Z",
		"isDebug": false, "isProduction": true, "isAdmin": false, "isUserInteractive": false,
		"startupPath": "/app/sonarr/bin", "appData": "/config", "osName": "ubuntu", "osVersion": "22.04",
		"isNetCore": true, "isLinux": true, "isOsx": false, "isWindows": false, "isDocker": true,
		"mode": "console", "branch": "main", "authentication": "forms", "sqliteVersion": "3.46.1",
		"migrationVersion": 217, "urlBase": "", "runtimeVersion": "6.0.36", "runtimeName": ".NET",
		"startTime": s.now().UTC().Add(-50 * time.Hour).Format(time.RFC3339), "packageUpdateMechanism": "docker",
		"databaseType": "sqLite", "databaseVersion": "3.46.1",
	})
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, []map[string]any{{
		"id": 1, "source": "DownloadClientRootFolderCheck", "type": "warning",
		"message": "Download client SABnzbd places downloads in the root folder /tv. You should not download to a root folder.",
		"wikiUrl": "https://wiki.servarr.com/sonarr/system#downloads-in-root-folder",
	}})
}

func (s *Server) diskSpace(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, []map[string]any{
		{"id": 1, "path": "/tv", "label": "tv", "freeSpace": int64(1_234_000_000_000), "totalSpace": int64(4_000_000_000_000)},
		{"id": 2, "path": "/downloads", "label": "downloads", "freeSpace": int64(310_000_000_000), "totalSpace": int64(500_000_000_000)},
	})
}

func (s *Server) seriesList(w http.ResponseWriter, r *http.Request) {
	tvdb, ok := intParam(w, r.URL.Query(), "tvdbId", 0)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, x := range s.series {
		if tvdb == 0 || x.TvdbID == tvdb {
			out = append(out, s.seriesResource(x))
		}
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) seriesGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.series {
		if x.ID == id {
			arrfake.WriteJSON(w, http.StatusOK, s.seriesResource(x))
			return
		}
	}
	arrfake.NotFound(w)
}

func (s *Server) episodeList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sid, ok := intParam(w, q, "seriesId", 0)
	if !ok {
		return
	}
	season, ok := intParam(w, q, "seasonNumber", -1)
	if !ok {
		return
	}
	ids := map[int]bool{}
	for _, v := range q["episodeIds"] {
		n, err := strconv.Atoi(v)
		if err != nil {
			arrfake.InvalidValue(w, "episodeIds", v)
			return
		}
		ids[n] = true
	}
	if sid == 0 && len(ids) == 0 {
		arrfake.APIError(w, http.StatusBadRequest, "seriesId or episodeIds must be provided")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []map[string]any{}
	for _, e := range s.episodes {
		if (sid != 0 && e.SeriesID != sid) || (season >= 0 && e.SeasonNumber != season) || (len(ids) > 0 && !ids[e.ID]) {
			continue
		}
		out = append(out, s.episodeResource(e, boolParam(q, "includeSeries", false)))
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) episodeGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.episodes {
		if e.ID == id {
			arrfake.WriteJSON(w, http.StatusOK, s.episodeResource(e, true))
			return
		}
	}
	arrfake.NotFound(w)
}

func (s *Server) episodeFiles(w http.ResponseWriter, r *http.Request) {
	sid, ok := intParam(w, r.URL.Query(), "seriesId", 0)
	if !ok {
		return
	}
	if sid == 0 {
		arrfake.APIError(w, http.StatusBadRequest, "seriesId or episodeFileIds must be provided")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seriesByID(sid) == nil {
		arrfake.ClientError(w, http.StatusNotFound, modelNotFound, "Series with ID "+strconv.Itoa(sid)+" does not exist")
		return
	}
	out := []*episodeFile{}
	for _, f := range s.files {
		if f.SeriesID == sid {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) missing(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	monitored := boolParam(q, "monitored", true)
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	var all []map[string]any
	eps := slices.Clone(s.episodes)
	sort.SliceStable(eps, func(i, j int) bool { return eps[i].AirDateUtc.After(eps[j].AirDateUtc) })
	for _, e := range eps {
		// MissingController: monitored means the episode and its series.
		both := e.Monitored && s.seriesByID(e.SeriesID) != nil && s.seriesByID(e.SeriesID).Monitored
		if e.HasFile || both != monitored || e.AirDateUtc.After(now) {
			continue
		}
		all = append(all, s.episodeResource(e, boolParam(q, "includeSeries", false)))
	}
	if all == nil {
		all = []map[string]any{}
	}
	p, ok := pageOf(w, q, all, []string{"episodes.airDateUtc", "episodes.lastSearchTime", "series.sortTitle"}, "episodes.airDateUtc")
	if ok {
		arrfake.WriteJSON(w, http.StatusOK, p)
	}
}

func (s *Server) calendar(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	day := s.now().UTC().Truncate(24 * time.Hour)
	start, end := day, day.AddDate(0, 0, 2)
	for name, dst := range map[string]*time.Time{"start": &start, "end": &end} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				arrfake.InvalidValue(w, name, v)
				return
			}
			*dst = t
		}
	}
	unmonitored := boolParam(q, "unmonitored", false)
	out := []map[string]any{}
	for _, e := range s.episodes {
		if e.AirDateUtc.Before(start) || e.AirDateUtc.After(end) || (!e.Monitored && !unmonitored) {
			continue
		}
		out = append(out, s.episodeResource(e, boolParam(q, "includeSeries", false)))
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) commandGet(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.commands {
		if c.ID == id {
			out := *c
			// A command is seen running once, then finished.
			if c.Status == "queued" {
				c.Status, c.Started = "started", s.now().UTC().Format(time.RFC3339)
			} else if c.Status == "started" {
				c.Status, c.Result, c.Ended = "completed", "successful", s.now().UTC().Format(time.RFC3339)
			}
			arrfake.WriteJSON(w, http.StatusOK, out)
			return
		}
	}
	arrfake.NotFound(w)
}

func (s *Server) commandPost(w http.ResponseWriter, r *http.Request) {
	var body commandBody
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" {
		arrfake.ValidationFailed(w, arrfake.Failure{Property: "Name", Message: "'Name' must not be empty.", Attempted: body.Name})
		return
	}
	known := map[string]string{"EpisodeSearch": "Episode Search", "SeasonSearch": "Season Search", "SeriesSearch": "Series Search", "RefreshSeries": "Refresh Series", "MissingEpisodeSearch": "Missing Episode Search"}
	display, ok := known[body.Name]
	if !ok {
		// Sonarr looks the command type up with Single(): an unknown
		// name throws, and the pipeline answers 500.
		arrfake.ClientError(w, http.StatusInternalServerError, "System.InvalidOperationException", "Sequence contains no matching element")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &command{ID: 1000 + len(s.commands) + 1, Name: body.Name, CommandName: display, Body: body, Priority: "normal",
		Status: "queued", Result: "unknown", Queued: s.now().UTC().Format(time.RFC3339), Trigger: "manual",
		SendUpdatesToClient: true, UpdateScheduledTask: true}
	s.commands = append(s.commands, c)
	// Created(id): 201 with the command's location.
	w.Header().Set("Location", "/api/v3/command/"+strconv.Itoa(c.ID))
	arrfake.WriteJSON(w, http.StatusCreated, c)
}
