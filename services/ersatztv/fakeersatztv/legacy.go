package fakeersatztv

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// LegacyAPIVersion is what upstream ErsatzTV's /api/version reports as
// apiVersion (VersionController's CombinedVersion).
const LegacyAPIVersion = 3

// Unserved are the operations of the upstream document the legacy fake
// does not implement (the service never calls them).
var Unserved = []string{
	"POST /api/ffmpeg/profiles/new", "PUT /api/ffmpeg/profiles/update", "DELETE /api/ffmpeg/delete/{id}",
}

// Legacy is the fake upstream ErsatzTV (unversioned /api).
type Legacy struct {
	*recorder
	Store *Store
	// OIDC plays ErsatzTV with OpenID Connect on: its web app (the
	// fallback page) redirects to the identity provider, while the API
	// controllers, which carry no [Authorize], stay open (Startup.cs).
	OIDC bool
	mux  *http.ServeMux
}

// NewLegacy serves store as upstream ErsatzTV does.
func NewLegacy(store *Store) *Legacy {
	l := &Legacy{recorder: &recorder{}, Store: store, mux: http.NewServeMux()}
	routes := map[string]http.HandlerFunc{
		"GET /api/channels": l.channels,
		"POST /api/channels/{channelNumber}/playout/reset": l.reset,
		"GET /api/ffmpeg/profiles":                         l.profiles,
		"POST /api/libraries/{id}/scan":                    l.scan,
		"POST /api/libraries/{id}/scan-show":               l.scanShow,
		"GET /api/maintenance/gc":                          l.ok,
		"POST /api/maintenance/empty_trash":                l.ok,
		"GET /api/ffmpeg/resolution/by-name/{name}":        l.resolution,
		"GET /api/sessions":                                l.sessions,
		"DELETE /api/session/{channelNumber}":              l.stopSession,
		"GET /api/collections/smart":                       l.smart,
		"POST /api/collections/smart/new":                  l.createSmart,
		"PUT /api/collections/smart/update":                l.updateSmart,
		"DELETE /api/collections/smart/delete/{id}":        l.deleteSmart,
		"GET /api/version":                                 l.version,
		// Blazor's MapFallbackToPage("/_Host") answers every other GET
		// with the single-page app, 200 text/html.
		"GET /": l.fallback,
	}
	for pattern, h := range routes {
		l.mux.Handle(pattern, h)
	}
	return l
}

// Handler serves the fake as it answers on one of its ports. ErsatzTV
// answers 404 to every request that is not a streaming (IPTV/HDHR) path,
// unless it arrives on the UI port (ETV_UI_PORT) or its Host starts with
// "localhost". With the default configuration the UI and streaming ports
// are the same port, so uiPort is true.
func (l *Legacy) Handler(uiPort bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		l.record(r, body)
		r.Body = readCloser{bytes.NewReader(body)}
		if !uiPort && !strings.HasPrefix(strings.ToLower(r.Host), "localhost") && !isIptvPath(r.URL.Path) {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		l.Store.Lock()
		defer l.Store.Unlock()
		l.mux.ServeHTTP(w, r)
	})
}

func (l *Legacy) fallback(w http.ResponseWriter, r *http.Request) {
	if l.OIDC {
		w.Header().Set("Location", "https://idp.example/authorize?client_id=ersatztv&redirect_uri=%2Fcallback")
		w.WriteHeader(http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("<!DOCTYPE html>\n<html lang=\"en\"><head><title>ErsatzTV</title></head><body><div id=\"app\"></div></body></html>\n"))
}

func (l *Legacy) ok(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }

// validation answers as ASP.NET's [ApiController] model validation does.
func validation(w http.ResponseWriter, field string) {
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "https://tools.ietf.org/html/rfc9110#section-15.5.1", "title": "One or more validation errors occurred.", "status": 400,
		"errors": map[string][]string{field: {"The " + field + " field is required."}},
	})
}

func (l *Legacy) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"apiVersion": LegacyAPIVersion, "appVersion": l.Store.AppVersion})
}

// channels is ChannelResponseModel as ErsatzTV serializes it at runtime:
// Newtonsoft.Json (Startup.cs AddNewtonsoftJson) honours the model's
// [JsonProperty("ffmpegProfile")] — the OpenAPI document, generated with
// System.Text.Json, says fFmpegProfile — and leaves out null values
// (NullValueHandling.Ignore), such as an unset audio language.
func (l *Legacy) channels(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, c := range l.Store.Channels {
		row := map[string]any{"id": c.ID, "number": c.Number, "name": c.Name, "streamingMode": c.StreamingMode}
		if p := l.Store.profile(c.FFmpegProfileID); p != nil {
			row["ffmpegProfile"] = p.Name
		}
		if c.PreferredAudioLanguageCode != "" {
			row["language"] = c.PreferredAudioLanguageCode
		}
		out = append(out, row)
	}
	writeJSON(w, http.StatusOK, out)
}

// reset queues a playout reset for the channel with that number and
// answers 200 before the worker runs it (ChannelController writes
// BuildPlayout(Reset) to a background channel); a channel without a
// playout is 404, as GetPlayoutIdByChannelNumber finds none.
func (l *Legacy) reset(w http.ResponseWriter, r *http.Request) {
	c := l.Store.channelByNumber(r.PathValue("channelNumber"))
	if c == nil || l.Store.playoutOf(c.ID) == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	l.Store.playoutOf(c.ID).Resets++
	w.WriteHeader(http.StatusOK)
}

