package fakeersatztv

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Page sizes of the /api/v1 contract: every paged read clamps pageSize to
// its cap and derives the offset from the effective size.
const (
	PageCap         = 100
	PageDefault     = 50
	AllItemsCap     = 1000
	AllItemsDefault = 500
)

// V1 is the fake /api/v1 ErsatzTV.
type V1 struct {
	*recorder
	Store *Store
	key   string
	mux   *http.ServeMux
	// BeforeWrite, when set, runs before a write is handled (outside the
	// store's lock): a test changes the store there to play a concurrent
	// editor.
	BeforeWrite func(r *http.Request)
}

// NewV1 serves store, accepting key as X-Api-Key.
func NewV1(store *Store, key string) *V1 {
	v := &V1{recorder: &recorder{}, Store: store, key: key, mux: http.NewServeMux()}
	routes := map[string]http.HandlerFunc{
		"GET /api/v1/version":                                        v.version,
		"GET /api/v1/channels":                                       v.listChannels,
		"POST /api/v1/channels":                                      v.createChannel,
		"GET /api/v1/channels/{id}":                                  v.getChannel,
		"PUT /api/v1/channels/{id}":                                  v.updateChannel,
		"DELETE /api/v1/channels/{id}":                               v.deleteChannel,
		"POST /api/v1/channels/{id}/playout/reset":                   v.resetPlayout,
		"GET /api/v1/collections":                                    v.listCollections,
		"POST /api/v1/collections":                                   v.createCollection,
		"GET /api/v1/collections/{id}":                               v.getCollection,
		"PUT /api/v1/collections/{id}":                               v.updateCollection,
		"DELETE /api/v1/collections/{id}":                            v.deleteCollection,
		"GET /api/v1/collections/{id}/items":                         v.collectionItems,
		"POST /api/v1/collections/{id}/items":                        v.addItems,
		"DELETE /api/v1/collections/{id}/items/{mediaItemId}":        v.removeItem,
		"PUT /api/v1/collections/{id}/custom-order":                  v.customOrder,
		"GET /api/v1/smart-collections":                              v.listSmart,
		"POST /api/v1/smart-collections":                             v.createSmart,
		"GET /api/v1/smart-collections/{id}":                         v.getSmart,
		"PUT /api/v1/smart-collections/{id}":                         v.updateSmart,
		"DELETE /api/v1/smart-collections/{id}":                      v.deleteSmart,
		"GET /api/v1/schedules":                                      v.listSchedules,
		"POST /api/v1/schedules":                                     v.createSchedule,
		"GET /api/v1/schedules/{id}":                                 v.getSchedule,
		"PUT /api/v1/schedules/{id}":                                 v.updateSchedule,
		"DELETE /api/v1/schedules/{id}":                              v.deleteSchedule,
		"GET /api/v1/schedules/{id}/items":                           v.scheduleItems,
		"GET /api/v1/playouts":                                       v.listPlayouts,
		"POST /api/v1/playouts":                                      v.createPlayout,
		"GET /api/v1/playouts/{id}":                                  v.getPlayout,
		"PUT /api/v1/playouts/{id}":                                  v.updatePlayout,
		"DELETE /api/v1/playouts/{id}":                               v.deletePlayout,
		"GET /api/v1/playouts/{id}/items":                            v.playoutItems,
		"GET /api/v1/ffmpeg/profiles":                                v.listProfiles,
		"GET /api/v1/ffmpeg/profiles/{id}":                           v.getProfile,
		"GET /api/v1/ffmpeg/resolution/by-name/{name}":               v.resolutionByName,
		"GET /api/v1/sessions":                                       v.sessions,
		"GET /api/v1/media-sources":                                  v.mediaSources,
		"GET /api/v1/media-sources/jellyfin/{id}/libraries":          v.jellyfinLibraries,
		"PUT /api/v1/media-sources/jellyfin/{id}/libraries":          v.jellyfinSync,
		"POST /api/v1/media-sources/jellyfin/{id}/refresh-libraries": v.jellyfinRefresh,
		"POST /api/v1/media-sources/jellyfin/{id}/scan-collections":  v.jellyfinScanCollections,
		"GET /api/v1/libraries/local":                                v.localLibraries,
		"GET /api/v1/libraries/scan-status":                          v.scanStatus,
		"POST /api/v1/libraries/{id}/scan":                           v.scanLibrary,
		"GET /api/v1/search":                                         v.search,
		"GET /api/v1/search/all-items":                               v.searchAllItems,
		"GET /api/v1/search/artists":                                 v.searchArtists,
	}
	for pattern, h := range routes {
		v.mux.Handle(pattern, h)
	}
	return v
}

