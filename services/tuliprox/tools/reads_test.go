package tools_test

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

func num(t *testing.T, m map[string]any, k string) int {
	t.Helper()
	switch v := m[k].(type) {
	case float64:
		return int(v)
	case string:
		var n int
		for _, c := range v {
			n = n*10 + int(c-'0')
		}
		return n
	}
	t.Fatalf("%s is %T %v", k, m[k], m[k])
	return 0
}

func list(t *testing.T, m map[string]any, k string) []any {
	t.Helper()
	l, ok := m[k].([]any)
	if !ok {
		t.Fatalf("%s is not a list: %v", k, m[k])
	}
	return l
}

// every item of key holds field == want.
func every(key, field, want string) func(t *testing.T, got map[string]any) {
	return func(t *testing.T, got map[string]any) {
		for _, it := range list(t, got, key) {
			if v := it.(map[string]any)[field]; v != want {
				t.Fatalf("%s %s = %v, want %s", key, field, v, want)
			}
		}
	}
}

// paging checks the paging members of a §4.1/§4.2 answer.
func paging(total, offset, limit int, clamped bool, returned int, hasMore bool) func(t *testing.T, got map[string]any) {
	return func(t *testing.T, got map[string]any) {
		t.Helper()
		if g := num(t, got, "total_matched"); g != total {
			t.Errorf("total_matched %d, want %d", g, total)
		}
		if g := num(t, got, "offset"); g != offset {
			t.Errorf("offset %d, want %d", g, offset)
		}
		if g := num(t, got, "limit"); g != limit {
			t.Errorf("limit %d, want %d", g, limit)
		}
		if got["limit_clamped"] != clamped {
			t.Errorf("limit_clamped %v, want %v", got["limit_clamped"], clamped)
		}
		if g := num(t, got, "returned"); g != returned {
			t.Errorf("returned %d, want %d", g, returned)
		}
		if got["has_more"] != hasMore {
			t.Errorf("has_more %v, want %v", got["has_more"], hasMore)
		}
		key := "items"
		if _, ok := got["channels"]; ok {
			key = "channels"
		}
		if n := len(list(t, got, key)); n != returned {
			t.Errorf("%d %s, returned says %d", n, key, returned)
		}
	}
}

func TestEveryReadAgainstTheFake(t *testing.T) {
	e := admin(t, faketuliprox.Options{})
	svc := e.service(t)
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "status without the streams it embeds", Tool: tools.ToolStatus, Has: []string{`"version":"seed"`, `"active_user_streams":2`},
			HasNot: []string{"192.168.1.23", "anna", "session_token"}},
		{Name: "active streams with user names and client IPs, without provider URLs", Tool: tools.ToolStreams,
			Has:    []string{`"count":2`, `"username":"anna"`, `"client_ip":"192.168.1.23"`, `"title":"Das Erste HD"`},
			HasNot: []string{"line.provider-a.example", "sess-tok-0001", `"url"`}},
		{Tool: tools.ToolUpdateStatus, Has: []string{`"state":"idle"`}},
		{Name: "history page", Tool: tools.ToolHistory, Args: map[string]any{"page_size": 25},
			Has: []string{`"page_size":25`, `"total":60`, `"has_more":true`}, HasNot: []string{"provider_url"},
			Check: func(t *testing.T, got map[string]any) {
				if n := len(list(t, got, "records")); n != 25 {
					t.Errorf("%d records", n)
				}
			}},
		{Name: "history last page", Tool: tools.ToolHistory, Args: map[string]any{"page": 3, "page_size": 25}, Has: []string{`"has_more":false`},
			Check: func(t *testing.T, got map[string]any) {
				if n := len(list(t, got, "records")); n != 10 {
					t.Errorf("%d records on the last page, want 10", n)
				}
			}},
		{Name: "history text search in one field", Tool: tools.ToolHistory, Args: map[string]any{"search": "CARLA", "search_field": []any{"api_username"}},
			Has: []string{`"total":20`}, Check: every("records", "api_username", "carla")},
		{Name: "history regex search", Tool: tools.ToolHistory, Args: map[string]any{"search": "^ZDF", "search_mode": "regex", "search_field": []any{"title"}},
			Has: []string{`"total":15`}},
		{Name: "history by day", Tool: tools.ToolHistory, Args: map[string]any{"from": "2026-12-03", "to": "2026-12-03"},
			Check: every("records", "partition_day_utc", "2026-12-03")},
		{Tool: tools.ToolHistorySummary, Args: map[string]any{"api_username": "anna"}, Has: []string{`"provider_name":"provider-a"`, `"session_count"`, `"count":`}},
		{Name: "QoS snapshots with a limit", Tool: tools.ToolQoSList, Args: map[string]any{"limit": 3}, Has: []string{`"count":3`}},
		{Tool: tools.ToolQoS, Args: map[string]any{"stream_identity_key": "sik-1003"}, Has: []string{`"virtual_id":1003`, `"window_24h"`}},
		{Name: "unknown QoS key", Tool: tools.ToolQoS, Args: map[string]any{"stream_identity_key": "sik-9"}, Code: toolerr.NotFound,
			Has: []string{"no QoS snapshot with that stream identity key"}},
		{Name: "a key with a slash stays one path segment", Tool: tools.ToolQoS, Args: map[string]any{"stream_identity_key": "../status"}, Code: toolerr.NotFound,
			Before: e.fake.Reset, Check: func(t *testing.T, _ map[string]any) {
				if reqs := e.fake.Requests(); len(reqs) != 1 || reqs[0].Path != "/api/v1/qos-snapshots/../status" {
					t.Fatalf("requests %v", reqs)
				}
			}},
		{Tool: tools.ToolEventStats, Has: []string{"auth.sign_in.throttled"}},
		{Tool: tools.ToolIPInfo, Has: []string{"203.0.113.7"}},
		{Tool: tools.ToolSources, Has: []string{`"name":"main"`, `"available":false`, `"input_type":"stalker"`, `"clusters":[]`},
			HasNot: []string{"provider-a.example"}},
	}, secrets...)
}

