package tools

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/frigate/client"
)

// filterArgs are the typed filters list_events and search_events share.
type filterArgs struct {
	After   float64  `json:"after" jsonschema:"Window start, UTC Unix SECONDS (not milliseconds); events starting after it." schema:"minimum=0"`
	Before  float64  `json:"before" jsonschema:"Window end, UTC Unix SECONDS; events starting before it. The window is at most FRIGATE_EVENTS_MAX_WINDOW_SECONDS (default 24 h)." schema:"minimum=0"`
	Cameras []string `json:"cameras,omitempty" jsonschema:"Only these cameras (default: every camera in scope)." schema:"maxItems=32,uniqueItems,items.pattern=^[A-Za-z0-9_-]{1,64}$"`
	Labels  []string `json:"labels,omitempty" jsonschema:"Only these object labels, e.g. person, car." schema:"maxItems=32,uniqueItems,items.pattern=^[^\\x00-\\x1f\\x7f,]{1,64}$"`
	Zones   []string `json:"zones,omitempty" jsonschema:"Only events that entered any of these zones." schema:"maxItems=32,uniqueItems,items.pattern=^[A-Za-z0-9_-]{1,64}$"`
	Limit   int      `json:"limit,omitempty" jsonschema:"Page size (default FRIGATE_EVENTS_PAGE_SIZE, 50)." schema:"minimum=1,maximum=200"`
}