// ServeHTTP checks the machine key (reads need it too, as with the default
// Api:RequireKeyForReads=true), records the request and routes it.
func (v *V1) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body := readBody(r)
	v.record(r, body)
	r.Body = http.NoBody
	if len(body) > 0 {
		r.Body = readCloser{bytes.NewReader(body)}
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		http.NotFound(w, r)
		return
	}
	if got := r.Header.Get("X-Api-Key"); v.key == "" || subtle.ConstantTimeCompare([]byte(got), []byte(v.key)) != 1 {
		problem(w, http.StatusUnauthorized, "Unauthorized", "A valid X-Api-Key is required.")
		return
	}
	if r.Method != http.MethodGet && v.BeforeWrite != nil {
		v.BeforeWrite(r)
	}
	v.Store.Lock()
	defer v.Store.Unlock()
	v.mux.ServeHTTP(w, r)
}

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// page reads pageNum and pageSize: 0-based, clamped to the endpoint's cap,
// the offset derived from the effective size.
func page(w http.ResponseWriter, r *http.Request, def, cap_ int) (offset, size int, ok bool) {
	num, size := 0, def
	if s := r.URL.Query().Get("pageNum"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			problem(w, http.StatusBadRequest, "Bad Request", "pageNum must be a non-negative integer (pages are 0-based).")
			return 0, 0, false
		}
		num = n
	}
	if s := r.URL.Query().Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			problem(w, http.StatusBadRequest, "Bad Request", "pageSize must be a positive integer.")
			return 0, 0, false
		}
		size = min(n, cap_)
	}
	return num * size, size, true
}

func paged[T any](all []T, offset, size int) map[string]any {
	out := []T{}
	if offset < len(all) {
		out = all[offset:min(len(all), offset+size)]
	}
	return map[string]any{"totalCount": len(all), "page": out}
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		problem(w, http.StatusBadRequest, "Bad Request", "The request body is not valid JSON for this endpoint.")
		return false
	}
	return true
}

func (v *V1) version(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"apiVersion": 1, "appVersion": v.Store.AppVersion})
}

// --- channels ---------------------------------------------------------

func channelRow(c *Channel) map[string]any {
	return map[string]any{"id": c.ID, "number": c.Number, "name": c.Name, "group": c.Group, "ffmpegProfileId": c.FFmpegProfileID,
		"streamingMode": c.StreamingMode, "playoutMode": c.PlayoutMode, "isEnabled": c.IsEnabled, "showInEpg": c.ShowInEpg}
}

func (v *V1) listChannels(w http.ResponseWriter, _ *http.Request) {
	rows := []map[string]any{}
	for _, c := range v.Store.Channels {
		rows = append(rows, channelRow(c))
	}
	writeJSON(w, http.StatusOK, rows)
}

func (v *V1) getChannel(w http.ResponseWriter, r *http.Request) {
	id, _ := pathInt(r, "id")
	c := v.Store.channel(id)
	if c == nil {
		problem(w, http.StatusNotFound, "Not Found", "Channel does not exist.")
		return
	}
	writeJSON(w, http.StatusOK, c)
}

var channelNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]{1,2})?$`)

// channelBody reads a channel body the way ErsatzTV's DTO binding does: a
// field that is absent takes its zero value (an enum its first name), so a
// full replace writes every omitted field as empty.
func (v *V1) channelBody(w http.ResponseWriter, r *http.Request, create bool) (*Channel, bool) {
	var raw map[string]json.RawMessage
	if !decodeBody(w, r, &raw) {
		return nil, false
	}
	allowed := map[string]bool{}
	for _, f := range channelFields(create) {
		allowed[f] = true
	}
	for k := range raw {
		if !allowed[k] {
			problem(w, http.StatusBadRequest, "Bad Request", "Unknown field "+strconv.Quote(k)+".")
			return nil, false
		}
	}
	var c Channel
	data, _ := json.Marshal(raw)
	if err := json.Unmarshal(data, &c); err != nil {
		problem(w, http.StatusBadRequest, "Bad Request", "A channel field has the wrong type.")
		return nil, false
	}
	for field, names := range ChannelEnums {
		p := enumField(&c, field)
		if _, set := raw[field]; !set {
			*p = names[0]
			if create && field == "streamingMode" {
				*p = "TransportStreamHybrid"
			}
			continue
		}
		if !slices.Contains(names, *p) {
			problem(w, http.StatusBadRequest, "Bad Request", fmt.Sprintf("%s must be one of %s.", field, strings.Join(names, ", ")))
			return nil, false
		}
	}
	if create {
		for _, f := range []string{"isEnabled", "showInEpg"} {
			if _, set := raw[f]; !set {
				*boolField(&c, f) = true
			}
		}
	}
	if c.GraphicsElementIDs == nil {
		c.GraphicsElementIDs = []int{}
	}
	switch {
	case strings.TrimSpace(c.Name) == "":
		problem(w, http.StatusBadRequest, "Bad Request", "Channel name is required.")
	case !channelNumber.MatchString(c.Number):
		problem(w, http.StatusBadRequest, "Bad Request", "Channel number must be digits with at most two decimals.")
	case v.Store.profile(c.FFmpegProfileID) == nil:
		problem(w, http.StatusBadRequest, "Bad Request", "FFmpeg profile does not exist.")
	default:
		return &c, true
	}
	return nil, false
}

// channelFields are the body fields of create (27) and update (28, with
// graphicsElementIds).
func channelFields(create bool) []string {
	f := []string{"name", "number", "group", "categories", "ffmpegProfileId", "slugSeconds", "logo", "streamSelectorMode", "streamSelector",
		"preferredAudioLanguageCode", "preferredAudioTitle", "playoutSource", "playoutMode", "mirrorSourceChannelId", "playoutOffset",
		"streamingMode", "watermarkId", "fallbackFillerId", "preferredSubtitleLanguageCode", "subtitleMode", "musicVideoCreditsMode",
		"musicVideoCreditsTemplate", "songVideoMode", "transcodeMode", "idleBehavior", "isEnabled", "showInEpg"}
	if !create {
		f = append(f, "graphicsElementIds")
	}
	return f
}

func enumField(c *Channel, name string) *string {
	switch name {
	case "streamSelectorMode":
		return &c.StreamSelectorMode
	case "playoutSource":
		return &c.PlayoutSource
	case "playoutMode":
		return &c.PlayoutMode
	case "streamingMode":
		return &c.StreamingMode
	case "subtitleMode":
		return &c.SubtitleMode
	case "musicVideoCreditsMode":
		return &c.MusicVideoCreditsMode
	case "songVideoMode":
		return &c.SongVideoMode
	case "transcodeMode":
		return &c.TranscodeMode
	case "idleBehavior":
		return &c.IdleBehavior
	}
	panic("no enum field " + name)
}

func boolField(c *Channel, name string) *bool {
	if name == "isEnabled" {
		return &c.IsEnabled
	}
	return &c.ShowInEpg
}

func (v *V1) numberTaken(number string, except int) bool {
	for _, c := range v.Store.Channels {
		if c.Number == number && c.ID != except {
			return true
		}
	}
	return false
}

func (v *V1) createChannel(w http.ResponseWriter, r *http.Request) {
	c, ok := v.channelBody(w, r, true)
	if !ok {
		return
	}
	if v.numberTaken(c.Number, 0) {
		problem(w, http.StatusBadRequest, "Bad Request", "Channel number must be unique.")
		return
	}
	c.ID = v.Store.id()
	v.Store.Channels = append(v.Store.Channels, c)
	writeJSON(w, http.StatusCreated, c)
}

func (v *V1) updateChannel(w http.ResponseWriter, r *http.Request) {
	id, _ := pathInt(r, "id")
	old := v.Store.channel(id)
	if old == nil {
		problem(w, http.StatusNotFound, "Not Found", "Channel does not exist.")
		return
	}
	c, ok := v.channelBody(w, r, false)
	if !ok {
		return
	}
	if v.numberTaken(c.Number, id) {
		problem(w, http.StatusBadRequest, "Bad Request", "Channel number must be unique.")
		return
	}
	c.ID = id
	*old = *c
	writeJSON(w, http.StatusOK, old)
}

func (v *V1) deleteChannel(w http.ResponseWriter, r *http.Request) {
	id, _ := pathInt(r, "id")
	if v.Store.channel(id) == nil {
		problem(w, http.StatusNotFound, "Not Found", "Channel does not exist.")
		return
	}
	v.Store.Channels = slices.DeleteFunc(v.Store.Channels, func(c *Channel) bool { return c.ID == id })
	v.Store.Playouts = slices.DeleteFunc(v.Store.Playouts, func(p *Playout) bool { return p.ChannelID == id })
	w.WriteHeader(http.StatusNoContent)
}

func (v *V1) resetPlayout(w http.ResponseWriter, r *http.Request) {
	id, _ := pathInt(r, "id")
	p := v.Store.playoutOf(id)
	if v.Store.channel(id) == nil || p == nil {
		problem(w, http.StatusNotFound, "Not Found", "Channel does not exist or has no playout.")
		return
	}
	p.Resets++
	w.WriteHeader(http.StatusAccepted)
}

// --- collections ------------------------------------------------------

func collectionRow(c *Collection) map[string]any {
	return map[string]any{"id": c.ID, "name": c.Name, "useCustomPlaybackOrder": c.UseCustomPlaybackOrder, "itemCount": len(c.Members)}
}

func etag(version int) string { return `"` + strconv.Itoa(version) + `"` }

func (v *V1) listCollections(w http.ResponseWriter, r *http.Request) {
	offset, size, ok := page(w, r, PageDefault, PageCap)
	if !ok {
		return
	}
	rows := []map[string]any{}
	for _, c := range v.Store.Collections {
		rows = append(rows, collectionRow(c))
	}
	writeJSON(w, http.StatusOK, paged(rows, offset, size))
}

func (v *V1) collection(w http.ResponseWriter, r *http.Request) *Collection {
	id, _ := pathInt(r, "id")
	c := v.Store.Collection(id)
	if c == nil {
		problem(w, http.StatusNotFound, "Not Found", "Collection does not exist.")
	}
	return c
}

func (v *V1) getCollection(w http.ResponseWriter, r *http.Request) {
	if c := v.collection(w, r); c != nil {
		writeJSON(w, http.StatusOK, collectionRow(c))
	}
}

func (v *V1) collectionItems(w http.ResponseWriter, r *http.Request) {
	c := v.collection(w, r)
	if c == nil {
		return
	}
	offset, size, ok := page(w, r, PageDefault, PageCap)
	if !ok {
		return
	}
	rows := []map[string]any{}
	for _, m := range sortedMembers(c.Members) {
		item := v.Store.item(m.MediaItemID)
		rows = append(rows, map[string]any{"mediaItemId": m.MediaItemID, "kind": item.Kind, "title": item.Title, "customIndex": m.CustomIndex})
	}
	w.Header().Set("ETag", etag(c.Version))
	writeJSON(w, http.StatusOK, paged(rows, offset, size))
}

func (v *V1) nameTaken(name string, except int) bool {
	for _, c := range v.Store.Collections {
		if c.Name == name && c.ID != except {
			return true
		}
	}
	return false
}

func (v *V1) createCollection(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name string `json:"name"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Name) == "" || v.nameTaken(body.Name, 0) {
		problem(w, http.StatusBadRequest, "Bad Request", "Collection name is required and must be unique.")
		return
	}
	c := &Collection{ID: v.Store.id(), Name: body.Name, Version: 1}
	v.Store.Collections = append(v.Store.Collections, c)
	writeJSON(w, http.StatusCreated, collectionRow(c))
}

