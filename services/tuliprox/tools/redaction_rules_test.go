package tools

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Every per-member rule of both passes, pinned to its exact output: the
// black-box tests show that no secret comes back, these show what comes
// back instead, including the rules the demo data reaches only by
// accident (which rule wins for a key that is both, empty and container
// values, the depth bound's edge, keys rewritten like values).
func TestRedactionRulesExactly(t *testing.T) {
	num := json.Number("7")
	cases := []struct {
		name           string
		in             any
		config, result any // redactConfig's and scrubResult's output
	}{
		{name: "secret keys: config masks any value, other results keep it",
			in:     map[string]any{"db_password": "p", "Api-Key": num, "X-Authorization": map[string]any{"a": "b"}, "secret_list": []any{"s"}},
			config: map[string]any{"db_password": Mask, "Api-Key": Mask, "X-Authorization": Mask, "secret_list": Mask},
			result: map[string]any{"db_password": "p", "Api-Key": num, "X-Authorization": map[string]any{"a": "b"}, "secret_list": []any{"s"}}},
		{name: "a secret key that is also a URL key: config masks, other results drop",
			in:     map[string]any{"token_url": "http://h.example/t", "keep": true},
			config: map[string]any{"token_url": Mask, "keep": true},
			result: map[string]any{"keep": true}},
		{name: "user names: config masks scalars, walks containers, keeps empties",
			in: map[string]any{"user": "u", "Username": num, "USER": false,
				"a": map[string]any{"user": ""}, "b": map[string]any{"user": nil}, "c": map[string]any{"user": []any{}},
				"d": map[string]any{"user": map[string]any{"name": "n", "password": "p"}}, "e": map[string]any{"username": []any{"x", map[string]any{"token": "t"}}}},
			config: map[string]any{"user": Mask, "Username": Mask, "USER": Mask,
				"a": map[string]any{"user": ""}, "b": map[string]any{"user": nil}, "c": map[string]any{"user": []any{}},
				"d": map[string]any{"user": map[string]any{"name": "n", "password": Mask}}, "e": map[string]any{"username": []any{"x", map[string]any{"token": Mask}}}},
			result: map[string]any{"user": "u", "Username": num, "USER": false,
				"a": map[string]any{"user": ""}, "b": map[string]any{"user": nil}, "c": map[string]any{"user": []any{}},
				"d": map[string]any{"user": map[string]any{"name": "n", "password": "p"}}, "e": map[string]any{"username": []any{"x", map[string]any{"token": "t"}}}}},
		{name: "URL keys: config withholds non-empty values and walks empty ones, other results drop them",
			in: map[string]any{"url": "http://h.example/", "URLS": []any{"a"}, "cover_url": map[string]any{"x": 1}, "logoUrl": num,
				"direct_source": "d", "catch-up source": "c", "catchup_source": "c", "stream_url": "s", "uri": "/x", "provider_urls": []any{"p"},
				"epg_url": "", "base_url": nil, "hook_urls": []any{}, "icon_url": map[string]any{}, "curly": "kept"},
			config: map[string]any{"url": URLWithheld, "URLS": URLWithheld, "cover_url": URLWithheld, "logoUrl": URLWithheld,
				"direct_source": URLWithheld, "catch-up source": URLWithheld, "catchup_source": URLWithheld, "stream_url": URLWithheld, "uri": URLWithheld, "provider_urls": URLWithheld,
				"epg_url": "", "base_url": nil, "hook_urls": []any{}, "icon_url": map[string]any{}, "curly": "kept"},
			result: map[string]any{"curly": "kept"}},
		{name: "strings: config withholds absolute URLs, other results mask their credentials",
			in: []any{"relay http://bob:pw@line.example/live/bob/pw/1.ts?token=t&x=1 ok", "/live/bob/pw/55.ts", "movie/bob/pw/9.mkv",
				"?username=u&password=p&type=m3u", "get.php?user=u&pass=p", "note ?token=t&x=1", "main/live/list", "Live/news and sport", "plain"},
			config: []any{"relay " + URLWithheld + " ok", "/live/" + Mask + "/" + Mask + "/55.ts", "movie/" + Mask + "/" + Mask + "/9.mkv",
				"?password=" + Mask + "&type=m3u&username=" + Mask, "get.php?pass=" + Mask + "&user=" + Mask, "note ?token=" + Mask + "&x=1", "main/live/list", "Live/news and sport", "plain"},
			result: []any{"relay http://" + Mask + "@line.example/live/" + Mask + "/" + Mask + "/1.ts?token=" + Mask + "&x=1 ok", "/live/" + Mask + "/" + Mask + "/55.ts", "movie/" + Mask + "/" + Mask + "/9.mkv",
				"?username=" + Mask + "&password=" + Mask + "&type=m3u", "get.php?user=" + Mask + "&pass=" + Mask, "note ?token=" + Mask + "&x=1", "main/live/list", "Live/news and sport", "plain"}},
		{name: "Xtream's root form host[:port]/<user>/<pass>/<id>: masked with or without scheme, plain paths kept",
			in: []any{"line.example:8080/bob/pw/1234.ts", "10.0.0.7:25461/bob/pw/55 first", "http://u:p@line.example/bob/pw/9.m3u8?x=1",
				"provider:8080/bob/pw/7", "Sports/Football/2024", "main/live/list", "/app/data/1.ts", "line.example/docs/page/intro"},
			config: []any{"line.example:8080/" + Mask + "/" + Mask + "/1234.ts", "10.0.0.7:25461/" + Mask + "/" + Mask + "/55 first", URLWithheld,
				"provider:8080/" + Mask + "/" + Mask + "/7", "Sports/Football/2024", "main/live/list", "/app/data/1.ts", "line.example/docs/page/intro"},
			result: []any{"line.example:8080/" + Mask + "/" + Mask + "/1234.ts", "10.0.0.7:25461/" + Mask + "/" + Mask + "/55 first", "http://" + Mask + "@line.example/" + Mask + "/" + Mask + "/9.m3u8?x=1",
				"provider:8080/" + Mask + "/" + Mask + "/7", "Sports/Football/2024", "main/live/list", "/app/data/1.ts", "line.example/docs/page/intro"}},
		{name: "headers: config masks all but the visible ones, in maps and in Name: value lists; other results keep them",
			in: map[string]any{"a": map[string]any{"headers": map[string]any{"X-Auth": "h1", "User-Agent": "VLC", "accept": "*/*", "X-Num": num, "X-List": []any{"h2"}}},
				"b": map[string]any{"headers": []any{"X-Auth: h3", "Accept: text/html", "no colon", num}}, "c": map[string]any{"headers": map[string]any{}}, "d": map[string]any{"headers": nil}},
			config: map[string]any{"a": map[string]any{"headers": map[string]any{"X-Auth": Mask, "User-Agent": "VLC", "accept": "*/*", "X-Num": Mask, "X-List": Mask}},
				"b": map[string]any{"headers": []any{"X-Auth: " + Mask, "Accept: text/html", Mask, Mask}}, "c": map[string]any{"headers": map[string]any{}}, "d": map[string]any{"headers": nil}},
			result: map[string]any{"a": map[string]any{"headers": map[string]any{"X-Auth": "h1", "User-Agent": "VLC", "accept": "*/*", "X-Num": num, "X-List": []any{"h2"}}},
				"b": map[string]any{"headers": []any{"X-Auth: h3", "Accept: text/html", "no colon", num}}, "c": map[string]any{"headers": map[string]any{}}, "d": map[string]any{"headers": nil}}},
		{name: "keys that are walked are rewritten as strings are",
			in:     map[string]any{"http://u:p@h.example/": num, "live/bob/pw/1.ts": "v", "plain key": "v"},
			config: map[string]any{URLWithheld: num, "live/" + Mask + "/" + Mask + "/1.ts": "v", "plain key": "v"},
			result: map[string]any{"http://" + Mask + "@h.example/": num, "live/" + Mask + "/" + Mask + "/1.ts": "v", "plain key": "v"}},
		{name: "scalars and a scalar root pass", in: []any{num, true, nil, 2.5}, config: []any{num, true, nil, 2.5}, result: []any{num, true, nil, 2.5}},
		{name: "a string root", in: "http://u:p@h.example/", config: URLWithheld, result: "http://" + Mask + "@h.example/"},
		{name: "the deepest level followed", in: nest(maxDepth, "live/bob/pw/1.ts"),
			config: nest(maxDepth, "live/"+Mask+"/"+Mask+"/1.ts"), result: nest(maxDepth, "live/"+Mask+"/"+Mask+"/1.ts")},
		{name: "one level deeper is withheld", in: nest(maxDepth+1, "v"), config: nest(maxDepth+1, tooDeep), result: nest(maxDepth+1, tooDeep)},
		{name: "lists count as levels", in: nestList(maxDepth+1, "v"), config: nestList(maxDepth+1, tooDeep), result: nestList(maxDepth+1, tooDeep)},
		{name: "api_proxy users become counts before the walk (config only)",
			in: map[string]any{"api_proxy": map[string]any{"server": []any{map[string]any{"name": "s", "url": "http://h/"}},
				"user": []any{map[string]any{"target": "main", "credentials": []any{map[string]any{"username": "a", "password": "b"}, "x"}}, "odd", map[string]any{"credentials": "c"}}}},
			config: map[string]any{"api_proxy": map[string]any{"server": []any{map[string]any{"name": "s", "url": URLWithheld}},
				"user": []any{map[string]any{"target": "main", "users": 2}, map[string]any{"users": 0}, map[string]any{"users": 0}}}},
			result: map[string]any{"api_proxy": map[string]any{"server": []any{map[string]any{"name": "s"}},
				"user": []any{map[string]any{"target": "main", "credentials": []any{map[string]any{"username": "a", "password": "b"}, "x"}}, "odd", map[string]any{"credentials": "c"}}}}},
		{name: "an api_proxy user that is not a list is masked (config only)",
			in:     map[string]any{"api_proxy": map[string]any{"user": "bob"}, "other": map[string]any{"api_proxy": map[string]any{"user": []any{}}}},
			config: map[string]any{"api_proxy": map[string]any{"user": Mask}, "other": map[string]any{"api_proxy": map[string]any{"user": []any{}}}},
			result: map[string]any{"api_proxy": map[string]any{"user": "bob"}, "other": map[string]any{"api_proxy": map[string]any{"user": []any{}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := js(c.in)
			if got := redactConfig(c.in); !reflect.DeepEqual(got, c.config) {
				t.Errorf("redactConfig:\n got  %s\n want %s", js(got), js(c.config))
			}
			if got := scrubResult(c.in); !reflect.DeepEqual(got, c.result) {
				t.Errorf("scrubResult:\n got  %s\n want %s", js(got), js(c.result))
			}
			if after := js(c.in); after != before {
				t.Errorf("the input changed:\n was %s\n now %s", before, after)
			}
		})
	}
}

// nest puts leaf into n nested objects: leaf sits at depth n.
func nest(n int, leaf any) any {
	v := any(map[string]any{"leaf": leaf})
	for range n - 1 {
		v = map[string]any{"d": v}
	}
	return v
}

// nestList is nest with lists.
func nestList(n int, leaf any) any {
	v := any([]any{leaf})
	for range n - 1 {
		v = []any{v}
	}
	return v
}

// js is v as JSON; every value here has one.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
