package tools_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// The seed's read tools, by name.
var v1ReadTools = []string{
	"ersatztv_get_channel", "ersatztv_get_collection", "ersatztv_get_collection_items", "ersatztv_get_ffmpeg_profile",
	"ersatztv_get_jellyfin_libraries", "ersatztv_get_library_scan_status", "ersatztv_get_playout", "ersatztv_get_playout_items",
	"ersatztv_get_resolution_by_name", "ersatztv_get_schedule", "ersatztv_get_schedule_items", "ersatztv_get_smart_collection",
	"ersatztv_get_version", "ersatztv_list_channels", "ersatztv_list_collections", "ersatztv_list_ffmpeg_profiles",
	"ersatztv_list_local_libraries", "ersatztv_list_media_sources", "ersatztv_list_playouts", "ersatztv_list_schedules",
	"ersatztv_list_sessions", "ersatztv_list_smart_collections", "ersatztv_search", "ersatztv_search_all_items", "ersatztv_search_artists",
}

// What upstream ErsatzTV's /api supports of them.
var legacyReadTools = []string{
	"ersatztv_get_resolution_by_name", "ersatztv_get_version", "ersatztv_list_channels", "ersatztv_list_ffmpeg_profiles",
	"ersatztv_list_sessions", "ersatztv_list_smart_collections",
}

func listNames(t *testing.T, svc *toolkittest.Service, writes bool) []string {
	t.Helper()
	res, err := svc.Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		ro := tool.Annotations.ReadOnlyHint != nil && *tool.Annotations.ReadOnlyHint
		if ro != writes {
			names = append(names, tool.Name)
		}
	}
	sort.Strings(names)
	return names
}

// Each mode exposes exactly the read tools its API supports.
func TestEachModeExposesOnlyWhatItsAPISupports(t *testing.T) {
	for _, c := range []struct {
		name string
		env  *upstreamEnv
		want []string
	}{
		{"v1", startV1(t, nil), v1ReadTools},
		{"legacy", startLegacy(t, nil), legacyReadTools},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := listNames(t, c.env.service(t), false)
			if !slices.Equal(got, c.want) {
				t.Fatalf("read tools\n got %v\nwant %v", got, c.want)
			}
		})
	}
}