// updateCollection leaves useCustomPlaybackOrder alone when it is absent.
func (v *V1) updateCollection(w http.ResponseWriter, r *http.Request) {
	c := v.collection(w, r)
	if c == nil {
		return
	}
	var body struct {
		Name                   string `json:"name"`
		UseCustomPlaybackOrder *bool  `json:"useCustomPlaybackOrder"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Name) == "" || v.nameTaken(body.Name, c.ID) {
		problem(w, http.StatusBadRequest, "Bad Request", "Collection name is required and must be unique.")
		return
	}
	c.Name = body.Name
	if body.UseCustomPlaybackOrder != nil {
		c.UseCustomPlaybackOrder = *body.UseCustomPlaybackOrder
	}
	writeJSON(w, http.StatusOK, collectionRow(c))
}

func (v *V1) deleteCollection(w http.ResponseWriter, r *http.Request) {
	c := v.collection(w, r)
	if c == nil {
		return
	}
	v.Store.Collections = slices.DeleteFunc(v.Store.Collections, func(x *Collection) bool { return x == c })
	w.WriteHeader(http.StatusNoContent)
}

// addItems is idempotent (204 whether or not anything was new) and rejects
// the whole batch with 422 when any id does not exist as its kind.
func (v *V1) addItems(w http.ResponseWriter, r *http.Request) {
	c := v.collection(w, r)
	if c == nil {
		return
	}
	var body map[string][]int
	if !decodeBody(w, r, &body) {
		return
	}
	kinds := map[string]string{}
	for _, k := range Kinds {
		kinds[k.Bucket] = k.Kind
	}
	var add []int
	for bucket, ids := range body {
		kind, known := kinds[bucket]
		if !known {
			problem(w, http.StatusBadRequest, "Bad Request", "Unknown field "+strconv.Quote(bucket)+".")
			return
		}
		for _, id := range ids {
			if m := v.Store.item(id); m == nil || m.Kind != kind {
				problem(w, http.StatusUnprocessableEntity, "Unprocessable Entity", fmt.Sprintf("%s does not exist.", kind))
				return
			}
			add = append(add, id)
		}
	}
	changed := false
	for _, id := range add {
		if !slices.ContainsFunc(c.Members, func(m Member) bool { return m.MediaItemID == id }) {
			c.Members = append(c.Members, Member{MediaItemID: id})
			changed = true
		}
	}
	if changed {
		c.Version++
	}
	w.WriteHeader(http.StatusNoContent)
}

func (v *V1) removeItem(w http.ResponseWriter, r *http.Request) {
	c := v.collection(w, r)
	if c == nil {
		return
	}
	id, _ := pathInt(r, "mediaItemId")
	n := len(c.Members)
	c.Members = slices.DeleteFunc(c.Members, func(m Member) bool { return m.MediaItemID == id })
	if len(c.Members) == n {
		problem(w, http.StatusNotFound, "Not Found", "The item is not in the collection.")
		return
	}
	c.Version++
	w.WriteHeader(http.StatusNoContent)
}

var entityTag = regexp.MustCompile(`^(W/)?"[\x21\x23-\x7e\x80-\xff]*"$`)

// customOrder is the replace-all aggregate PUT: every member not listed
// loses its custom index. It honours If-Match: a stale tag is 412, a
// malformed one 400, "*" or none force-writes.
func (v *V1) customOrder(w http.ResponseWriter, r *http.Request) {
	c := v.collection(w, r)
	if c == nil {
		return
	}
	if h := strings.TrimSpace(r.Header.Get("If-Match")); h != "" && h != "*" {
		match := false
		for _, tag := range strings.Split(h, ",") {
			tag = strings.TrimSpace(tag)
			if !entityTag.MatchString(tag) {
				problem(w, http.StatusBadRequest, "Bad Request", "If-Match is not a list of entity tags.")
				return
			}
			// If-Match uses the strong comparison: a weak tag never matches.
			if tag == etag(c.Version) {
				match = true
			}
		}
		if !match {
			problem(w, http.StatusPreconditionFailed, "Precondition Failed", "The collection changed; read it again.")
			return
		}
	}
	var body struct {
		MediaItemCustomOrders []struct {
			MediaItemID int `json:"mediaItemId"`
			CustomIndex int `json:"customIndex"`
		} `json:"mediaItemCustomOrders"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	index := map[int]int{}
	for _, o := range body.MediaItemCustomOrders {
		if !slices.ContainsFunc(c.Members, func(m Member) bool { return m.MediaItemID == o.MediaItemID }) {
			problem(w, http.StatusUnprocessableEntity, "Unprocessable Entity", "Media item is not in the collection.")
			return
		}
		index[o.MediaItemID] = o.CustomIndex
	}
	for i := range c.Members {
		c.Members[i].CustomIndex = nil
		if n, ok := index[c.Members[i].MediaItemID]; ok {
			c.Members[i].CustomIndex = ptr(n)
		}
	}
	c.Version++
	w.Header().Set("ETag", etag(c.Version))
	w.WriteHeader(http.StatusNoContent)
}

// --- smart collections ------------------------------------------------

func (v *V1) listSmart(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, v.Store.SmartCollections)
}