func TestPlaylistItemsPagingAndFilters(t *testing.T) {
	e := admin(t, faketuliprox.Options{})
	svc := e.service(t)
	main := func(extra map[string]any) map[string]any {
		a := map[string]any{"target": "main", "cluster": "live"}
		for k, v := range extra {
			a[k] = v
		}
		return a
	}
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "first page with the defaults", Tool: tools.ToolItems, Args: main(nil), Has: []string{`"source":{"kind":"target","name":"main"}`, `"skipped_records":0`},
			Check: func(t *testing.T, got map[string]any) {
				paging(640, 0, 50, false, 50, true)(t, got)
				item := list(t, got, "items")[0].(map[string]any)
				if len(item) != 10 {
					t.Errorf("%d fields by default, want the first ten: %v", len(item), item)
				}
				for _, f := range faketuliprox.DefaultFields {
					if _, ok := item[f]; !ok {
						t.Errorf("default field %s missing", f)
					}
				}
			}},
		{Name: "limit clamped to 500", Tool: tools.ToolItems, Args: main(map[string]any{"limit": 1000}), Check: paging(640, 0, 500, true, 500, true)},
		{Name: "last page", Tool: tools.ToolItems, Args: main(map[string]any{"offset": 600, "limit": 500}), Check: paging(640, 600, 500, false, 40, false)},
		{Name: "past the end", Tool: tools.ToolItems, Args: main(map[string]any{"offset": 640}), Check: paging(640, 640, 50, false, 0, false)},
		{Name: "case-insensitive search on the default fields", Tool: tools.ToolItems, Args: main(map[string]any{"search": "das erste"}),
			Check: paging(1, 0, 50, false, 1, false)},
		{Name: "search in epg_channel_id", Tool: tools.ToolItems, Args: main(map[string]any{"search": "GHOST", "search_field": []any{"epg_channel_id"}}),
			Check: paging(26, 0, 50, false, 26, false)},
		{Name: "exact group", Tool: tools.ToolItems, Args: main(map[string]any{"group": "UK | News", "limit": 10}), Check: every("items", "group", "UK | News")},
		{Name: "group is case-sensitive", Tool: tools.ToolItems, Args: main(map[string]any{"group": "uk | news"}), Check: paging(0, 0, 50, false, 0, false)},
		{Name: "epg_status unmatched", Tool: tools.ToolItems, Args: main(map[string]any{"epg_status": []any{"unmatched"}, "fields": []any{"name", "epg_channel_id", "epg_status"}}),
			Check: func(t *testing.T, got map[string]any) {
				paging(26, 0, 50, false, 26, false)(t, got)
				every("items", "epg_status", "unmatched")(t, got)
				every("items", "epg_channel_id", "ghost.tv")(t, got)
			}},
		{Name: "epg_status missing_id or unmatched", Tool: tools.ToolItems, Args: main(map[string]any{"epg_status": []any{"missing_id", "unmatched"}}),
			Check: func(t *testing.T, got map[string]any) { paging(90, 0, 50, false, 50, true)(t, got) }},
		{Name: "selected fields, additional_properties without URLs", Tool: tools.ToolItems,
			Args: map[string]any{"target": "main", "cluster": "video", "fields": []any{"name", "additional_properties"}, "limit": 2},
			Has:  []string{`"plot":"A quiet film."`}, HasNot: []string{"direct_source", "cover_url", "provider-a.example", `"virtual_id"`}},
		{Name: "a target lists series without episodes", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "series"},
			Check: func(t *testing.T, got map[string]any) {
				paging(5, 0, 50, false, 5, false)(t, got)
				every("items", "item_type", "series_info")(t, got)
			}},
		{Name: "an input lists episodes", Tool: tools.ToolItems, Args: map[string]any{"input": "provider-a", "cluster": "series"}, Check: paging(15, 0, 50, false, 15, false)},
		{Name: "damaged database: skipped records and a note", Tool: tools.ToolItems, Args: map[string]any{"input": "provider-b", "cluster": "live"},
			Has: []string{`"skipped_records":2`, "could not be read"}},
		{Name: "never updated: 0 and a note", Tool: tools.ToolItems, Args: map[string]any{"target": "never", "cluster": "live"},
			Has: []string{`"total_matched":0`, "never updated"}},
		{Name: "unknown target", Tool: tools.ToolItems, Args: map[string]any{"target": "nope", "cluster": "live"}, Code: toolerr.NotFound,
			Has: []string{tools.ToolSources}},
	}, secrets...)

	// Arguments Tuliprox would refuse never reach it.
	e.fake.Reset()
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "both target and input", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "input": "provider-a", "cluster": "live"}, Code: toolerr.InvalidArgument, Has: []string{"exactly one"}},
		{Name: "neither target nor input", Tool: tools.ToolItems, Args: map[string]any{"cluster": "live"}, Code: toolerr.InvalidArgument, Has: []string{"exactly one"}},
		{Name: "epg_status for an input", Tool: tools.ToolItems, Args: map[string]any{"input": "provider-a", "cluster": "live", "epg_status": []any{"matched"}}, Code: toolerr.InvalidArgument},
		{Name: "no cluster", Tool: tools.ToolItems, Args: map[string]any{"target": "main"}, Code: toolerr.InvalidArgument},
		{Name: "unknown cluster", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "radio"}, Code: toolerr.InvalidArgument},
		{Name: "unknown field", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "live", "fields": []any{"url"}}, Code: toolerr.InvalidArgument},
		{Name: "limit 0", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "live", "limit": 0}, Code: toolerr.InvalidArgument},
		{Name: "negative offset", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "live", "offset": -1}, Code: toolerr.InvalidArgument},
		{Name: "unknown argument", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "live", "path": "/etc"}, Code: toolerr.InvalidArgument},
		{Name: "page_size off the list", Tool: tools.ToolHistory, Args: map[string]any{"page_size": 30}, Code: toolerr.InvalidArgument},
		{Name: "history date not a date", Tool: tools.ToolHistory, Args: map[string]any{"from": "yesterday"}, Code: toolerr.InvalidArgument},
		{Name: "unknown issue", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "main", "issue": []any{"broken"}}, Code: toolerr.InvalidArgument},
		{Name: "EPG window not RFC 3339", Tool: tools.ToolEPGChannel, Args: map[string]any{"target": "main", "channel_id": "zdf.de", "from": "2026-12-03"}, Code: toolerr.InvalidArgument},
	}, secrets...)
	if reqs := e.fake.Requests(); len(reqs) != 0 {
		t.Fatalf("Tuliprox received %d request(s) for invalid arguments, first %v", len(reqs), reqs[0])
	}
}

