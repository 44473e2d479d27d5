package tools

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

// Page sizes of the /api/v1 contract (the seed's api.paging-zero-based):
// most reads cap pageSize at 100, search_all_items at 1000 with a default
// of 500. The server clamps; the service passes pageNum and pageSize
// through unchanged and reports the effective size.
const (
	pageCap         = 100
	pageDefault     = 50
	allItemsCap     = 1000
	allItemsDefault = 500
)

var readOnly = toolkit.Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}

type (
	idArgs struct {
		ID int `json:"id" schema:"minimum=1"`
	}
	pageArgs struct {
		PageNum  *int `json:"pageNum,omitempty" schema:"minimum=0"`
		PageSize *int `json:"pageSize,omitempty" schema:"minimum=1"`
	}
	idPageArgs struct {
		ID int `json:"id" schema:"minimum=1"`
		pageArgs
	}
	playoutsArgs struct {
		Query string `json:"query,omitempty" schema:"maxLength=200"`
		pageArgs
	}
	playoutItemsArgs struct {
		ID         int   `json:"id" schema:"minimum=1"`
		ShowFiller *bool `json:"showFiller,omitempty"`
		pageArgs
	}
	searchArgs struct {
		Query string `json:"query" schema:"minLength=1,maxLength=1000"`
		pageArgs
	}
	nameArgs struct {
		Name string `json:"name" schema:"minLength=1,maxLength=64"`
	}
)

func itoa(n int) string { return strconv.Itoa(n) }

func readTool[In any](name, description string, fn func(context.Context, In) (any, error)) toolkit.Tool {
	return toolkit.Tool{Name: name, Description: description, Annotations: readOnly, Handler: toolkit.ReadFor(fn)}
}

// Tools lists the tools the server's API supports; the toolkit drops the
// writes unless ERSATZTV_ALLOW_WRITES=true.
func (s *Service) Tools() []toolkit.Tool {
	if s.Mode() == client.Legacy {
		return append(s.legacyReads(), s.legacyWrites()...)
	}
	return append(s.v1Reads(), s.v1Writes()...)
}

func (s *Service) v1Reads() []toolkit.Tool {
	return []toolkit.Tool{
		readTool("ersatztv_list_channels", "List channels (id, number, name, profile, mode).", s.list("channels", "channels")),
		readTool("ersatztv_get_channel", "One channel with every field: enums by name, graphicsElementIds.", s.one("channels")),
		readTool("ersatztv_list_collections", "List collections. Paged: 0-based, pageSize max 100.", s.paged(pageDefault, pageCap, "collections")),
		readTool("ersatztv_get_collection", "One collection.", s.one("collections")),
		readTool("ersatztv_get_collection_items", "A collection's items (mediaItemId, customIndex) and its etag. Paged: 0-based, pageSize max 100.", s.pagedItems("collections", "items")),
		readTool("ersatztv_list_smart_collections", "List smart collections (saved searches).", s.list("smartCollections", "smart-collections")),
		readTool("ersatztv_get_smart_collection", "One smart collection.", s.one("smart-collections")),
		readTool("ersatztv_list_schedules", "List schedules.", s.list("schedules", "schedules")),
		readTool("ersatztv_get_schedule", "One schedule.", s.one("schedules")),
		readTool("ersatztv_get_schedule_items", "A schedule's items and its etag.", s.items("schedules", "items")),
		readTool("ersatztv_list_playouts", "List playouts; query filters by channel or schedule. Row id is the playout, channelId its channel. Paged: 0-based, pageSize max 100.", s.playouts),
		readTool("ersatztv_get_playout", "One playout.", s.one("playouts")),
		readTool("ersatztv_get_playout_items", "A playout's scheduled items; showFiller adds filler. Paged: 0-based, pageSize max 100.", s.playoutItems),
		readTool("ersatztv_list_ffmpeg_profiles", "List FFmpeg profiles.", s.list("profiles", "ffmpeg", "profiles")),
		readTool("ersatztv_get_ffmpeg_profile", "One FFmpeg profile.", s.one("ffmpeg", "profiles")),
		readTool("ersatztv_get_resolution_by_name", "A resolution by name, e.g. 1920x1080.", s.resolution),
		readTool("ersatztv_list_sessions", "Running streaming sessions.", s.list("sessions", "sessions")),
		readTool("ersatztv_get_version", "ErsatzTV's version and the API this service uses (v1 or legacy).", s.getVersion),
		readTool("ersatztv_list_media_sources", "List media sources (Local, Jellyfin, …).", s.list("mediaSources", "media-sources")),
		readTool("ersatztv_get_jellyfin_libraries", "A Jellyfin source's libraries and whether each syncs.", s.jellyfinLibraries),
		readTool("ersatztv_list_local_libraries", "List local libraries.", s.list("libraries", "libraries", "local")),
		readTool("ersatztv_get_library_scan_status", "Libraries being scanned, with progress.", s.list("scanning", "libraries", "scan-status")),
		readTool("ersatztv_search", "Search media with a Lucene query. Paged: 0-based, pageSize max 100.", s.search("search")),
		readTool("ersatztv_search_all_items", "Id lists per kind for a Lucene query, for add_collection_items. Paged: 0-based, pageSize default 500, max 1000.", s.searchAllItems),
		readTool("ersatztv_search_artists", "Search artists by name. Paged: 0-based, pageSize max 100.", s.search("search", "artists")),
	}
}