func (v *V1) smart(w http.ResponseWriter, r *http.Request) *SmartCollection {
	id, _ := pathInt(r, "id")
	c := v.Store.smart(id)
	if c == nil {
		problem(w, http.StatusNotFound, "Not Found", "Smart collection does not exist.")
	}
	return c
}

func (v *V1) getSmart(w http.ResponseWriter, r *http.Request) {
	if c := v.smart(w, r); c != nil {
		writeJSON(w, http.StatusOK, c)
	}
}

func (v *V1) smartNameTaken(name string, except int) bool {
	for _, c := range v.Store.SmartCollections {
		if c.Name == name && c.ID != except {
			return true
		}
	}
	return false
}

func (v *V1) createSmart(w http.ResponseWriter, r *http.Request) {
	var body SmartCollection
	if !decodeBody(w, r, &body) {
		return
	}
	if strings.TrimSpace(body.Name) == "" || strings.TrimSpace(body.Query) == "" || v.smartNameTaken(body.Name, 0) {
		problem(w, http.StatusBadRequest, "Bad Request", "Smart collection name (unique) and query are required.")
		return
	}
	body.ID = v.Store.id()
	v.Store.SmartCollections = append(v.Store.SmartCollections, &body)
	writeJSON(w, http.StatusCreated, body)
}