// Every v1 read tool against the /api/v1 fake: the route it calls, what
// it returns, and the key it never shows.
func TestV1ReadsAgainstTheFake(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	path := func(method, p string) func(t *testing.T, _ map[string]any) {
		return func(t *testing.T, _ map[string]any) {
			reqs := e.requests()
			if len(reqs) == 0 {
				t.Fatal("no request")
			}
			last := reqs[len(reqs)-1]
			if last.Method != method || last.Path+"?"+last.Query.Encode() != p && last.Path != p {
				t.Errorf("sent %s %s?%s, want %s %s", last.Method, last.Path, last.Query.Encode(), method, p)
			}
			if last.Key != testKey {
				t.Error("the request did not carry the machine key")
			}
		}
	}
	covered := map[string]bool{}
	cases := []toolkittest.ReadCase{
		{Tool: "ersatztv_list_channels", Has: []string{`"channels":[`, `"name":"Classic Movies"`, `"number":"3.1"`}, Check: path("GET", "/api/v1/channels")},
		{Tool: "ersatztv_get_channel", Args: map[string]any{"id": 1}, Has: []string{`"graphicsElementIds":[7]`, `"streamingMode":"TransportStreamHybrid"`}, Check: path("GET", "/api/v1/channels/1")},
		{Name: "get_channel unknown", Tool: "ersatztv_get_channel", Args: map[string]any{"id": 99}, Code: toolerr.NotFound},
		{Tool: "ersatztv_list_collections", Args: map[string]any{"pageNum": 0, "pageSize": 2},
			Has: []string{`"totalCount":3`, `"pageSize":2`, `"hasMore":true`, `"name":"Friday Night Movies"`}, Check: path("GET", "/api/v1/collections?pageNum=0&pageSize=2")},
		{Tool: "ersatztv_get_collection", Args: map[string]any{"id": 10}, Has: []string{`"itemCount":3`}, Check: path("GET", "/api/v1/collections/10")},
		{Tool: "ersatztv_get_collection_items", Args: map[string]any{"id": 11}, Has: []string{`"etag":"\"4\""`, `"mediaItemId":119`, `"customIndex":0`, `"hasMore":false`}, Check: path("GET", "/api/v1/collections/11/items")},
		{Tool: "ersatztv_list_smart_collections", Has: []string{`"smartCollections":[`, `"80s movies"`}, Check: path("GET", "/api/v1/smart-collections")},
		{Tool: "ersatztv_get_smart_collection", Args: map[string]any{"id": 21}, Has: []string{`"Talking Heads videos"`}, Check: path("GET", "/api/v1/smart-collections/21")},
		{Tool: "ersatztv_list_schedules", Has: []string{`"schedules":[`, `"padToNearestMinute":15`}, Check: path("GET", "/api/v1/schedules")},
		{Tool: "ersatztv_get_schedule", Args: map[string]any{"id": 31}, Has: []string{`"name":"Music Loop"`}, Check: path("GET", "/api/v1/schedules/31")},
		{Tool: "ersatztv_get_schedule_items", Args: map[string]any{"id": 30}, Has: []string{`"etag":"\"2\""`, `"customTitle":"More 80s"`}, Check: path("GET", "/api/v1/schedules/30/items")},
		{Tool: "ersatztv_list_playouts", Args: map[string]any{"query": "music"}, Has: []string{`"channelId":3`, `"id":1`, `"totalCount":1`}, Check: path("GET", "/api/v1/playouts?query=music")},
		{Tool: "ersatztv_get_playout", Args: map[string]any{"id": 2}, Has: []string{`"channelId":1`, `"scheduleName":"Movie Nights"`}, Check: path("GET", "/api/v1/playouts/2")},
		{Tool: "ersatztv_get_playout_items", Args: map[string]any{"id": 1, "showFiller": true, "pageNum": 1, "pageSize": 2},
			Has: []string{`"totalCount":5`, `"pageNum":1`, `"hasMore":true`, `"isFiller":true`}, Check: path("GET", "/api/v1/playouts/1/items?pageNum=1&pageSize=2&showFiller=true")},
		{Name: "get_playout_items hides filler by default", Tool: "ersatztv_get_playout_items", Args: map[string]any{"id": 1}, Has: []string{`"totalCount":3`}, HasNot: []string{`"isFiller":true`}},
		{Tool: "ersatztv_list_ffmpeg_profiles", Has: []string{`"profiles":[`, `"720p NVENC"`, `"resolution":"1920x1080"`}, Check: path("GET", "/api/v1/ffmpeg/profiles")},
		{Tool: "ersatztv_get_ffmpeg_profile", Args: map[string]any{"id": 2}, Has: []string{`"hardwareAcceleration":"Nvenc"`}, Check: path("GET", "/api/v1/ffmpeg/profiles/2")},
		{Tool: "ersatztv_get_resolution_by_name", Args: map[string]any{"name": "1280x720"}, Has: []string{`"height":720`}, Check: path("GET", "/api/v1/ffmpeg/resolution/by-name/1280x720")},
		{Tool: "ersatztv_list_sessions", Has: []string{`"sessions":[`, `"channelNumber":"1"`}, Check: path("GET", "/api/v1/sessions")},
		{Tool: "ersatztv_get_version", Has: []string{`"mode":"v1"`, `"api":"/api/v1"`, `"appVersion":"v25.6.0-chicory"`, `"modeFrom":"detected at start"`}, Check: path("GET", "/api/v1/version")},
		{Tool: "ersatztv_list_media_sources", Has: []string{`"mediaSources":[`, `"kind":"Jellyfin"`}, Check: path("GET", "/api/v1/media-sources")},
		{Tool: "ersatztv_get_jellyfin_libraries", Args: map[string]any{"id": 5}, Has: []string{`"shouldSyncItems":false`, `"Kids Shows"`}, Check: path("GET", "/api/v1/media-sources/jellyfin/5/libraries")},
		{Tool: "ersatztv_list_local_libraries", Has: []string{`"libraries":[`, `"/media/movies"`}, Check: path("GET", "/api/v1/libraries/local")},
		{Tool: "ersatztv_get_library_scan_status", Has: []string{`"scanning":[`, `"progress":0.4`}, Check: path("GET", "/api/v1/libraries/scan-status")},
		{Tool: "ersatztv_search", Args: map[string]any{"query": "type:movie AND title:the"}, Has: []string{`"The Thing"`, `"The Princess Bride"`}, HasNot: []string{`"Aliens"`}, Check: path("GET", "/api/v1/search?query=type%3Amovie+AND+title%3Athe")},
		{Tool: "ersatztv_search_all_items", Args: map[string]any{"query": "type:music_video", "pageSize": 2},
			Has: []string{`"musicVideoIds":[119,120]`, `"totalCount":4`, `"hasMore":true`, `"pageSize":2`}, Check: path("GET", "/api/v1/search/all-items?pageSize=2&query=type%3Amusic_video")},
		{Tool: "ersatztv_search_artists", Args: map[string]any{"query": "talking"}, Has: []string{`"name":"Talking Heads"`}, Check: path("GET", "/api/v1/search/artists?query=talking")},
		// pageSize over the cap is passed through; the server clamps and
		// the result says what held.
		{Name: "pageSize over the cap", Tool: "ersatztv_search", Args: map[string]any{"query": "*", "pageSize": 500}, Has: []string{`"pageSize":100`, `"totalCount":25`, `"hasMore":false`},
			Check: path("GET", "/api/v1/search?pageSize=500&query=%2A")},
		{Name: "search_all_items under its own cap", Tool: "ersatztv_search_all_items", Args: map[string]any{"query": "*", "pageSize": 500}, Has: []string{`"pageSize":500`}},
		{Name: "pageNum is 0-based", Tool: "ersatztv_list_collections", Args: map[string]any{"pageNum": -1}, Code: toolerr.InvalidArgument},
	}
	for i := range cases {
		covered[cases[i].Tool] = true
		before := cases[i].Before
		cases[i].Before = func() {
			e.resetRequests()
			if before != nil {
				before()
			}
		}
	}
	svc.RunReads(t, cases, testKey)
	for _, name := range v1ReadTools {
		if !covered[name] {
			t.Errorf("no case for %s", name)
		}
	}
}

