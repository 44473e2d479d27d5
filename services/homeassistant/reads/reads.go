// Package reads is the homeassistant service's read-only tools over Home
// Assistant's REST API: entities (filtered, compact, paged), one entity
// with its attributes, a bounded history of a few entities, the logbook,
// automations/scripts/scenes with their last run, a configuration summary
// and the configuration check. Every answer is bounded and says whether it
// is complete.
package reads

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
	"github.com/toolgate/toolgate/services/homeassistant/mask"
)

// Bounds of the read tools.
const (
	DefaultPage      = 50
	MaxPage          = 200
	MaxHistoryIDs    = 10
	MaxHistoryHours  = 168
	MaxLogbookHours  = 72
	DefaultPoints    = 100
	MaxPoints        = 500
	maxAttributes    = 60
	maxAttrString    = 500
	maxAttrJSON      = 2000
	maxIntegrations  = 400
	maxCheckTextSize = 4000
)

// Service holds what the read tools need.
type Service struct {
	ha  *hass.Client
	now func() time.Time
}

// New returns the read tools over ha; now nil means time.Now.
func New(ha *hass.Client, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{ha: ha, now: now}
}

var readAnn = toolkit.Annotations{ReadOnly: true, Idempotent: true}

type (
	entityListArgs struct {
		Domain string `json:"domain,omitempty" jsonschema:"Only this domain (light, sensor, lock, …)." schema:"pattern=^[a-z0-9_]{1,64}$"`
		Area   string `json:"area,omitempty" jsonschema:"Only entities in this area (name or id; needs an admin token)." schema:"minLength=1,maxLength=100"`
		Query  string `json:"query,omitempty" jsonschema:"Only entities whose id or name contains this text." schema:"minLength=1,maxLength=100"`
		Limit  int    `json:"limit,omitempty" schema:"minimum=1,maximum=200"`
		Offset int    `json:"offset,omitempty" schema:"minimum=0,maximum=100000"`
	}
	entityArgs struct {
		EntityID string `json:"entity_id" schema:"pattern=^[a-z0-9_]{1,64}\\.[a-z0-9_]{1,200}$"`
	}
	historyArgs struct {
		EntityIDs []string `json:"entity_ids" jsonschema:"1 to 10 entity ids." schema:"minItems=1,maxItems=10,uniqueItems,items.pattern=^[a-z0-9_]{1,64}\\.[a-z0-9_]{1,200}$"`
		Hours     int      `json:"hours,omitempty" jsonschema:"Window length before end (default 24, at most 168)." schema:"minimum=1,maximum=168"`
		End       string   `json:"end,omitempty" jsonschema:"End of the window, RFC 3339 (default now)." schema:"format=date-time"`
		MaxPoints int      `json:"max_points,omitempty" jsonschema:"Most recent points kept per entity (default 100)." schema:"minimum=1,maximum=500"`
	}
	logbookArgs struct {
		EntityID string `json:"entity_id,omitempty" schema:"pattern=^[a-z0-9_]{1,64}\\.[a-z0-9_]{1,200}$"`
		Hours    int    `json:"hours,omitempty" jsonschema:"Window length before end (default 6, at most 72)." schema:"minimum=1,maximum=72"`
		End      string `json:"end,omitempty" jsonschema:"End of the window, RFC 3339 (default now)." schema:"format=date-time"`
		Limit    int    `json:"limit,omitempty" schema:"minimum=1,maximum=200"`
		Offset   int    `json:"offset,omitempty" schema:"minimum=0,maximum=100000"`
	}
	automationArgs struct {
		Kind   string `json:"kind,omitempty" jsonschema:"What to list (default automation)." schema:"enum=automation|script|scene"`
		Query  string `json:"query,omitempty" jsonschema:"Only those whose id or name contains this text." schema:"minLength=1,maxLength=100"`
		Limit  int    `json:"limit,omitempty" schema:"minimum=1,maximum=200"`
		Offset int    `json:"offset,omitempty" schema:"minimum=0,maximum=100000"`
	}
)