func TestEPGChannelsIssuesAndNotes(t *testing.T) {
	e := admin(t, faketuliprox.Options{})
	svc := e.service(t)
	ids := func(want ...string) func(t *testing.T, got map[string]any) {
		return func(t *testing.T, got map[string]any) {
			var have []string
			for _, c := range list(t, got, "channels") {
				have = append(have, c.(map[string]any)["id"].(string))
			}
			if strings.Join(have, ",") != strings.Join(want, ",") {
				t.Fatalf("channels %v, want %v", have, want)
			}
		}
	}
	issue := func(is ...any) map[string]any { return map[string]any{"target": "main", "issue": is} }
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "all channels of the first output with an EPG", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "main"},
			Has:   []string{`"output":"xtream"`, `"skipped_playlist_records":0`, `"covers_now":true`, `"referenced_by_playlist":true`},
			Check: paging(10, 0, 50, false, 10, false)},
		{Name: "no_programmes", Tool: tools.ToolEPGChannels, Args: issue("no_programmes"), Check: ids("empty.tv")},
		{Name: "expired", Tool: tools.ToolEPGChannels, Args: issue("expired"), Check: ids("old.tv")},
		{Name: "not_current includes channels without programmes", Tool: tools.ToolEPGChannels, Args: issue("not_current"), Check: ids("empty.tv", "old.tv", "later.tv")},
		{Name: "no_title", Tool: tools.ToolEPGChannels, Args: issue("no_title"), Check: ids("notitle.tv")},
		{Name: "unreferenced", Tool: tools.ToolEPGChannels, Args: issue("unreferenced"), Check: ids("orphan.tv")},
		{Name: "issues are ORed", Tool: tools.ToolEPGChannels, Args: issue("expired", "no_title"), Check: ids("old.tv", "notitle.tv")},
		{Name: "search id or title", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "main", "search": "bbc"}, Check: ids("bbcnews.uk")},
		{Name: "limit clamped to 500, paged", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "main", "limit": 900, "offset": 8}, Check: paging(10, 8, 500, true, 2, false)},
		{Name: "small page", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "main", "limit": 3}, Check: paging(10, 0, 3, false, 3, true)},
		{Name: "damaged playlist: skipped_playlist_records and a note", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "kids"},
			Has: []string{`"skipped_playlist_records":1`, "may be wrong"}},
		{Name: "playlist not stored: referenced_by_playlist null", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "sports"},
			Has: []string{`"referenced_by_playlist":null`, "not stored"}},
		{Name: "unreferenced matches nothing without a stored playlist", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "sports", "issue": []any{"unreferenced"}},
			Check: paging(0, 0, 50, false, 0, false)},
		{Name: "no EPG database: 0 with a note", Tool: tools.ToolEPGChannels, Args: map[string]any{"target": "radio"},
			Has: []string{`"total_matched":0`, "no EPG database"}},
		{Name: "programmes in the next 24 h", Tool: tools.ToolEPGChannel, Args: map[string]any{"target": "main", "channel_id": "daserste.de"},
			Has: []string{`"total_in_window":25`, `"truncated":false`, `"start":"2026-12-03T12:00:00Z"`},
			Check: func(t *testing.T, got map[string]any) {
				for _, p := range list(t, got, "programmes") {
					if d := p.(map[string]any)["desc"].(string); len([]rune(d)) > 500 {
						t.Fatalf("desc of %d characters", len([]rune(d)))
					}
				}
			}},
		{Name: "programme limit truncates", Tool: tools.ToolEPGChannel, Args: map[string]any{"target": "main", "channel_id": "daserste.de", "limit": 5},
			Has: []string{`"total_in_window":25`, `"truncated":true`}, Check: func(t *testing.T, got map[string]any) {
				if n := len(list(t, got, "programmes")); n != 5 {
					t.Errorf("%d programmes", n)
				}
			}},
		{Name: "programme limit clamped to 1000", Tool: tools.ToolEPGChannel, Args: map[string]any{"target": "main", "channel_id": "zdf.de", "limit": 5000},
			Has: []string{`"limit":1000`, `"limit_clamped":true`}},
		{Name: "a window: ends after from, starts before to", Tool: tools.ToolEPGChannel,
			Args: map[string]any{"target": "main", "channel_id": "zdf.de", "from": "2026-12-03T14:30:00Z", "to": "2026-12-03T16:00:00Z"},
			Has:  []string{`"total_in_window":2`}},
		{Name: "unknown channel", Tool: tools.ToolEPGChannel, Args: map[string]any{"target": "main", "channel_id": "nope.tv"}, Code: toolerr.NotFound},
	}, secrets...)
}