// The legacy reads against the upstream ErsatzTV fake: unversioned paths,
// and no key is sent to a server that never asked for one.
func TestLegacyReadsAgainstTheFake(t *testing.T) {
	e := startLegacy(t, map[string]string{"ERSATZTV_API_KEY_FILE": keyFile(t, testKey)})
	svc := e.service(t)
	route := func(p string) func(t *testing.T, _ map[string]any) {
		return func(t *testing.T, _ map[string]any) {
			reqs := e.requests()
			if len(reqs) == 0 || reqs[len(reqs)-1].Path != p {
				t.Fatalf("requests %v, want GET %s", reqs, p)
			}
			for _, r := range reqs {
				if r.Key != "" {
					t.Fatal("the machine key went to upstream ErsatzTV")
				}
			}
		}
	}
	svc.RunReads(t, []toolkittest.ReadCase{
		{Tool: "ersatztv_list_channels", Has: []string{`"ffmpegProfile":"1080p H264 (software)"`, `"number":"3.1"`}, Check: route("/api/channels")},
		{Tool: "ersatztv_list_smart_collections", Has: []string{`"80s movies"`}, Check: route("/api/collections/smart")},
		{Tool: "ersatztv_list_ffmpeg_profiles", Has: []string{`"720p NVENC"`}, Check: route("/api/ffmpeg/profiles")},
		{Tool: "ersatztv_get_resolution_by_name", Args: map[string]any{"name": "3840x2160"}, Has: []string{`"width":3840`}, Check: route("/api/ffmpeg/resolution/by-name/3840x2160")},
		{Name: "unknown resolution", Tool: "ersatztv_get_resolution_by_name", Args: map[string]any{"name": "1x1"}, Code: toolerr.NotFound},
		{Tool: "ersatztv_list_sessions", Has: []string{`"state":"SeekAndWorkAhead"`}, Check: route("/api/sessions")},
		{Tool: "ersatztv_get_version", Has: []string{`"mode":"legacy"`, `"api":"/api"`, `"apiVersion":3`}, Check: route("/api/version")},
	}, testKey)
}

