package tools

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/tuliprox/client"
)

// Tool names: the seed's, with the service's prefix.
const (
	ToolStatus         = "tuliprox_get_status"
	ToolStreams        = "tuliprox_list_active_streams"
	ToolConfig         = "tuliprox_get_config"
	ToolUpdateStatus   = "tuliprox_get_playlist_update_status"
	ToolHistory        = "tuliprox_query_stream_history"
	ToolHistorySummary = "tuliprox_get_stream_history_summary"
	ToolQoSList        = "tuliprox_list_qos_snapshots"
	ToolQoS            = "tuliprox_get_qos_snapshot"
	ToolEventStats     = "tuliprox_get_event_stats"
	ToolIPInfo         = "tuliprox_get_ip_info"
	ToolSources        = "tuliprox_list_playlist_sources"
	ToolItems          = "tuliprox_query_playlist_items"
	ToolEPGChannels    = "tuliprox_query_target_epg_channels"
	ToolEPGChannel     = "tuliprox_get_target_epg_channel"
	ToolUpdatePlaylist = "tuliprox_update_playlists"
	ToolUpdateGeoIP    = "tuliprox_update_geoip"
)

// Permissions of the REST routes (groups.txt names).
const (
	permSystemRead    = "system.read"
	permSystemWrite   = "system.write"
	permPlaylistRead  = "playlist.read"
	permPlaylistWrite = "playlist.write"
	permConfig        = "one of config.read, source.read, user.read, user.write, playlist.read, playlist.write"
)

// Features whose absence Tuliprox answers with 503.
const (
	featureHistory = "stream history (reverse_proxy.stream_history)"
	featureQoS     = "QoS aggregation (qos_aggregation)"
)

type historyArgs struct {
	From        string   `json:"from,omitempty" jsonschema:"From: YYYY-MM-DD or a date-time." schema:"maxLength=35,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]{5,18}(Z|[+-][0-9:]{4,5})?)?$"`
	To          string   `json:"to,omitempty" jsonschema:"To: YYYY-MM-DD or a date-time." schema:"maxLength=35,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]{5,18}(Z|[+-][0-9:]{4,5})?)?$"`
	Page        int      `json:"page,omitempty" schema:"minimum=1,maximum=100000"`
	PageSize    int      `json:"page_size,omitempty" schema:"enum=25|50|100|200"`
	Search      string   `json:"search,omitempty" schema:"maxLength=200"`
	SearchMode  string   `json:"search_mode,omitempty" schema:"enum=text|regex"`
	SearchField []string `json:"search_field,omitempty" jsonschema:"Record fields to search." schema:"maxItems=13,uniqueItems,items.enum=api_username|provider_name|input_name|title|group|country|user_agent|source_addr|item_type|event_type|cluster|stream_identity_key|disconnect_reason"`
}

type summaryArgs struct {
	From         string `json:"from,omitempty" jsonschema:"From: YYYY-MM-DD or a date-time." schema:"maxLength=35,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]{5,18}(Z|[+-][0-9:]{4,5})?)?$"`
	To           string `json:"to,omitempty" jsonschema:"To: YYYY-MM-DD or a date-time." schema:"maxLength=35,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]{5,18}(Z|[+-][0-9:]{4,5})?)?$"`
	ProviderName string `json:"provider_name,omitempty" schema:"maxLength=200"`
	InputName    string `json:"input_name,omitempty" schema:"maxLength=200"`
	APIUsername  string `json:"api_username,omitempty" schema:"maxLength=200"`
	ItemType     string `json:"item_type,omitempty" schema:"enum=live|video|series|series_info|catchup"`
	EventType    string `json:"event_type,omitempty" schema:"enum=connect|connect_failed|disconnect"`
}

type qosListArgs struct {
	Limit             int    `json:"limit,omitempty" jsonschema:"Default 100." schema:"minimum=1,maximum=1000"`
	StreamIdentityKey string `json:"stream_identity_key,omitempty" schema:"maxLength=200"`
	InputName         string `json:"input_name,omitempty" schema:"maxLength=200"`
	ProviderName      string `json:"provider_name,omitempty" schema:"maxLength=200"`
	ItemType          string `json:"item_type,omitempty" schema:"enum=live|video|series|series_info|catchup"`
	TargetName        string `json:"target_name,omitempty" schema:"maxLength=200"`
}

