package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

// The demo configuration carries a secret in every form the rules name;
// none comes back, and what is left is still useful.
func TestConfigRedactedByTheSeedsRulesAndMore(t *testing.T) {
	e := admin(t, faketuliprox.Options{})
	e.service(t).RunReads(t, []toolkittest.ReadCase{{
		Tool: tools.ToolConfig,
		Has: []string{`"name":"provider-a"`, `"working_dir":"/app/data"`, `"username":"********"`, `"url":"[URL withheld]"`,
			`"use_user_db":false`, `"user":""`, `"host":"tv.home.example"`, `/live/********/********/1.ts`},
		HasNot: []string{"provider-a.example", "provider-b.example", "epg.example", "geoip.example", "hooks.example", "proxy.lan",
			"family-tv", "kids-box", "telegram-bot-token"},
		Check: func(t *testing.T, got map[string]any) {
			ap := got["api_proxy"].(map[string]any)
			users, _ := json.Marshal(ap["user"])
			if string(users) != `[{"target":"main","users":2},{"target":"kids","users":1}]` {
				t.Errorf("api_proxy.user = %s, want a credential count per target", users)
			}
			if _, ok := ap["server"]; !ok {
				t.Error("api_proxy.server went missing")
			}
		},
	}}, secrets...)
}

// Hostile configurations: secrets nested, in lists, in URLs, in free text,
// under odd key names, and documents that cannot be parsed.
func TestConfigRedactionWithHostileDocuments(t *testing.T) {
	cases := []struct {
		name    string
		doc     any    // the configuration, or
		raw     string // a raw body
		secrets []string
		has     []string
		code    toolerr.Code
	}{
		{name: "nested in lists of objects", doc: map[string]any{"a": map[string]any{"b": []any{map[string]any{"c": map[string]any{"db_password": "hostile-S1-nested"}}}}},
			secrets: []string{"hostile-S1-nested"}},
		{name: "a whole object under a secret key", doc: map[string]any{"credentials_store": map[string]any{"x": "hostile-S2-object"}, "my_secret_list": []any{"hostile-S2b-list"}},
			secrets: []string{"hostile-S2-object", "hostile-S2b-list"}},
		{name: "key names containing the words", doc: map[string]any{"X-Authorization-Header": "hostile-S3-auth", "MyCookieJar": "hostile-S3-cookie",
			"access_token_v2": "hostile-S3-token", "Api-Key": "hostile-S3-apikey", "apikeyPrimary": "hostile-S3-apikey2"},
			secrets: []string{"hostile-S3-auth", "hostile-S3-cookie", "hostile-S3-token", "hostile-S3-apikey", "hostile-S3-apikey2"}},
		{name: "user names", doc: map[string]any{"inputs": []any{map[string]any{"user": "hostile-S4-user", "username": "hostile-S4-username", "User": "hostile-S4-cap"}}, "empty": map[string]any{"user": ""}},
			secrets: []string{"hostile-S4-user", "hostile-S4-username", "hostile-S4-cap"}, has: []string{`"user":""`}},
		{name: "URLs in free text", doc: map[string]any{"notes": "Backup line http://bob:hostile-S5-pw@line.example/live/bob/hostile-S5-path/1.ts and also ftp://x.example/?token=hostile-S5-tok"},
			secrets: []string{"hostile-S5-pw", "hostile-S5-path", "hostile-S5-tok", "line.example", "x.example"}, has: []string{"[URL withheld]"}},
		{name: "a relative Xtream path", doc: map[string]any{"fallback": "/live/bob/hostile-S6-rel/55.ts", "movie": "movie/bob/hostile-S6-mov/9.mkv"},
			secrets: []string{"hostile-S6-rel", "hostile-S6-mov"}},
		{name: "a bare query string", doc: map[string]any{"params": "?username=hostile-S7-u&password=hostile-S7-p&type=m3u", "q2": "get.php?user=hostile-S7-u2&pass=hostile-S7-p2",
			"q3": "xmltv.php?api_key=hostile-S7-k&token=hostile-S7-t&output=ts"},
			secrets: []string{"hostile-S7-u", "hostile-S7-p", "hostile-S7-u2", "hostile-S7-p2", "hostile-S7-k", "hostile-S7-t"}, has: []string{"type=m3u", "output=ts"}},
		{name: "free-text secrets the generic rules catch", doc: map[string]any{"comment": "login with password: hostile-S8-free, api_key=hostile-S8-key"},
			secrets: []string{"hostile-S8-free", "hostile-S8-key"}},
		{name: "a URL as a key", doc: map[string]any{"http://u:hostile-S9-key@h.example/": 1}, secrets: []string{"hostile-S9-key", "h.example"}},
		{name: "api_proxy.user that is not a list", doc: map[string]any{"api_proxy": map[string]any{"user": map[string]any{"target": "x", "password": "hostile-S10"}}},
			secrets: []string{"hostile-S10"}},
		{name: "nested deeper than followed", doc: deep(100, map[string]any{"note": "hostile-S11-deep"}), secrets: []string{"hostile-S11-deep"}},
		{name: "a proxy written without a scheme", doc: map[string]any{"config": map[string]any{"upstream_proxy": "bob:hostile-P1-pw@proxy.lan:3128",
			"notes": "fallback via alice:hostile-P2-pw@10.0.0.9:8080 if down"}},
			secrets: []string{"hostile-P1-pw", "hostile-P2-pw"}, has: []string{"@proxy.lan:3128", "if down"}},
		{name: "an Xtream path without a scheme", doc: map[string]any{"backup": "line.example:8080/hostile-X1-user/hostile-X1-pw/1234.ts",
			"note": "try 10.0.0.7:25461/hostile-X2-user/hostile-X2-pw/55 first", "with_scheme": "relay http://line.example/hostile-X3-user/hostile-X3-pw/9.m3u8 ok"},
			secrets: []string{"hostile-X1-user", "hostile-X1-pw", "hostile-X2-user", "hostile-X2-pw", "hostile-X3-user", "hostile-X3-pw"},
			has:     []string{"line.example:8080/********/********/1234.ts", "10.0.0.7:25461/********/********/55 first"}},
		{name: "provider headers under custom names", doc: map[string]any{"sources": map[string]any{"inputs": []any{map[string]any{"name": "p",
			"headers": map[string]any{"X-Auth": "hostile-H1", "X-Line": "hostile-H2", "Proxy-Auth": "hostile-H3", "User-Agent": "VLC/3.0.20"},
			"staged":  map[string]any{"headers": map[string]any{"X-Custom-Credential-Field": "hostile-H4", "Accept": "*/*"}}}}},
			"config": map[string]any{"messaging": map[string]any{"rest": map[string]any{"headers": []any{"X-Auth: hostile-H5", "Accept: application/json", "hostile-H6-no-colon"}}},
				"video": map[string]any{"download": map[string]any{"headers": map[string]any{"Cookie2": "hostile-H7", "Referer": "https://site.example/?t=hostile-H8"}}}}},
			secrets: []string{"hostile-H1", "hostile-H2", "hostile-H3", "hostile-H4", "hostile-H5", "hostile-H6", "hostile-H7", "hostile-H8"},
			has:     []string{`"User-Agent":"VLC/3.0.20"`, `"Accept":"*/*"`, `"Accept: application/json"`, `"X-Auth":"********"`, `"X-Auth: ********"`}},
		{name: "unparsable document withheld", raw: `{"config": {"password": "hostile-S12-cut"`, code: toolerr.UpstreamUnavailable,
			secrets: []string{"hostile-S12-cut"}, has: []string{"withheld"}},
		{name: "a list instead of an object withheld", raw: `[{"password":"hostile-S13-list"}]`, code: toolerr.UpstreamUnavailable,
			secrets: []string{"hostile-S13-list"}, has: []string{"withheld"}},
		{name: "trailing data withheld", raw: `{"a":1} {"password":"hostile-S14-tail"}`, code: toolerr.UpstreamUnavailable, secrets: []string{"hostile-S14-tail"}},
		{name: "plain text withheld", raw: "password=hostile-S15-text", code: toolerr.UpstreamUnavailable, secrets: []string{"hostile-S15-text"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := admin(t, faketuliprox.Options{})
			e.fake.Lock()
			if c.raw != "" {
				e.fake.Data().RawConfig = []byte(c.raw)
			} else {
				e.fake.Data().Config = c.doc.(map[string]any)
			}
			e.fake.Unlock()
			e.service(t).RunReads(t, []toolkittest.ReadCase{{Name: "get_config", Tool: tools.ToolConfig, Code: c.code, Has: c.has}},
				append(c.secrets, secrets...)...)
		})
	}
}