// Tools lists the read tools.
func (s *Service) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		{
			Name: "ha_entity_list", Title: "List entities",
			Description: "List Home Assistant entities (id, name, state, unit, last change), filtered by domain, area or text; paged. Start here to find entity ids.",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.entityList),
		},
		{
			Name: "ha_entity_get", Title: "Get one entity",
			Description: "One entity's state and attributes.",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.entityGet),
		},
		{
			Name: "ha_entity_history", Title: "Entity history",
			Description: "State changes of up to 10 entities over a window of at most 7 days (states and times only).",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.history),
		},
		{
			Name: "ha_logbook", Title: "Logbook",
			Description: "Logbook entries (newest first) over at most 72 hours, of all entities or one; paged.",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.logbook),
		},
		{
			Name: "ha_automation_list", Title: "Automations, scripts, scenes",
			Description: "Automations, scripts or scenes with state, config id and when each last ran; paged.",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.automations),
		},
		{
			Name: "ha_config_summary", Title: "Configuration summary",
			Description: "Home Assistant version, location name, time zone, units, run state and loaded integrations.",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.configSummary),
		},
		{
			Name: "ha_config_check", Title: "Check the configuration",
			Description: "Run Home Assistant's configuration check (changes nothing; needs an admin token) and return its errors and warnings.",
			Annotations: readAnn, Handler: toolkit.ReadFor(s.configCheck),
		},
	}
}

// page is a window into a list.
type page struct {
	Total      int  `json:"total"`
	Offset     int  `json:"offset"`
	Complete   bool `json:"complete"`
	NextOffset *int `json:"next_offset,omitempty"`
}

func paginate[T any](items []T, limit, offset int) ([]T, page) {
	if limit <= 0 {
		limit = DefaultPage
	}
	total := len(items)
	if offset > total {
		offset = total
	}
	end := min(offset+limit, total)
	p := page{Total: total, Offset: offset, Complete: offset == 0 && end == total}
	if end < total {
		p.NextOffset = &end
	}
	return items[offset:end], p
}

// entity is the compact form of one entity.
type entity struct {
	ID      string `json:"entity_id"`
	Name    string `json:"name"`
	State   string `json:"state"`
	Unit    string `json:"unit,omitempty"`
	Changed string `json:"last_changed"`
}

func compact(st hass.State) entity {
	unit, _ := st.Attributes["unit_of_measurement"].(string)
	return entity{ID: st.EntityID, Name: st.Name(), State: st.State, Unit: unit, Changed: st.LastChanged}
}