type qosArgs struct {
	StreamIdentityKey string `json:"stream_identity_key" schema:"minLength=1,maxLength=200"`
}

type itemsArgs struct {
	Target      string   `json:"target,omitempty" jsonschema:"Target name; exactly one of target/input." schema:"minLength=1,maxLength=200"`
	Input       string   `json:"input,omitempty" jsonschema:"Input name." schema:"minLength=1,maxLength=200"`
	Cluster     string   `json:"cluster" schema:"enum=live|video|series"`
	Offset      int      `json:"offset,omitempty" schema:"minimum=0,maximum=10000000"`
	Limit       int      `json:"limit,omitempty" jsonschema:"Default 50, clamped to 500." schema:"minimum=1,maximum=100000"`
	Search      string   `json:"search,omitempty" jsonschema:"Case-insensitive substring." schema:"maxLength=200"`
	SearchField []string `json:"search_field,omitempty" jsonschema:"Default name, title, group." schema:"maxItems=6,uniqueItems,items.enum=name|title|group|epg_channel_id|provider_id|input_name"`
	Group       string   `json:"group,omitempty" jsonschema:"Exact group name." schema:"maxLength=200"`
	Fields      []string `json:"fields,omitempty" jsonschema:"Default: the first ten." schema:"maxItems=19,uniqueItems,items.enum=virtual_id|provider_id|name|title|group|item_type|cluster|epg_channel_id|category_id|channel_no|logo|logo_small|parent_code|rec|input_name|input_stream_id|source_ordinal|additional_properties|epg_status"`
	EPGStatus   []string `json:"epg_status,omitempty" jsonschema:"Targets only; OR." schema:"maxItems=3,uniqueItems,items.enum=missing_id|unmatched|matched"`
}

type epgChannelsArgs struct {
	Target string   `json:"target" schema:"minLength=1,maxLength=200"`
	Output string   `json:"output,omitempty" jsonschema:"Default: the first output with an EPG database." schema:"enum=xtream|m3u"`
	Offset int      `json:"offset,omitempty" schema:"minimum=0,maximum=10000000"`
	Limit  int      `json:"limit,omitempty" jsonschema:"Default 50, clamped to 500." schema:"minimum=1,maximum=100000"`
	Search string   `json:"search,omitempty" jsonschema:"Id or title substring." schema:"maxLength=200"`
	Issue  []string `json:"issue,omitempty" jsonschema:"OR." schema:"maxItems=5,uniqueItems,items.enum=no_programmes|expired|not_current|no_title|unreferenced"`
}

type epgChannelArgs struct {
	Target    string `json:"target" schema:"minLength=1,maxLength=200"`
	ChannelID string `json:"channel_id" jsonschema:"Exact EPG id." schema:"minLength=1,maxLength=200"`
	Output    string `json:"output,omitempty" schema:"enum=xtream|m3u"`
	From      string `json:"from,omitempty" jsonschema:"RFC 3339; default now." schema:"maxLength=35,format=date-time"`
	To        string `json:"to,omitempty" jsonschema:"RFC 3339; default from + 24 h." schema:"maxLength=35,format=date-time"`
	Limit     int    `json:"limit,omitempty" jsonschema:"Default 100, clamped to 1000." schema:"minimum=1,maximum=100000"`
}