func deep(n int, leaf map[string]any) map[string]any {
	m := leaf
	for range n {
		m = map[string]any{"d": m}
	}
	return m
}

// Other tools lose provider URLs and path credentials even when Tuliprox
// (or a hostile neighbour answering for it) sends them.
func TestResultsLoseProviderURLs(t *testing.T) {
	e := admin(t, faketuliprox.Options{Hostile: true})
	e.fake.Lock()
	e.fake.Data().Streams[0]["note"] = "relay http://u:p@line.example/live/u/" + faketuliprox.SecretStreamURLPass + "/1.ts?token=x"
	// A logo that carries the line's credentials, which Tuliprox itself
	// would null (§4.3) and this neighbour does not.
	e.fake.Data().Targets[0].Records[0].Logo = "http://bob:hostile-logo-pw@logos.example/live/bob/hostile-logo-path/1.png?token=hostile-logo-tok"
	e.fake.Unlock()
	e.service(t).RunReads(t, []toolkittest.ReadCase{
		{Name: "items", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "video", "fields": []any{"additional_properties"}},
			Has: []string{`"plot"`}, HasNot: []string{"direct_source", "cover_url"}},
		{Name: "streams", Tool: tools.ToolStreams, Has: []string{"relay http://"}, HasNot: []string{"u:p@"}},
		{Name: "a logo with credentials", Tool: tools.ToolItems, Args: map[string]any{"target": "main", "cluster": "live", "fields": []any{"name", "logo", "logo_small"}, "limit": 1},
			Has: []string{"/live/********/********/1.png"}, HasNot: []string{"hostile-logo-pw", "hostile-logo-path", "hostile-logo-tok"}},
		{Name: "history", Tool: tools.ToolHistory, Args: map[string]any{"page_size": 200}, HasNot: []string{"provider_url"}},
	}, secrets...)
}

func TestScrubbingLeavesHarmlessTextAlone(t *testing.T) {
	e := admin(t, faketuliprox.Options{})
	e.fake.Lock()
	e.fake.Data().Config = map[string]any{"name": "main/live/list", "desc": "Live/news and sport", "count": 3, "tags": []any{"a/b", "user guide"}}
	e.fake.Unlock()
	e.service(t).RunReads(t, []toolkittest.ReadCase{{Tool: tools.ToolConfig,
		Check: func(t *testing.T, got map[string]any) {
			b, _ := json.Marshal(got)
			for _, w := range []string{`"name":"main/live/list"`, `"desc":"Live/news and sport"`, `"user guide"`} {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s lost %s", b, w)
				}
			}
		}}})
}