// updateSmart leaves an absent name or query unchanged.
func (v *V1) updateSmart(w http.ResponseWriter, r *http.Request) {
	c := v.smart(w, r)
	if c == nil {
		return
	}
	var body struct {
		Name  *string `json:"name"`
		Query *string `json:"query"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.Name != nil && (strings.TrimSpace(*body.Name) == "" || v.smartNameTaken(*body.Name, c.ID)) {
		problem(w, http.StatusBadRequest, "Bad Request", "Smart collection name must be unique and not empty.")
		return
	}
	if body.Name != nil {
		c.Name = *body.Name
	}
	if body.Query != nil {
		c.Query = *body.Query
	}
	writeJSON(w, http.StatusOK, c)
}

func (v *V1) deleteSmart(w http.ResponseWriter, r *http.Request) {
	c := v.smart(w, r)
	if c == nil {
		return
	}
	v.Store.SmartCollections = slices.DeleteFunc(v.Store.SmartCollections, func(x *SmartCollection) bool { return x == c })
	w.WriteHeader(http.StatusNoContent)
}

// --- schedules --------------------------------------------------------

func (v *V1) listSchedules(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, v.Store.Schedules)
}

func (v *V1) schedule(w http.ResponseWriter, r *http.Request) *Schedule {
	id, _ := pathInt(r, "id")
	s := v.Store.Schedule(id)
	if s == nil {
		problem(w, http.StatusNotFound, "Not Found", "Schedule does not exist.")
	}
	return s
}

func (v *V1) getSchedule(w http.ResponseWriter, r *http.Request) {
	if s := v.schedule(w, r); s != nil {
		writeJSON(w, http.StatusOK, s)
	}
}

func (v *V1) scheduleItems(w http.ResponseWriter, r *http.Request) {
	s := v.schedule(w, r)
	if s == nil {
		return
	}
	items := s.Items
	if items == nil {
		items = []ScheduleItem{}
	}
	w.Header().Set("ETag", etag(s.Version))
	writeJSON(w, http.StatusOK, items)
}

// scheduleBody binds a schedule as a full replace: an omitted flag is
// false, an omitted padToNearestMinute null, an omitted behavior Strict.
func scheduleBody(w http.ResponseWriter, r *http.Request) (*Schedule, bool) {
	var raw map[string]json.RawMessage
	if !decodeBody(w, r, &raw) {
		return nil, false
	}
	for k := range raw {
		switch k {
		case "name", "keepMultiPartEpisodesTogether", "treatCollectionsAsShows", "shuffleScheduleItems", "randomStartPoint",
			"fixedStartTimeBehavior", "padToNearestMinute":
		default:
			problem(w, http.StatusBadRequest, "Bad Request", "Unknown field "+strconv.Quote(k)+".")
			return nil, false
		}
	}
	var s Schedule
	data, _ := json.Marshal(raw)
	if err := json.Unmarshal(data, &s); err != nil {
		problem(w, http.StatusBadRequest, "Bad Request", "A schedule field has the wrong type.")
		return nil, false
	}
	if s.FixedStartTimeBehavior == "" {
		s.FixedStartTimeBehavior = "Strict"
	}
	switch {
	case strings.TrimSpace(s.Name) == "":
		problem(w, http.StatusBadRequest, "Bad Request", "Schedule name is required.")
	case s.FixedStartTimeBehavior != "Strict" && s.FixedStartTimeBehavior != "Flexible":
		problem(w, http.StatusBadRequest, "Bad Request", "fixedStartTimeBehavior must be Strict or Flexible.")
	case s.PadToNearestMinute != nil && (*s.PadToNearestMinute < 1 || *s.PadToNearestMinute > 60):
		problem(w, http.StatusBadRequest, "Bad Request", "padToNearestMinute must be 1-60.")
	default:
		return &s, true
	}
	return nil, false
}

// scheduleNameRefused answers as ErsatzTV's schedule handlers validate a
// name (Create/UpdateProgramScheduleHandler): at most 50 characters,
// unique by exact match.
func (v *V1) scheduleNameRefused(w http.ResponseWriter, s *Schedule, id int) bool {
	msg := ""
	if utf8.RuneCountInString(s.Name) > 50 {
		msg = "[Name] must not be longer than 50"
	}
	for _, o := range v.Store.Schedules {
		if o.ID != id && o.Name == s.Name {
			msg = "Schedule name must be unique"
		}
	}
	if msg != "" {
		problem(w, http.StatusBadRequest, "Bad Request", msg)
	}
	return msg != ""
}

func (v *V1) createSchedule(w http.ResponseWriter, r *http.Request) {
	s, ok := scheduleBody(w, r)
	if !ok || v.scheduleNameRefused(w, s, 0) {
		return
	}
	s.ID, s.Version = v.Store.id(), 1
	v.Store.Schedules = append(v.Store.Schedules, s)
	writeJSON(w, http.StatusCreated, s)
}

func (v *V1) updateSchedule(w http.ResponseWriter, r *http.Request) {
	old := v.schedule(w, r)
	if old == nil {
		return
	}
	s, ok := scheduleBody(w, r)
	if !ok || v.scheduleNameRefused(w, s, old.ID) {
		return
	}
	s.ID, s.Items, s.Version = old.ID, old.Items, old.Version
	*old = *s
	writeJSON(w, http.StatusOK, old)
}

func (v *V1) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	s := v.schedule(w, r)
	if s == nil {
		return
	}
	v.Store.Schedules = slices.DeleteFunc(v.Store.Schedules, func(x *Schedule) bool { return x == s })
	// ErsatzTV's data model deletes the playouts of the schedule with it
	// (ProgramScheduleConfiguration: Playouts OnDelete Cascade).
	v.Store.Playouts = slices.DeleteFunc(v.Store.Playouts, func(p *Playout) bool {
		return p.ProgramScheduleID != nil && *p.ProgramScheduleID == s.ID
	})
	w.WriteHeader(http.StatusNoContent)
}

// --- playouts ---------------------------------------------------------

// playoutRow carries channelId: the id to act on for the channel (reset),
// which is not the playout's own id.
func (v *V1) playoutRow(p *Playout) map[string]any {
	row := map[string]any{"id": p.ID, "channelId": p.ChannelID, "scheduleKind": p.ScheduleKind,
		"scheduleFile": p.ScheduleFile, "dailyRebuildTime": p.DailyRebuildTime, "scheduleName": ""}
	if c := v.Store.channel(p.ChannelID); c != nil {
		row["channelNumber"], row["channelName"] = c.Number, c.Name
	}
	if p.ProgramScheduleID != nil {
		if s := v.Store.Schedule(*p.ProgramScheduleID); s != nil {
			row["scheduleName"] = s.Name
		}
	}
	return row
}

func (v *V1) listPlayouts(w http.ResponseWriter, r *http.Request) {
	offset, size, ok := page(w, r, PageDefault, PageCap)
	if !ok {
		return
	}
	q := r.URL.Query().Get("query")
	rows := []map[string]any{}
	for _, p := range v.Store.Playouts {
		row := v.playoutRow(p)
		if q != "" && !contains(fmt.Sprint(row["channelName"], " ", row["channelNumber"], " ", row["scheduleName"]), q) {
			continue
		}
		rows = append(rows, row)
	}
	writeJSON(w, http.StatusOK, paged(rows, offset, size))
}

func (v *V1) playout(w http.ResponseWriter, r *http.Request) *Playout {
	id, _ := pathInt(r, "id")
	p := v.Store.Playout(id)
	if p == nil {
		problem(w, http.StatusNotFound, "Not Found", "Playout does not exist.")
	}
	return p
}

func (v *V1) getPlayout(w http.ResponseWriter, r *http.Request) {
	if p := v.playout(w, r); p != nil {
		writeJSON(w, http.StatusOK, v.playoutRow(p))
	}
}

func (v *V1) playoutItems(w http.ResponseWriter, r *http.Request) {
	p := v.playout(w, r)
	if p == nil {
		return
	}
	offset, size, ok := page(w, r, PageDefault, PageCap)
	if !ok {
		return
	}
	showFiller := false
	if s := r.URL.Query().Get("showFiller"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			problem(w, http.StatusBadRequest, "Bad Request", "showFiller must be true or false.")
			return
		}
		showFiller = b
	}
	items := []PlayoutItem{}
	for _, it := range p.Items {
		if showFiller || !it.IsFiller {
			items = append(items, it)
		}
	}
	writeJSON(w, http.StatusOK, paged(items, offset, size))
}

func (v *V1) createPlayout(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ChannelID         int     `json:"channelId"`
		ScheduleKind      string  `json:"scheduleKind"`
		ProgramScheduleID *int    `json:"programScheduleId"`
		ScheduleFile      *string `json:"scheduleFile"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	switch {
	case v.Store.channel(body.ChannelID) == nil:
		problem(w, http.StatusBadRequest, "Bad Request", "Channel does not exist.")
	case v.Store.playoutOf(body.ChannelID) != nil:
		problem(w, http.StatusBadRequest, "Bad Request", "Channel already has a playout.")
	case body.ScheduleKind == "Classic" && (body.ProgramScheduleID == nil || v.Store.Schedule(*body.ProgramScheduleID) == nil):
		problem(w, http.StatusBadRequest, "Bad Request", "A classic playout needs an existing programScheduleId.")
	case slices.Contains([]string{"Sequential", "Scripted", "ExternalJson"}, body.ScheduleKind) && (body.ScheduleFile == nil || *body.ScheduleFile == ""):
		problem(w, http.StatusBadRequest, "Bad Request", "This schedule kind needs a scheduleFile.")
	case !slices.Contains([]string{"Classic", "Block", "Sequential", "Scripted", "ExternalJson"}, body.ScheduleKind):
		problem(w, http.StatusBadRequest, "Bad Request", "Unknown scheduleKind.")
	default:
		p := &Playout{ID: v.Store.id(), ChannelID: body.ChannelID, ProgramScheduleID: body.ProgramScheduleID, ScheduleKind: body.ScheduleKind, ScheduleFile: body.ScheduleFile}
		v.Store.Playouts = append(v.Store.Playouts, p)
		writeJSON(w, http.StatusCreated, v.playoutRow(p))
	}
}

var timeOfDay = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$`)

// updatePlayout is mixed, as ErsatzTV's handler is: an absent scheduleFile
// is left unchanged, but dailyRebuildTime is cleared first and set again
// only when the body carries it.
func (v *V1) updatePlayout(w http.ResponseWriter, r *http.Request) {
	p := v.playout(w, r)
	if p == nil {
		return
	}
	var body struct {
		ScheduleFile     *string `json:"scheduleFile"`
		DailyRebuildTime *string `json:"dailyRebuildTime"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.DailyRebuildTime != nil && !timeOfDay.MatchString(*body.DailyRebuildTime) {
		problem(w, http.StatusBadRequest, "Bad Request", "dailyRebuildTime must be HH:mm:ss.")
		return
	}
	if body.ScheduleFile != nil {
		p.ScheduleFile = body.ScheduleFile
	}
	p.DailyRebuildTime = body.DailyRebuildTime
	writeJSON(w, http.StatusOK, v.playoutRow(p))
}