func (s *Service) legacyReads() []toolkit.Tool {
	return []toolkit.Tool{
		readTool("ersatztv_list_channels", "List channels (id, number, name, profile, language, mode). Act on a channel by its number.", s.list("channels", "channels")),
		readTool("ersatztv_list_smart_collections", "List smart collections (saved searches).", s.list("smartCollections", "collections", "smart")),
		readTool("ersatztv_list_ffmpeg_profiles", "List FFmpeg profiles.", s.list("profiles", "ffmpeg", "profiles")),
		readTool("ersatztv_get_resolution_by_name", "A resolution by name, e.g. 1920x1080.", s.resolution),
		readTool("ersatztv_list_sessions", "Running streaming sessions.", s.list("sessions", "sessions")),
		readTool("ersatztv_get_version", "ErsatzTV's version and the API this service uses (v1 or legacy).", s.getVersion),
	}
}

// list reads a whole list and names it key (a tool result is an object).
func (s *Service) list(key string, path ...string) func(context.Context, toolkit.NoArgs) (any, error) {
	return func(ctx context.Context, _ toolkit.NoArgs) (any, error) {
		v, _, err := s.c.Get(ctx, path, nil)
		if err != nil {
			return nil, err
		}
		return map[string]any{key: orEmpty(v)}, nil
	}
}

// one reads path/{id}.
func (s *Service) one(path ...string) func(context.Context, idArgs) (any, error) {
	return func(ctx context.Context, in idArgs) (any, error) {
		v, _, err := s.c.Get(ctx, append(path, itoa(in.ID)), nil)
		return v, err
	}
}

// items reads {kind}/{id}/{sub}, a list that carries an ETag.
func (s *Service) items(kind, sub string) func(context.Context, idArgs) (any, error) {
	return func(ctx context.Context, in idArgs) (any, error) {
		v, resp, err := s.c.Get(ctx, []string{kind, itoa(in.ID), sub}, nil)
		if err != nil {
			return nil, err
		}
		return withETag(map[string]any{"items": orEmpty(v)}, resp), nil
	}
}

func (s *Service) paged(def, cap_ int, path ...string) func(context.Context, pageArgs) (any, error) {
	return func(ctx context.Context, in pageArgs) (any, error) {
		out, _, err := s.page(ctx, path, nil, in, def, cap_)
		return out, err
	}
}

func (s *Service) pagedItems(kind, sub string) func(context.Context, idPageArgs) (any, error) {
	return func(ctx context.Context, in idPageArgs) (any, error) {
		out, resp, err := s.page(ctx, []string{kind, itoa(in.ID), sub}, nil, in.pageArgs, pageDefault, pageCap)
		if err != nil {
			return nil, err
		}
		return withETag(out, resp), nil
	}
}

func (s *Service) playouts(ctx context.Context, in playoutsArgs) (any, error) {
	q := url.Values{}
	if in.Query != "" {
		q.Set("query", in.Query)
	}
	out, _, err := s.page(ctx, []string{"playouts"}, q, in.pageArgs, pageDefault, pageCap)
	return out, err
}

