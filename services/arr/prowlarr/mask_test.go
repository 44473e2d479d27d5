package prowlarr

import (
	"encoding/json"
	"testing"
)

func TestSafeLink(t *testing.T) {
	key := []byte("prowlarr-key-123456")
	cases := []struct {
		link string
		safe bool
	}{
		{"https://1337x.to/torrent/123/The-Matrix-1999/", true},
		{"https://tracker.example/details.php?id=123", true},
		{"https://wiki.servarr.com/prowlarr/system#indexers-are-unavailable", true},
		{"", false},
		{"magnet:?xt=urn:btih:abc", false},
		{"MAGNET:?xt=urn:btih:abc", false},
		{"http://prowlarr:9696/1/download?apikey=x&link=y", false},
		{"https://tracker.example/dl/1?passkey=abc", false},
		{"https://tracker.example/dl/1?torrent_pass=abc", false},
		{"https://tracker.example/rss?rsskey=abc", false},
		{"https://user:pw@tracker.example/", false},
		{"https://tracker.example/announce/0123456789abcdef0123456789abcdef", false},
		{"https://host.example/path/prowlarr-key-123456/x", false},
		{"https://host.example/cb#access_token=abc", false},
		{"ftp://host.example/file", false},
		{"javascript:alert(1)", false},
	}
	for _, tc := range cases {
		if got := SafeLink(tc.link, key) != ""; got != tc.safe {
			t.Errorf("SafeLink(%q) safe=%v, want %v", tc.link, got, tc.safe)
		}
	}
}

func TestMaskFields(t *testing.T) {
	f := func(name, label, typ, privacy, value string) Field {
		return Field{Name: name, Label: label, Type: typ, Privacy: privacy, Value: json.RawMessage(value)}
	}
	cases := []struct {
		field  Field
		shown  bool   // listed at all
		masked bool   // listed without value
		value  string // JSON of the value when shown
	}{
		{f("baseUrl", "URL", "textbox", "normal", `"https://api.example/"`), true, false, `"https://api.example/"`},
		{f("apiKey", "API Key", "textbox", "apiKey", `"k"`), true, true, ""},
		{f("x", "x", "textbox", "password", `"k"`), true, true, ""},
		{f("x", "x", "textbox", "userName", `"k"`), true, true, ""},
		{f("cookie", "Cookie", "textbox", "normal", `"c=1"`), true, true, ""},
		{f("passkey", "", "textbox", "normal", `"p"`), true, true, ""},
		{f("torrent_pass", "", "textbox", "normal", `"p"`), true, true, ""},
		{f("settings.authKey", "", "textbox", "normal", `"p"`), true, true, ""},
		{f("pin", "PIN", "password", "normal", `"1234"`), true, true, ""},
		{f("feed", "Feed", "textbox", "normal", `"https://t.example/rss?tp=abc"`), true, true, ""},
		{f("extra", "Extra", "textbox", "normal", `{"a":1}`), true, true, ""},
		{f("sort", "Sort", "select", "normal", `2`), true, false, `2`},
		{f("cats", "Categories", "select", "normal", `[2000,5000]`), true, false, `[2000,5000]`},
		{f("apiKey", "API Key", "textbox", "apiKey", `""`), false, false, ""},
		{f("vip", "VIP", "textbox", "normal", `null`), false, false, ""},
		{f("about", "About", "info", "normal", `"text"`), false, false, ""},
	}
	for _, tc := range cases {
		got := maskFields([]Field{tc.field})
		if (len(got) == 1) != tc.shown {
			t.Errorf("%s: shown=%v, want %v", tc.field.Name, len(got) == 1, tc.shown)
			continue
		}
		if !tc.shown {
			continue
		}
		if got[0].Masked != tc.masked {
			t.Errorf("%s: masked=%v, want %v", tc.field.Name, got[0].Masked, tc.masked)
		}
		if !tc.masked {
			b, _ := json.Marshal(got[0].Value)
			if string(b) != tc.value {
				t.Errorf("%s: value %s, want %s", tc.field.Name, b, tc.value)
			}
		} else if got[0].Value != nil {
			t.Errorf("%s: masked field carries a value", tc.field.Name)
		}
	}
}