func (v *V1) deletePlayout(w http.ResponseWriter, r *http.Request) {
	p := v.playout(w, r)
	if p == nil {
		return
	}
	v.Store.Playouts = slices.DeleteFunc(v.Store.Playouts, func(x *Playout) bool { return x == p })
	w.WriteHeader(http.StatusNoContent)
}

// --- ffmpeg, sessions, version ----------------------------------------

func (s *Store) profileJSON(p *Profile) map[string]any {
	data, _ := json.Marshal(p)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	m["resolution"] = ""
	if r := s.resolution(p.ResolutionID); r != nil {
		m["resolution"] = r.Name
	}
	return m
}

func (v *V1) listProfiles(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, p := range v.Store.Profiles {
		out = append(out, v.Store.profileJSON(p))
	}
	writeJSON(w, http.StatusOK, out)
}

func (v *V1) getProfile(w http.ResponseWriter, r *http.Request) {
	id, _ := pathInt(r, "id")
	p := v.Store.profile(id)
	if p == nil {
		problem(w, http.StatusNotFound, "Not Found", "FFmpeg profile does not exist.")
		return
	}
	writeJSON(w, http.StatusOK, v.Store.profileJSON(p))
}

func (s *Store) resolutionNamed(name string) *Resolution {
	for _, r := range s.Resolutions {
		if r.Name == name {
			return r
		}
	}
	return nil
}