// Tools returns the service's tools; the two writes exist only with
// TULIPROX_ALLOW_WRITES (the toolkit drops them otherwise).
func (s *Service) Tools() []toolkit.Tool {
	ro := toolkit.Annotations{ReadOnly: true, Idempotent: true}
	return []toolkit.Tool{
		{Name: ToolStatus, Title: "Tuliprox status",
			Description: "Version, server time, cache, counts of active users, connections and streams per provider. Needs system.read.",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) { return s.status(ctx) })},
		{Name: ToolStreams, Title: "Active streams",
			Description: "Streams playing now: channel, provider, user agent. Shows Tuliprox user names and client IP addresses. Needs system.read.",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) {
				return s.list(ctx, client.Call{Route: []string{"streams"}, Permission: permSystemRead}, "streams")
			})},
		{Name: ToolConfig, Title: "Tuliprox configuration",
			Description: "The configuration the user may read, with passwords, tokens, user names and every URL withheld. Can be large.",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) { return s.config(ctx) })},
		{Name: ToolUpdateStatus, Title: "Playlist update status",
			Description: "Whether a playlist update is queued or running, and the last run. Needs playlist.read.",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) {
				return s.object(ctx, client.Call{Route: []string{"playlist", "update", "status"}, Permission: permPlaylistRead, Needs: needsSeedAPI})
			})},
		{Name: ToolHistory, Title: "Stream history",
			Description: "Recorded stream sessions (connect/disconnect), paged. Shows Tuliprox user names and client IP addresses. Needs stream history on.",
			Annotations: ro, Handler: toolkit.ReadFor(s.history)},
		{Name: ToolHistorySummary, Title: "Stream history summary",
			Description: "Sessions, bytes and latency per provider; filters by Tuliprox user name and more. Needs stream history on.",
			Annotations: ro, Handler: toolkit.ReadFor(s.historySummary)},
		{Name: ToolQoSList, Title: "QoS snapshots",
			Description: "Stream quality snapshots, best score first. Needs qos_aggregation on.",
			Annotations: ro, Handler: toolkit.ReadFor(s.qosList)},
		{Name: ToolQoS, Title: "One QoS snapshot",
			Description: "The QoS snapshot of one stream identity key (from tuliprox_list_qos_snapshots).",
			Annotations: ro, Handler: toolkit.ReadFor(s.qos)},
		{Name: ToolEventStats, Title: "Event statistics",
			Description: "Counts of Tuliprox events (sign-ins, throttling, updates, provider failures).",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) {
				return s.object(ctx, client.Call{Route: []string{"events", "stats"}, Permission: permSystemRead, Needs: needsSeedAPI})
			})},
		{Name: ToolIPInfo, Title: "Public IP",
			Description: "Tuliprox's public IPv4 and IPv6 (its IP check).",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) {
				return s.object(ctx, client.Call{Route: []string{"ipinfo"}, Permission: permSystemRead,
					BadRequest: "Tuliprox's IP check is not configured (ipcheck)"})
			})},
		{Name: ToolSources, Title: "Playlist sources",
			Description: "Target and input names with outputs, clusters and whether each output has an EPG database. Start here.",
			Annotations: ro, Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (map[string]any, error) {
				return s.object(ctx, client.Call{Route: []string{"playlist", "sources"}, Permission: permPlaylistRead, Needs: needsSeedAPI})
			})},
		{Name: ToolItems, Title: "Stored playlist items",
			Description: "Records of one target or input, paged and filtered, with selectable fields and EPG status. Reads stored data only.",
			Annotations: ro, Handler: toolkit.ReadFor(s.items)},
		{Name: ToolEPGChannels, Title: "EPG channels of a target",
			Description: "Channels of a target's processed EPG: programme count, coverage, use by the playlist; filter by issue.",
			Annotations: ro, Handler: toolkit.ReadFor(s.epgChannels)},
		{Name: ToolEPGChannel, Title: "Programmes of an EPG channel",
			Description: "Programmes of one EPG channel in a time window (default the next 24 h).",
			Annotations: ro, Handler: toolkit.ReadFor(s.epgChannel)},
		s.updatePlaylistsTool(),
		s.updateGeoIPTool(),
	}
}

// result finishes a decoded answer: an object stays, a list is wrapped
// with its count, and URL members and path credentials go.
func result(v any, listKey string) map[string]any {
	v = scrubResult(v)
	switch t := v.(type) {
	case map[string]any:
		return t
	case []any:
		return map[string]any{listKey: t, "count": len(t)}
	}
	return map[string]any{"value": v}
}

func (s *Service) object(ctx context.Context, call client.Call) (map[string]any, error) {
	return s.list(ctx, call, "items")
}

func (s *Service) list(ctx context.Context, call client.Call, key string) (map[string]any, error) {
	var v any
	if err := s.c.GetJSON(ctx, call, &v); err != nil {
		return nil, err
	}
	return result(v, key), nil
}

// status drops the active streams /status embeds (user names and client
// IPs): list_active_streams shows them to those who may see them.
func (s *Service) status(ctx context.Context) (map[string]any, error) {
	m, err := s.object(ctx, client.Call{Route: []string{"status"}, Permission: permSystemRead})
	if err != nil {
		return nil, err
	}
	if streams, ok := m["active_user_streams"].([]any); ok {
		m["active_user_streams"] = len(streams)
	}
	return m, nil
}