// The seed's paging rule (api.paging-zero-based): exactly the tools over a
// paged endpoint declare pageNum and pageSize (an undeclared one would cap
// the caller at the first page), pageNum starts at 0, and each says that
// pages are 0-based and what its endpoint clamps pageSize to.
func TestPagedToolsDeclareZeroBasedPagesAndTheirCap(t *testing.T) {
	paged := map[string]string{
		"ersatztv_list_collections": "pageSize max 100", "ersatztv_get_collection_items": "pageSize max 100",
		"ersatztv_list_playouts": "pageSize max 100", "ersatztv_get_playout_items": "pageSize max 100",
		"ersatztv_search": "pageSize max 100", "ersatztv_search_artists": "pageSize max 100",
		"ersatztv_search_all_items": "pageSize default 500, max 1000",
	}
	res, err := startV1(t, nil).service(t).Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tool := range res.Tools {
		props := tool.InputSchema.Properties
		num, hasNum := props["pageNum"].(map[string]any)
		_, hasSize := props["pageSize"]
		cap_, isPaged := paged[tool.Name]
		if hasNum != isPaged || hasSize != isPaged {
			t.Errorf("%s: pageNum %v, pageSize %v; paged endpoint %v", tool.Name, hasNum, hasSize, isPaged)
			continue
		}
		if !isPaged {
			continue
		}
		seen++
		if m, _ := num["minimum"].(float64); m != 0 || num["minimum"] == nil {
			t.Errorf("%s: pageNum minimum %v, want 0", tool.Name, num["minimum"])
		}
		if !strings.Contains(tool.Description, "0-based") || !strings.Contains(tool.Description, cap_) {
			t.Errorf("%s: description %q does not say 0-based and %q", tool.Name, tool.Description, cap_)
		}
	}
	if seen != len(paged) {
		t.Errorf("%d paged tools listed, want %d", seen, len(paged))
	}
}

// get_version says which API the service speaks and whether it was
// detected or set with ERSATZTV_MODE.
func TestGetVersionSaysTheModeAndWhereItCameFrom(t *testing.T) {
	for _, c := range []struct {
		name string
		env  *upstreamEnv
		has  []string
	}{
		{"v1 detected", startV1(t, nil), []string{`"mode":"v1"`, `"api":"/api/v1"`, `"modeFrom":"detected at start"`}},
		{"v1 configured", startV1(t, map[string]string{"ERSATZTV_MODE": "v1"}), []string{`"mode":"v1"`, `"modeFrom":"ERSATZTV_MODE"`}},
		{"legacy detected", startLegacy(t, nil), []string{`"mode":"legacy"`, `"api":"/api"`, `"modeFrom":"detected at start"`}},
		{"legacy configured", startLegacy(t, map[string]string{"ERSATZTV_MODE": "legacy"}), []string{`"mode":"legacy"`, `"modeFrom":"ERSATZTV_MODE"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.env.service(t).RunReads(t, []toolkittest.ReadCase{{Tool: "ersatztv_get_version", Has: c.has}}, testKey)
		})
	}
}