func (v *V1) resolutionByName(w http.ResponseWriter, r *http.Request) {
	res := v.Store.resolutionNamed(r.PathValue("name"))
	if res == nil {
		problem(w, http.StatusNotFound, "Not Found", "Resolution does not exist.")
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (v *V1) sessions(w http.ResponseWriter, _ *http.Request) {
	out := v.Store.Sessions
	if out == nil {
		out = []*Session{}
	}
	writeJSON(w, http.StatusOK, out)
}

// --- media sources and libraries --------------------------------------

func (v *V1) mediaSources(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, m := range v.Store.Sources {
		out = append(out, map[string]any{"id": m.ID, "kind": m.Kind, "name": m.Name, "address": m.Address, "libraryCount": len(m.Libraries)})
	}
	writeJSON(w, http.StatusOK, out)
}

func (v *V1) jellyfin(w http.ResponseWriter, r *http.Request) *MediaSource {
	id, _ := pathInt(r, "id")
	m := v.Store.source(id)
	if m == nil || m.Kind != "Jellyfin" {
		problem(w, http.StatusNotFound, "Not Found", "Jellyfin media source does not exist.")
		return nil
	}
	return m
}

func (v *V1) jellyfinLibraries(w http.ResponseWriter, r *http.Request) {
	if m := v.jellyfin(w, r); m != nil {
		writeJSON(w, http.StatusOK, m.Libraries)
	}
}

// jellyfinSync sets shouldSyncItems on the listed libraries and leaves
// the absent ones untouched.
func (v *V1) jellyfinSync(w http.ResponseWriter, r *http.Request) {
	m := v.jellyfin(w, r)
	if m == nil {
		return
	}
	var body struct {
		Libraries []struct {
			ID              int  `json:"id"`
			ShouldSyncItems bool `json:"shouldSyncItems"`
		} `json:"libraries"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	for _, l := range body.Libraries {
		if !slices.ContainsFunc(m.Libraries, func(x Library) bool { return x.ID == l.ID }) {
			problem(w, http.StatusUnprocessableEntity, "Unprocessable Entity", "Library does not belong to this media source.")
			return
		}
	}
	for _, l := range body.Libraries {
		for i := range m.Libraries {
			if m.Libraries[i].ID == l.ID {
				m.Libraries[i].ShouldSyncItems = l.ShouldSyncItems
			}
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (v *V1) jellyfinRefresh(w http.ResponseWriter, r *http.Request) {
	if m := v.jellyfin(w, r); m != nil {
		m.Refreshes++
		w.WriteHeader(http.StatusAccepted)
	}
}

func (v *V1) jellyfinScanCollections(w http.ResponseWriter, r *http.Request) {
	if m := v.jellyfin(w, r); m != nil {
		m.CollectionScans++
		w.WriteHeader(http.StatusAccepted)
	}
}

func (v *V1) localLibraries(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, m := range v.Store.Sources {
		if m.Kind != "Local" {
			continue
		}
		for _, l := range m.Libraries {
			out = append(out, map[string]any{"id": l.ID, "name": l.Name, "mediaKind": l.MediaKind, "paths": l.Paths})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (v *V1) scanStatus(w http.ResponseWriter, _ *http.Request) {
	out := []map[string]any{}
	for _, m := range v.Store.Sources {
		for _, l := range m.Libraries {
			if l.Progress != nil {
				out = append(out, map[string]any{"libraryId": l.ID, "libraryName": l.Name, "progress": *l.Progress})
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (v *V1) scanLibrary(w http.ResponseWriter, r *http.Request) {
	id, _ := pathInt(r, "id")
	l := v.Store.library(id)
	if l == nil {
		problem(w, http.StatusNotFound, "Not Found", "Library does not exist.")
		return
	}
	l.Scans++
	w.WriteHeader(http.StatusAccepted)
}

// --- search -----------------------------------------------------------

func (v *V1) matches(w http.ResponseWriter, r *http.Request) ([]*MediaItem, bool) {
	q := r.URL.Query().Get("query")
	if strings.TrimSpace(q) == "" {
		problem(w, http.StatusBadRequest, "Bad Request", "query is required.")
		return nil, false
	}
	m, err := parseQuery(q)
	if err != nil {
		problem(w, http.StatusBadRequest, "Bad Request", "The search query is malformed.")
		return nil, false
	}
	var out []*MediaItem
	for _, it := range v.Store.Items {
		if m(it) {
			out = append(out, it)
		}
	}
	return out, true
}

func (v *V1) search(w http.ResponseWriter, r *http.Request) {
	items, ok := v.matches(w, r)
	if !ok {
		return
	}
	offset, size, ok := page(w, r, PageDefault, PageCap)
	if !ok {
		return
	}
	rows := []map[string]any{}
	for _, it := range items {
		rows = append(rows, map[string]any{"id": it.ID, "kind": it.Kind, "title": it.Title, "year": it.Year})
	}
	writeJSON(w, http.StatusOK, paged(rows, offset, size))
}

// searchAllItems answers raw id lists, one per kind, for a page of the
// matches in kind order.
func (v *V1) searchAllItems(w http.ResponseWriter, r *http.Request) {
	items, ok := v.matches(w, r)
	if !ok {
		return
	}
	offset, size, ok := page(w, r, AllItemsDefault, AllItemsCap)
	if !ok {
		return
	}
	order := map[string]int{}
	for i, k := range Kinds {
		order[k.Kind] = i
	}
	sort.SliceStable(items, func(i, j int) bool {
		if order[items[i].Kind] != order[items[j].Kind] {
			return order[items[i].Kind] < order[items[j].Kind]
		}
		return items[i].ID < items[j].ID
	})
	out := map[string]any{"totalCount": len(items)}
	for _, k := range Kinds {
		out[k.Bucket] = []int{}
	}
	if offset < len(items) {
		for _, it := range items[offset:min(len(items), offset+size)] {
			b := Kinds[order[it.Kind]].Bucket
			out[b] = append(out[b].([]int), it.ID)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

func (v *V1) searchArtists(w http.ResponseWriter, r *http.Request) {
	items, ok := v.matches(w, r)
	if !ok {
		return
	}
	offset, size, ok := page(w, r, PageDefault, PageCap)
	if !ok {
		return
	}
	rows := []map[string]any{}
	for _, it := range items {
		if it.Kind == "artist" {
			rows = append(rows, map[string]any{"id": it.ID, "name": it.Title})
		}
	}
	writeJSON(w, http.StatusOK, paged(rows, offset, size))
}