func TestPermissionsFeaturesAndReleases(t *testing.T) {
	viewer := start(t, faketuliprox.Options{}, faketuliprox.DemoViewer, faketuliprox.DemoViewerPassword, false).service(t)
	viewer.RunReads(t, []toolkittest.ReadCase{
		{Name: "403 without system.read", Tool: tools.ToolStatus, Code: toolerr.Forbidden, Has: []string{"HTTP 403", "system.read"}},
		{Name: "403 on streams", Tool: tools.ToolStreams, Code: toolerr.Forbidden, Has: []string{"HTTP 403"}, HasNot: []string{"anna"}},
		{Name: "playlist.read suffices", Tool: tools.ToolSources, Has: []string{`"name":"main"`}},
		{Name: "the configuration filtered by permission", Tool: tools.ToolConfig, Has: []string{`"config":{}`, `"inputs":[]`}},
	}, secrets...)
	off := admin(t, faketuliprox.Options{NoStreamHistory: true, NoQoS: true}).service(t)
	off.RunReads(t, []toolkittest.ReadCase{
		{Tool: tools.ToolHistory, Code: toolerr.UpstreamUnavailable, Has: []string{"HTTP 503", "reverse_proxy.stream_history"}},
		{Tool: tools.ToolHistorySummary, Code: toolerr.UpstreamUnavailable, Has: []string{"HTTP 503"}},
		{Tool: tools.ToolQoSList, Code: toolerr.UpstreamUnavailable, Has: []string{"HTTP 503", "qos_aggregation"}},
		{Tool: tools.ToolQoS, Args: map[string]any{"stream_identity_key": "sik-1001"}, Code: toolerr.UpstreamUnavailable, Has: []string{"HTTP 503"}},
	}, secrets...)
	legacy := admin(t, faketuliprox.Options{Release: faketuliprox.ReleasePublic}).service(t)
	var cases []toolkittest.ReadCase
	for tool, args := range map[string]map[string]any{
		tools.ToolEventStats: nil, tools.ToolSources: nil, tools.ToolUpdateStatus: nil,
		tools.ToolItems:       {"target": "main", "cluster": "live"},
		tools.ToolEPGChannels: {"target": "main"}, tools.ToolEPGChannel: {"target": "main", "channel_id": "zdf.de"},
	} {
		cases = append(cases, toolkittest.ReadCase{Name: "public release: " + tool, Tool: tool, Args: args, Code: toolerr.NotFound,
			Has: []string{"not supported by this Tuliprox release (needs the playlist, EPG, event and update-status API"}})
	}
	cases = append(cases, toolkittest.ReadCase{Name: "the public release still has status", Tool: tools.ToolStatus, Has: []string{`"version":"3.3.3"`}})
	legacy.RunReads(t, cases, secrets...)
}

// The reads work unchanged when Tuliprox runs without web authentication.
func TestReadsWithoutWebAuthentication(t *testing.T) {
	e := start(t, faketuliprox.Options{NoAuth: true}, "someone", "some-password-1", false)
	e.service(t).RunReads(t, []toolkittest.ReadCase{
		{Tool: tools.ToolStatus, Has: []string{`"version"`}},
		{Tool: tools.ToolItems, Args: map[string]any{"target": "kids", "cluster": "live"}, Has: []string{`"total_matched":12`}},
	}, secrets...)
}

func TestDocumentedToolTable(t *testing.T) {
	e := admin(t, faketuliprox.Options{})
	e.service(t).CheckDocTable(t, "../../../docs/services/tuliprox.md")
}