// config reads the configuration and redacts it; a document that cannot
// be parsed is withheld, never passed on.
func (s *Service) config(ctx context.Context) (map[string]any, error) {
	resp, err := s.c.Do(ctx, client.Call{Route: []string{"config"}, Permission: permConfig})
	if err != nil {
		return nil, err
	}
	doc, ok := decodeConfig(resp.Body)
	if !ok {
		s.log.WarnContext(ctx, "Tuliprox configuration withheld: not a JSON object", "bytes", len(resp.Body))
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "Tuliprox's configuration could not be parsed, so it is withheld rather than returned unredacted")
	}
	return redactConfig(doc).(map[string]any), nil
}

func setNonEmpty(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setInt(q url.Values, k string, v int) {
	if v != 0 {
		q.Set(k, strconv.Itoa(v))
	}
}

func setList(q url.Values, k string, v []string) {
	if len(v) > 0 {
		q.Set(k, strings.Join(v, ","))
	}
}

func (s *Service) qosList(ctx context.Context, in qosListArgs) (map[string]any, error) {
	q := url.Values{}
	setInt(q, "limit", in.Limit)
	setNonEmpty(q, "stream_identity_key", in.StreamIdentityKey)
	setNonEmpty(q, "input_name", in.InputName)
	setNonEmpty(q, "provider_name", in.ProviderName)
	setNonEmpty(q, "item_type", in.ItemType)
	setNonEmpty(q, "target_name", in.TargetName)
	m, err := s.list(ctx, client.Call{Route: []string{"qos-snapshots"}, Query: q, Permission: permSystemRead, Feature: featureQoS, Needs: needsHistory}, "snapshots")
	if err != nil || in.TargetName == "" {
		return m, err
	}
	return checkTargetName(m, in.TargetName)
}

func (s *Service) qos(ctx context.Context, in qosArgs) (map[string]any, error) {
	return s.object(ctx, client.Call{Route: []string{"qos-snapshots", in.StreamIdentityKey}, Permission: permSystemRead, Feature: featureQoS,
		Needs: needsHistory, NotFound: "Tuliprox has no QoS snapshot with that stream identity key; list them with " + ToolQoSList})
}

const unknownSource = "Tuliprox has no target or input of that name (or no EPG channel with that id); " + ToolSources + " lists the names"

func (s *Service) items(ctx context.Context, in itemsArgs) (map[string]any, error) {
	if (in.Target == "") == (in.Input == "") {
		return nil, toolerr.New(toolerr.InvalidArgument, "give exactly one of target or input")
	}
	if in.Input != "" && len(in.EPGStatus) > 0 {
		return nil, toolerr.New(toolerr.InvalidArgument, "epg_status is for targets only")
	}
	q := url.Values{"cluster": {in.Cluster}}
	setNonEmpty(q, "target", in.Target)
	setNonEmpty(q, "input", in.Input)
	setInt(q, "offset", in.Offset)
	setInt(q, "limit", in.Limit)
	setNonEmpty(q, "search", in.Search)
	setList(q, "search_field", in.SearchField)
	setNonEmpty(q, "group", in.Group)
	setList(q, "fields", in.Fields)
	setList(q, "epg_status", in.EPGStatus)
	return s.object(ctx, client.Call{Route: []string{"playlist", "items"}, Query: q, Permission: permPlaylistRead, Needs: needsSeedAPI, NotFound: unknownSource})
}

func (s *Service) epgChannels(ctx context.Context, in epgChannelsArgs) (map[string]any, error) {
	q := url.Values{"target": {in.Target}}
	setNonEmpty(q, "output", in.Output)
	setInt(q, "offset", in.Offset)
	setInt(q, "limit", in.Limit)
	setNonEmpty(q, "search", in.Search)
	setList(q, "issue", in.Issue)
	return s.object(ctx, client.Call{Route: []string{"playlist", "epg", "channels"}, Query: q, Permission: permPlaylistRead, Needs: needsSeedAPI, NotFound: unknownSource})
}

func (s *Service) epgChannel(ctx context.Context, in epgChannelArgs) (map[string]any, error) {
	q := url.Values{"target": {in.Target}, "channel_id": {in.ChannelID}}
	setNonEmpty(q, "output", in.Output)
	setNonEmpty(q, "from", in.From)
	setNonEmpty(q, "to", in.To)
	setInt(q, "limit", in.Limit)
	return s.object(ctx, client.Call{Route: []string{"playlist", "epg", "channel"}, Query: q, Permission: permPlaylistRead, Needs: needsSeedAPI, NotFound: unknownSource})
}