func (s *Service) entityList(ctx context.Context, in entityListArgs) (any, error) {
	states, err := s.ha.States(ctx)
	if err != nil {
		return nil, err
	}
	var inArea map[string]bool
	if in.Area != "" {
		if inArea, err = s.areaMembers(ctx, in.Area); err != nil {
			return nil, err
		}
	}
	q := strings.ToLower(in.Query)
	var out []entity
	for _, st := range states {
		switch {
		case in.Domain != "" && st.Domain() != in.Domain:
		case inArea != nil && !inArea[st.EntityID]:
		case q != "" && !strings.Contains(strings.ToLower(st.EntityID), q) && !strings.Contains(strings.ToLower(st.Name()), q):
		default:
			out = append(out, compact(st))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	items, p := paginate(out, in.Limit, in.Offset)
	return map[string]any{"entities": nonNil(items), "page": p}, nil
}

// areaMembers resolves an area by id or name (case-insensitive) to the
// entities in it.
func (s *Service) areaMembers(ctx context.Context, area string) (map[string]bool, error) {
	placements, err := s.ha.AreaMap(ctx)
	if err != nil {
		return nil, err
	}
	want := strings.ToLower(strings.TrimSpace(area))
	members := map[string]bool{}
	known := false
	for id, p := range placements {
		if p.AreaID == area || strings.ToLower(p.AreaName) == want {
			members[id] = true
			known = true
		}
	}
	if !known {
		return nil, toolerr.New(toolerr.NotFound, "no entity is in an area with that name or id; list entities without the area filter to see what exists")
	}
	return members, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Service) entityGet(ctx context.Context, in entityArgs) (any, error) {
	st, err := s.ha.State(ctx, in.EntityID)
	if err != nil {
		return nil, err
	}
	attrs, dropped := boundAttributes(st.Attributes)
	out := map[string]any{
		"entity_id": st.EntityID, "name": st.Name(), "state": st.State, "attributes": attrs,
		"last_changed": st.LastChanged, "last_updated": st.LastUpdated,
	}
	if dropped > 0 {
		out["attributes_omitted"] = dropped
	}
	return out, nil
}

// boundAttributes keeps at most maxAttributes attributes, cuts long strings
// and replaces large structures with a note; it returns how many it
// dropped.
func boundAttributes(in map[string]any) (map[string]any, int) {
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := map[string]any{}
	dropped := 0
	for _, k := range keys {
		if len(out) >= maxAttributes {
			dropped++
			continue
		}
		switch v := in[k].(type) {
		case string:
			out[k] = cut(v, maxAttrString)
		case map[string]any, []any:
			raw, _ := json.Marshal(v)
			if len(raw) > maxAttrJSON {
				out[k] = fmt.Sprintf("(%d bytes, omitted)", len(raw))
			} else {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out, dropped
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// window is the bounded interval a history or logbook read covers.
func (s *Service) window(end string, hours, def, max int) (time.Time, time.Time, error) {
	e := s.now().UTC()
	if end != "" {
		t, err := time.Parse(time.RFC3339, end)
		if err != nil {
			return e, e, toolerr.New(toolerr.InvalidArgument, "end must be an RFC 3339 time such as 2026-12-02T18:00:00Z")
		}
		e = t.UTC()
	}
	if hours <= 0 {
		hours = def
	}
	if hours > max {
		return e, e, toolerr.New(toolerr.InvalidArgument, "the window is at most %d hours", max)
	}
	return e.Add(-time.Duration(hours) * time.Hour), e, nil
}

type point struct {
	State string `json:"state"`
	At    string `json:"at"`
}

func (s *Service) history(ctx context.Context, in historyArgs) (any, error) {
	start, end, err := s.window(in.End, in.Hours, 24, MaxHistoryHours)
	if err != nil {
		return nil, err
	}
	maxPoints := in.MaxPoints
	if maxPoints <= 0 {
		maxPoints = DefaultPoints
	}
	raw, err := s.ha.History(ctx, in.EntityIDs, start, end)
	if err != nil {
		return nil, err
	}
	byID := map[string][]point{}
	for _, series := range raw {
		// The first point of a series names the entity; the others of a
		// minimal response do not.
		if len(series) == 0 || !slices.Contains(in.EntityIDs, series[0].EntityID) {
			continue
		}
		id := series[0].EntityID
		for _, p := range series {
			byID[id] = append(byID[id], point{State: p.State, At: p.LastChanged})
		}
	}
	out := make([]map[string]any, 0, len(in.EntityIDs))
	for _, id := range in.EntityIDs {
		pts := byID[id]
		item := map[string]any{"entity_id": id, "points": nonNil(pts), "total": len(pts)}
		if len(pts) > maxPoints {
			item["points"] = pts[len(pts)-maxPoints:]
			item["truncated"] = fmt.Sprintf("only the %d most recent of %d points; narrow the window to see the rest", maxPoints, len(pts))
		}
		if len(pts) == 0 {
			item["note"] = "no recorded states in the window (unknown entity, or excluded from the recorder)"
		}
		out = append(out, item)
	}
	return map[string]any{"start": start.Format(time.RFC3339), "end": end.Format(time.RFC3339), "series": out}, nil
}

func (s *Service) logbook(ctx context.Context, in logbookArgs) (any, error) {
	start, end, err := s.window(in.End, in.Hours, 6, MaxLogbookHours)
	if err != nil {
		return nil, err
	}
	entries, err := s.ha.Logbook(ctx, start, end, in.EntityID)
	if err != nil {
		return nil, err
	}
	slices.Reverse(entries)
	for i := range entries {
		entries[i].Message = cut(entries[i].Message, maxAttrString)
	}
	items, p := paginate(entries, in.Limit, in.Offset)
	return map[string]any{"start": start.Format(time.RFC3339), "end": end.Format(time.RFC3339), "entries": nonNil(items), "page": p}, nil
}

type runnable struct {
	ID            string `json:"entity_id"`
	Name          string `json:"name"`
	State         string `json:"state"`
	ConfigID      string `json:"config_id,omitempty"`
	Mode          string `json:"mode,omitempty"`
	LastTriggered string `json:"last_triggered"`
}

func (s *Service) automations(ctx context.Context, in automationArgs) (any, error) {
	kind := in.Kind
	if kind == "" {
		kind = "automation"
	}
	states, err := s.ha.States(ctx)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(in.Query)
	var out []runnable
	for _, st := range states {
		if st.Domain() != kind {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(st.EntityID), q) && !strings.Contains(strings.ToLower(st.Name()), q) {
			continue
		}
		r := runnable{ID: st.EntityID, Name: st.Name(), State: st.State}
		r.ConfigID, _ = st.Attributes["id"].(string)
		r.Mode, _ = st.Attributes["mode"].(string)
		r.LastTriggered, _ = st.Attributes["last_triggered"].(string)
		if kind == "scene" {
			// A scene's state is the time it was last activated.
			r.LastTriggered, r.State = st.State, "scene"
		}
		if r.LastTriggered == "" || r.LastTriggered == "unknown" {
			r.LastTriggered = "never"
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	items, p := paginate(out, in.Limit, in.Offset)
	return map[string]any{"kind": kind, "items": nonNil(items), "page": p}, nil
}

func (s *Service) configSummary(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	c, err := s.ha.Config(ctx)
	if err != nil {
		return nil, err
	}
	// Components are "light" and "light.hue"; the integrations are the
	// part before the dot.
	seen := map[string]bool{}
	for _, comp := range c.Components {
		d, _, _ := strings.Cut(comp, ".")
		if hass.ValidName(d) {
			seen[d] = true
		}
	}
	integrations := make([]string, 0, len(seen))
	for d := range seen {
		integrations = append(integrations, d)
	}
	sort.Strings(integrations)
	out := map[string]any{
		"version": c.Version, "location_name": c.LocationName, "time_zone": c.TimeZone, "country": c.Country,
		"language": c.Language, "currency": c.Currency, "unit_system": c.UnitSystem, "state": c.State,
		"safe_mode": c.SafeMode, "recovery_mode": c.RecoveryMode, "config_source": c.ConfigSource,
		"integration_count": len(integrations),
	}
	if len(integrations) > maxIntegrations {
		integrations = integrations[:maxIntegrations]
		out["integrations_truncated"] = true
	}
	out["integrations"] = integrations
	return out, nil
}

func (s *Service) configCheck(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	r, err := s.ha.CheckConfig(ctx)
	if err != nil {
		return nil, err
	}
	return CheckAnswer(r), nil
}

// CheckAnswer is how a configuration check is shown: the result and the
// texts with credentials masked (HA quotes configuration values in its
// errors) and bounded.
func CheckAnswer(r hass.CheckResult) map[string]any {
	text := func(p *string) any {
		if p == nil || *p == "" {
			return nil
		}
		return cut(mask.Text(*p), maxCheckTextSize)
	}
	return map[string]any{"result": r.Result, "valid": r.Valid(), "errors": text(r.Errors), "warnings": text(r.Warnings)}
}