func (l *Legacy) profiles(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, p := range l.Store.Profiles {
		out = append(out, l.Store.profileJSON(p))
	}
	writeJSON(w, http.StatusOK, out)
}

// scan is QueueLibraryScanByLibraryIdHandler: 404 for an unknown library
// and for a Plex, Jellyfin or Emby library whose sync is off; 200 and
// nothing queued when the library is locked by a running scan; else a
// forced scan is queued (for a media server library after a refresh of
// the source's library list).
func (l *Legacy) scan(w http.ResponseWriter, r *http.Request) {
	id, ok := pathInt(r, "id")
	lib := l.Store.library(id)
	if !ok || lib == nil || !lib.ShouldSyncItems && l.Store.sourceOf(id).Kind != "Local" {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if lib.Progress == nil {
		lib.Scans++
		if src := l.Store.sourceOf(id); src.Kind != "Local" {
			src.Refreshes++
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (l *Legacy) scanShow(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ShowTitle string `json:"showTitle"`
		DeepScan  bool   `json:"deepScan"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || strings.TrimSpace(body.ShowTitle) == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "ShowTitle is required"})
		return
	}
	id, _ := pathInt(r, "id")
	for _, it := range l.Store.Items {
		if it.Kind == "show" && it.LibraryID == id && it.Title == strings.TrimSpace(body.ShowTitle) {
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Unable to locate show with title " + body.ShowTitle + " in library"})
}

func (l *Legacy) resolution(w http.ResponseWriter, r *http.Request) {
	res := l.Store.resolutionNamed(r.PathValue("name"))
	if res == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (l *Legacy) sessions(w http.ResponseWriter, _ *http.Request) {
	out := l.Store.Sessions
	if out == nil {
		out = []*Session{}
	}
	writeJSON(w, http.StatusOK, out)
}

func (l *Legacy) stopSession(w http.ResponseWriter, r *http.Request) {
	n := len(l.Store.Sessions)
	l.Store.Sessions = slices.DeleteFunc(l.Store.Sessions, func(s *Session) bool { return s.ChannelNumber == r.PathValue("channelNumber") })
	if len(l.Store.Sessions) == n {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (l *Legacy) smart(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, l.Store.SmartCollections)
}

// The smart collection commands answer a failed validation with
// ControllerBase.Problem(error), which is HTTP 500.
func (l *Legacy) createSmart(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Query *string `json:"query"`
		Name  *string `json:"name"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.Name == nil {
		validation(w, "Name")
		return
	}
	if body.Query == nil {
		validation(w, "Query")
		return
	}
	if msg := l.smartNameError(0, *body.Name); msg != "" {
		problem(w, http.StatusInternalServerError, "An error occurred while processing your request.", msg)
		return
	}
	c := &SmartCollection{ID: l.Store.id(), Name: *body.Name, Query: *body.Query}
	l.Store.SmartCollections = append(l.Store.SmartCollections, c)
	writeJSON(w, http.StatusOK, map[string]any{"smartCollectionId": c.ID, "id": c.ID})
}

func (l *Legacy) updateSmart(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ID    *int    `json:"id"`
		Name  *string `json:"name"`
		Query *string `json:"query"`
	}
	if json.NewDecoder(r.Body).Decode(&body) != nil || body.ID == nil {
		validation(w, "Id")
		return
	}
	if body.Name == nil {
		validation(w, "Name")
		return
	}
	if body.Query == nil {
		validation(w, "Query")
		return
	}
	if msg := l.smartNameError(*body.ID, *body.Name); msg != "" {
		problem(w, http.StatusInternalServerError, "An error occurred while processing your request.", msg)
		return
	}
	c := l.Store.smart(*body.ID)
	if c == nil {
		problem(w, http.StatusInternalServerError, "An error occurred while processing your request.", "SmartCollection does not exist.")
		return
	}
	if c.Name != *body.Name || c.Query != *body.Query {
		c.Name, c.Query = *body.Name, *body.Query
		// UpdateSmartCollectionHandler queues a Refresh build of every
		// playout whose schedule uses the smart collection.
		for _, p := range l.Store.playoutsUsingSmart(c.ID) {
			p.Refreshes++
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"smartCollectionId": c.ID, "id": c.ID})
}

// smartNameError is the smart collection commands' name validation: not
// empty, at most 50 characters, unique among the other smart collections.
func (l *Legacy) smartNameError(id int, name string) string {
	switch {
	case name == "":
		return "[Name] must not be empty"
	case utf8.RuneCountInString(name) > 50:
		return "[Name] must not be longer than 50"
	}
	for _, c := range l.Store.SmartCollections {
		if c.ID != id && c.Name == name {
			return "SmartCollection name must be unique"
		}
	}
	return ""
}

func (l *Legacy) deleteSmart(w http.ResponseWriter, r *http.Request) {
	id, ok := pathInt(r, "id")
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	c := l.Store.smart(id)
	if c == nil {
		problem(w, http.StatusInternalServerError, "An error occurred while processing your request.", "SmartCollection does not exist.")
		return
	}
	l.Store.SmartCollections = slices.DeleteFunc(l.Store.SmartCollections, func(x *SmartCollection) bool { return x == c })
	// The database cascades the delete to everything that uses it
	// (ProgramScheduleItemConfiguration and others: OnDelete Cascade).
	for _, sc := range l.Store.Schedules {
		sc.Items = slices.DeleteFunc(sc.Items, func(it ScheduleItem) bool {
			return it.CollectionType == "SmartCollection" && it.CollectionID != nil && *it.CollectionID == id
		})
	}
	w.WriteHeader(http.StatusOK)
}