func (s *Service) playoutItems(ctx context.Context, in playoutItemsArgs) (any, error) {
	q := url.Values{}
	if in.ShowFiller != nil {
		q.Set("showFiller", strconv.FormatBool(*in.ShowFiller))
	}
	out, _, err := s.page(ctx, []string{"playouts", itoa(in.ID), "items"}, q, in.pageArgs, pageDefault, pageCap)
	return out, err
}

func (s *Service) search(path ...string) func(context.Context, searchArgs) (any, error) {
	return func(ctx context.Context, in searchArgs) (any, error) {
		out, _, err := s.page(ctx, path, url.Values{"query": {in.Query}}, in.pageArgs, pageDefault, pageCap)
		return out, err
	}
}

func (s *Service) searchAllItems(ctx context.Context, in searchArgs) (any, error) {
	out, _, err := s.page(ctx, []string{"search", "all-items"}, url.Values{"query": {in.Query}}, in.pageArgs, allItemsDefault, allItemsCap)
	return out, err
}

func (s *Service) resolution(ctx context.Context, in nameArgs) (any, error) {
	v, _, err := s.c.Get(ctx, []string{"ffmpeg", "resolution", "by-name", in.Name}, nil)
	return v, err
}

func (s *Service) jellyfinLibraries(ctx context.Context, in idArgs) (any, error) {
	v, _, err := s.c.Get(ctx, []string{"media-sources", "jellyfin", itoa(in.ID), "libraries"}, nil)
	if err != nil {
		return nil, err
	}
	return map[string]any{"libraries": orEmpty(v)}, nil
}

func (s *Service) getVersion(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	v, err := s.c.Version(ctx)
	if err != nil {
		return nil, err
	}
	source := "detected at start"
	if s.set.Mode != ModeAuto && s.set.Mode != "" {
		source = EnvMode
	}
	out := map[string]any{"mode": v.Mode, "api": v.API, "appVersion": v.AppVersion, "modeFrom": source}
	if v.APIVersion != nil {
		out["apiVersion"] = v.APIVersion
	}
	return out, nil
}

// page reads one page, passing pageNum and pageSize through unchanged,
// and adds what the caller needs to page on: the effective page size (the
// server clamps to cap), the page number and whether more pages follow.
func (s *Service) page(ctx context.Context, path []string, q url.Values, in pageArgs, def, cap_ int) (map[string]any, *client.Response, error) {
	if q == nil {
		q = url.Values{}
	}
	num, size := 0, def
	if in.PageNum != nil {
		num = *in.PageNum
		q.Set("pageNum", itoa(num))
	}
	if in.PageSize != nil {
		size = min(*in.PageSize, cap_)
		q.Set("pageSize", itoa(*in.PageSize))
	}
	v, resp, err := s.c.Get(ctx, path, q)
	if err != nil {
		return nil, nil, err
	}
	out, ok := v.(map[string]any)
	if !ok {
		return nil, nil, toolerr.New(toolerr.UpstreamUnavailable, "ErsatzTV answered a paged read without the expected {totalCount, page} object")
	}
	total, err := number(out["totalCount"])
	if err != nil {
		return nil, nil, err
	}
	returned := 0
	if list, ok := out["page"].([]any); ok {
		returned = len(list)
	} else {
		// search_all_items: one id list per kind.
		for _, v := range out {
			if list, ok := v.([]any); ok {
				returned += len(list)
			}
		}
	}
	out["pageNum"], out["pageSize"] = num, size
	out["hasMore"] = int64(num)*int64(size)+int64(returned) < total
	return out, resp, nil
}

func number(v any) (int64, error) {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
	}
	return 0, toolerr.New(toolerr.UpstreamUnavailable, "ErsatzTV answered a paged read without a numeric totalCount")
}

func withETag(out map[string]any, resp *client.Response) map[string]any {
	if resp != nil && resp.ETag != "" {
		out["etag"] = resp.ETag
	}
	return out
}

// orEmpty makes a missing list an empty one, so a result says "none"
// rather than null.
func orEmpty(v any) any {
	if v == nil {
		return []any{}
	}
	return v
}