type listArgs struct {
	filterArgs
	SubLabels   []string `json:"subLabels,omitempty" jsonschema:"Only these sub-labels (e.g. recognised names)." schema:"maxItems=32,uniqueItems,items.pattern=^[^\\x00-\\x1f\\x7f,]{1,64}$"`
	HasClip     *bool    `json:"hasClip,omitempty" jsonschema:"Only events with (true) or without (false) a clip."`
	HasSnapshot *bool    `json:"hasSnapshot,omitempty" jsonschema:"Only events with (true) or without (false) a snapshot."`
	InProgress  *bool    `json:"inProgress,omitempty" jsonschema:"Only events still in progress (true) or ended (false)."`
	MinScore    *float64 `json:"minScore,omitempty" jsonschema:"Minimum score, 0-1 (the event's score: its snapshot frame's, not topScore)." schema:"minimum=0,maximum=1"`
	MaxScore    *float64 `json:"maxScore,omitempty" jsonschema:"Maximum score, 0-1 (as minScore)." schema:"minimum=0,maximum=1"`
	Sort        string   `json:"sort,omitempty" jsonschema:"Ordering (default date_desc; score_* by score). Only date orderings can be continued page by page." schema:"enum=date_desc|date_asc|score_desc|score_asc"`
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"What to look for, in words." schema:"minLength=1,maxLength=500"`
	filterArgs
	SearchType string `json:"searchType,omitempty" jsonschema:"Match against object thumbnails (default), generated descriptions, or both." schema:"enum=thumbnail|description|both"`
}

type eventArgs struct {
	EventID string `json:"eventId" jsonschema:"The event id from frigate_list_events or frigate_search_events." schema:"pattern=^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"`
}

// Page describes one page of events.
type Page struct {
	Limit             int    `json:"limit"`
	Returned          int    `json:"returned"`
	Ordering          string `json:"ordering"`
	DuplicatesRemoved int    `json:"duplicatesRemoved"`
	// NextBefore / NextAfter continue a date-ordered listing: call again
	// with before (date_desc) or after (date_asc) set to it.
	NextBefore *float64 `json:"nextBefore,omitempty"`
	NextAfter  *float64 `json:"nextAfter,omitempty"`
}

// Completeness says whether the page is everything in the window.
type Completeness struct {
	Complete bool   `json:"complete"`
	Status   string `json:"status"`
	Warning  string `json:"warning,omitempty"`
}

// prepare validates the shared filters and builds the shared query.
func (s *Service) prepare(f filterArgs) (Window, url.Values, int, error) {
	w, err := s.window(f.After, f.Before)
	if err != nil {
		return Window{}, nil, 0, err
	}
	cams, err := s.scope.cameraFilter(f.Cameras)
	if err != nil {
		return Window{}, nil, 0, err
	}
	limit := f.Limit
	if limit == 0 {
		limit = s.set.PageSize
	}
	q := url.Values{}
	q.Set("after", formatSeconds(w.After))
	q.Set("before", formatSeconds(w.Before))
	// Thumbnails are base64 images inside every event: never fetched.
	q.Set("include_thumbnails", "0")
	if len(cams) > 0 {
		q.Set("cameras", strings.Join(cams, ","))
	}
	if len(f.Labels) > 0 {
		q.Set("labels", strings.Join(f.Labels, ","))
	}
	if len(f.Zones) > 0 {
		q.Set("zones", strings.Join(f.Zones, ","))
	}
	return w, q, limit, nil
}

func formatSeconds(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// decodeEvents validates an upstream event list, drops events outside the
// scope (the query already asked for in-scope cameras only) and removes
// duplicate identifiers.
func (s *Service) decodeEvents(body []byte) ([]Event, int, error) {
	out, dups, _, err := s.decodeRows(body)
	return out, dups, err
}

// decodeRows is decodeEvents that also returns how many rows Frigate
// sent, which its limit counted.
func (s *Service) decodeRows(body []byte) ([]Event, int, int, error) {
	var raw []rawEvent
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, 0, 0, malformed("event")
	}
	seen := map[string]bool{}
	out := make([]Event, 0, len(raw))
	dups := 0
	for _, r := range raw {
		e, err := r.toEvent()
		if err != nil {
			return nil, 0, 0, err
		}
		if !s.scope.Allows(e.Camera) {
			continue
		}
		if seen[e.ID] {
			dups++
			continue
		}
		seen[e.ID] = true
		out = append(out, e)
	}
	return out, dups, len(raw), nil
}

func (s *Service) listEvents(ctx context.Context, r *client.Read, in listArgs) (any, error) {
	if in.MinScore != nil && in.MaxScore != nil && *in.MinScore > *in.MaxScore {
		return nil, toolerr.New(toolerr.InvalidArgument, "minScore must not be greater than maxScore")
	}
	w, q, limit, err := s.prepare(in.filterArgs)
	if err != nil {
		return nil, err
	}
	sortBy := in.Sort
	if sortBy == "" {
		sortBy = "date_desc"
	}
	q.Set("sort", sortBy)
	// One more than the page: whether it arrives tells a full page that
	// ends the window from one that does not.
	q.Set("limit", strconv.Itoa(limit+1))
	if len(in.SubLabels) > 0 {
		q.Set("sub_labels", strings.Join(in.SubLabels, ","))
	}
	for name, b := range map[string]*bool{"has_clip": in.HasClip, "has_snapshot": in.HasSnapshot, "in_progress": in.InProgress} {
		if b != nil {
			q.Set(name, map[bool]string{true: "1", false: "0"}[*b])
		}
	}
	if in.MinScore != nil {
		q.Set("min_score", formatSeconds(*in.MinScore))
	}
	if in.MaxScore != nil {
		q.Set("max_score", formatSeconds(*in.MaxScore))
	}
	resp, err := r.Get(ctx, "/events", q, "application/json")
	if err != nil {
		return nil, err
	}
	if err := client.StatusErr(resp); err != nil {
		return nil, err
	}
	events, dups, err := s.decodeEvents(resp.Body)
	if err != nil {
		return nil, err
	}
	page := Page{Limit: limit, Ordering: sortBy, DuplicatesRemoved: dups}
	comp := Completeness{Complete: true, Status: "complete"}
	if len(events) > limit {
		probe := events[limit]
		events = events[:limit]
		comp = Completeness{Status: "truncated", Warning: "more events match this window and filters than this page holds; this page is not a total"}
		if sortBy == "date_desc" || sortBy == "date_asc" {
			events, page.NextBefore, page.NextAfter = cursor(events, probe, sortBy)
			comp.Warning += "; call again with the page's nextBefore/nextAfter to continue"
		} else {
			comp.Warning += "; score ordering cannot be continued: narrow the window or the filters"
		}
	}
	page.Returned = len(events)
	return map[string]any{"events": events, "page": page, "interval": w, "completeness": comp, "scope": s.scope.Name()}, nil
}

// cursor computes where the next page starts. Frigate's after/before are
// strict, so events sharing the boundary start time are moved to the next
// page and the cursor is nudged one float step past the boundary, so
// nothing is skipped.
func cursor(events []Event, probe Event, sortBy string) ([]Event, *float64, *float64) {
	boundary := events[len(events)-1].StartTime
	next := boundary
	if probe.StartTime == boundary {
		kept := events
		for len(kept) > 0 && kept[len(kept)-1].StartTime == boundary {
			kept = kept[:len(kept)-1]
		}
		// A page made only of one start time cannot move past it; keep it
		// rather than loop forever on an empty page.
		if len(kept) > 0 {
			events = kept
			if sortBy == "date_desc" {
				next = math.Nextafter(boundary, math.Inf(1))
			} else {
				next = math.Nextafter(boundary, math.Inf(-1))
			}
		}
	}
	if sortBy == "date_desc" {
		return events, &next, nil
	}
	return events, nil, &next
}

func (s *Service) getEvent(ctx context.Context, r *client.Read, in eventArgs) (any, error) {
	e, err := s.event(ctx, r, in.EventID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"event": e}, nil
}

// errNoEvent answers both a missing event and one on a camera outside the
// scope, so a client cannot probe which ids exist beyond its cameras.
var errNoEvent = toolerr.New(toolerr.NotFound, "no event with that id among the cameras this service may show")

// event reads one event and enforces the camera scope on it.
func (s *Service) event(ctx context.Context, r *client.Read, id string) (Event, error) {
	if !eventID.MatchString(id) {
		return Event{}, toolerr.New(toolerr.InvalidArgument, "eventId must be a Frigate event id (letters, digits, '.', '_' and '-', at most 64)")
	}
	path, err := upstream.Path("events", id)
	if err != nil {
		return Event{}, err
	}
	resp, err := r.Get(ctx, path, nil, "application/json")
	if toolerr.CodeOf(err) == toolerr.Forbidden {
		// From 0.17 Frigate answers 403 for an event of a camera the
		// account's role may not see (require_camera_access), which would
		// tell that the id exists; the service cannot show it either.
		return Event{}, errNoEvent
	}
	if err != nil {
		return Event{}, err
	}
	if resp.Status == http.StatusNotFound {
		return Event{}, errNoEvent
	}
	if err := client.StatusErr(resp); err != nil {
		return Event{}, err
	}
	var raw rawEvent
	if err := json.Unmarshal(resp.Body, &raw); err != nil {
		return Event{}, malformed("event")
	}
	e, err := raw.toEvent()
	if err != nil {
		return Event{}, err
	}
	if e.ID != id {
		return Event{}, malformed("event")
	}
	if !s.scope.Allows(e.Camera) {
		// Nothing about the event leaves, not even that it exists: the
		// answer is the one for a missing id, byte for byte.
		return Event{}, errNoEvent
	}
	return e, nil
}

func (s *Service) searchEvents(ctx context.Context, r *client.Read, in searchArgs) (any, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "query must not be blank")
	}
	w, q, limit, err := s.prepare(in.filterArgs)
	if err != nil {
		return nil, err
	}
	searchType := in.SearchType
	if searchType == "" {
		searchType = "thumbnail"
	}
	upstreamType := map[string]string{"thumbnail": "thumbnail", "description": "description", "both": "thumbnail,description"}[searchType]
	if upstreamType == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "searchType must be thumbnail, description or both")
	}
	q.Set("query", in.Query)
	q.Set("search_type", upstreamType)
	q.Set("limit", strconv.Itoa(limit))
	resp, err := r.Get(ctx, "/events/search", q, "application/json")
	if err != nil {
		return nil, err
	}
	base := map[string]any{"interval": w, "scope": s.scope.Name(), "searchType": searchType}
	switch {
	case resp.Status == http.StatusNotFound:
		s.semantic.Store("unsupported")
		base["semanticSearch"] = "unsupported"
		base["completeness"] = Completeness{Status: "unavailable", Warning: "this Frigate release has no semantic search endpoint; use frigate_list_events"}
		return base, nil
	case resp.Status == http.StatusBadRequest && reportsDisabled(resp.Body):
		s.semantic.Store("disabled")
		base["semanticSearch"] = "disabled"
		base["completeness"] = Completeness{Status: "unavailable", Warning: "semantic search is disabled in Frigate (semantic_search.enabled); use frigate_list_events"}
		return base, nil
	}
	if err := client.StatusErr(resp); err != nil {
		return nil, err
	}
	events, dups, rows, err := s.decodeRows(resp.Body)
	if err != nil {
		return nil, err
	}
	s.semantic.Store("supported")
	sort.SliceStable(events, func(i, j int) bool { return dist(events[i]) < dist(events[j]) })
	comp := Completeness{Status: "nearest_matches", Warning: nearestWarning}
	if len(events) > limit {
		events = events[:limit]
	}
	// Frigate's limit counts rows, and its search joins each event with
	// every review segment that lists it: one event can fill several rows,
	// so a full page of rows is full even when fewer events remain.
	if len(events) >= limit || rows >= limit {
		comp = Completeness{Status: "truncated", Warning: "the page is full: more matches may exist; narrow the window or the filters. " + nearestWarning}
	}
	base["semanticSearch"] = "supported"
	base["events"] = events
	base["page"] = Page{Limit: limit, Returned: len(events), Ordering: "search_distance_asc", DuplicatesRemoved: dups}
	base["completeness"] = comp
	base["relevanceNote"] = "searchDistance is a distance (lower is closer), not a confidence"
	return base, nil
}

// nearestWarning says how Frigate searches (frigate/api/event.py
// events_search, frigate/embeddings/__init__.py): it takes the 100 nearest
// events per search type over all cameras and all time, and only then
// applies the window and the filters.
const nearestWarning = "Frigate's semantic search picks the 100 nearest events over all cameras and all time first and applies the window and filters to those only, " +
	"so a narrow window or filter can return few or no events although matching ones exist; use frigate_list_events to enumerate a window"

func dist(e Event) float64 {
	if e.SearchDistance == nil {
		return math.Inf(1)
	}
	return *e.SearchDistance
}

// reportsDisabled recognises Frigate's "Semantic search is not enabled"
// answer. The body is only inspected, never returned.
func reportsDisabled(body []byte) bool {
	var msg struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return false
	}
	m := strings.ToLower(msg.Message)
	return strings.Contains(m, "semantic search") && strings.Contains(m, "not enabled")
}
