package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// knownSecret is registered with the redactor in the tests below.
const knownSecret = "k3y/Secret+v@lue"

func TestString(t *testing.T) {
	r := New([]byte(knownSecret), []byte("short"))
	tests := []struct {
		name, in, want string
	}{
		// Text without secrets is untouched.
		{"plain", "The Expanse S01E02", "The Expanse S01E02"},
		{"time and ratio", "12:30 at 16:9, a=b", "12:30 at 16:9, a=b"},
		{"plain URL", "https://host:8989/api/v3/series?page=2&sortKey=title#top", "https://host:8989/api/v3/series?page=2&sortKey=title#top"},
		{"mailto", "mailto:bob@example.com", "mailto:bob@example.com"},
		{"email in text", "contact bob@example.com", "contact bob@example.com"},
		{"empty", "", ""},

		// URL userinfo.
		{"userinfo", "https://user:pass@host/path", "https://[REDACTED]@host/path"},
		{"userinfo no path", "see http://admin:hunter2@10.0.0.5:8080.", "see http://[REDACTED]@10.0.0.5:8080."},
		{"userinfo encoded", "https://me%40mail.com:p%40ss%3Aw@host/", "https://[REDACTED]@host/"},
		{"userinfo raw at", "https://user:p@ss@host/x", "https://[REDACTED]@host/x"},
		{"user only", "ssh://git@github.com/x", "ssh://[REDACTED]@github.com/x"},
		{"two urls", "a https://u:p@h1/ b ftp://v:q@h2", "a https://[REDACTED]@h1/ b ftp://[REDACTED]@h2"},
		{"at in path is not userinfo", "https://host/user@x", "https://host/user@x"},
		{"at in query is not userinfo", "https://host?u=a@b", "https://host?u=a@b"},
		{"postgres dsn", "postgres://app:s3cr3t@db:5432/app?sslmode=disable", "postgres://[REDACTED]@db:5432/app?sslmode=disable"},

		// Webhook URLs: whoever knows the path triggers the hook.
		{"home assistant webhook", "POST https://ha.lan:8123/api/webhook/-Xk9_planted-id now", "POST https://ha.lan:8123/api/webhook/[REDACTED] now"},
		{"relative webhook path", `"/api/webhook/3b6f0c2e9d8a71f4"`, `"/api/webhook/[REDACTED]"`},
		{"webhook path with a query", "/api/webhook/abc123?x=1#f", "/api/webhook/[REDACTED]?x=1#f"},
		{"discord webhook", "https://discord.com/api/webhooks/1234/tok-EN_x", "https://discord.com/api/webhooks/[REDACTED]"},
		{"capitalised segment", "http://h/Webhook/abc", "http://h/Webhook/[REDACTED]"},
		{"nabu casa cloudhook", "cloudhook https://hooks.nabu.casa/gAAAAABplanted== ok", "cloudhook https://hooks.nabu.casa/[REDACTED] ok"},
		{"slack hook", "https://hooks.slack.com/services/T0/B0/XXXX", "https://hooks.slack.com/[REDACTED]"},
		{"hook host after userinfo", "https://u:p@hooks.example.net/abc", "https://[REDACTED]@hooks.example.net/[REDACTED]"},
		{"webhook id pair", "webhook_id: -Xk9_planted-id\nplatform: webhook", "webhook_id: [REDACTED]\nplatform: webhook"},
		{"webhook words are not paths", "platform: webhook, a webhook/trigger, /webhooks, webhooks.example/x, /api/webhook/", "platform: webhook, a webhook/trigger, /webhooks, webhooks.example/x, /api/webhook/"},
		{"hooks host without a path", "https://hooks.nabu.casa", "https://hooks.nabu.casa"},
		{"not a hooks host", "https://githooks.example/abc", "https://githooks.example/abc"},

		// Query parameters.
		{"apikey", "http://h/api?apikey=abc123", "http://h/api?apikey=[REDACTED]"},
		{"mixed case", "http://h/api?ApiKey=abc123&page=1", "http://h/api?ApiKey=[REDACTED]&page=1"},
		{"multiple", "http://h/?a=1&token=t1&api_key=k2&sig=s3&b=2", "http://h/?a=1&token=[REDACTED]&api_key=[REDACTED]&sig=[REDACTED]&b=2"},
		{"fragment after", "http://h/?access_token=xyz#frag", "http://h/?access_token=[REDACTED]#frag"},
		{"in fragment", "http://h/cb#access_token=xyz&state=1", "http://h/cb#access_token=[REDACTED]&state=1"},
		{"plex token", "http://plex:32400/library?X-Plex-Token=AbCdEf", "http://plex:32400/library?X-Plex-Token=[REDACTED]"},
		{"amz signature", "https://s3/obj?X-Amz-Signature=ffee&X-Amz-Date=1", "https://s3/obj?X-Amz-Signature=[REDACTED]&X-Amz-Date=1"},
		{"key param", "https://maps/api?key=AIzaXYZ", "https://maps/api?key=[REDACTED]"},
		{"password and secret", "?password=p&secret=s&auth=a", "?password=[REDACTED]&secret=[REDACTED]&auth=[REDACTED]"},
		{"non-secret lookalikes", "?keys=1&monkey=2&tokens_used=3&nextPageToken=4", "?keys=1&monkey=2&tokens_used=3&nextPageToken=4"},
		{"empty value", "?token=&a=1", "?token=&a=1"},
		{"comparison", "if token == nil", "if token == nil"},
		{"scheme-like", "token://x", "token://x"},

		// Environment entries, logs, headers, embedded JSON.
		{"env entry", "SONARR_API_KEY=0123abcd", "SONARR_API_KEY=[REDACTED]"},
		{"log line", "login failed password=hunter2 user=bob", "login failed password=[REDACTED] user=bob"},
		{"header", "X-Api-Key: abc123", "X-Api-Key: [REDACTED]"},
		{"cookie line", "Cookie: a=1; sid=2\nHost: h", "Cookie: [REDACTED]\nHost: h"},
		{"set-cookie", "Set-Cookie: session=abc; Path=/; HttpOnly", "Set-Cookie: [REDACTED]"},
		{"token scheme", "auth: Token abc123 more", "auth: Token [REDACTED] more"},
		{"authorization line", "Authorization: Bearer abc def\nnext", "Authorization: Bearer [REDACTED]\nnext"},
		{"digest line", `Proxy-Authorization: Digest username="u"`, `Proxy-Authorization: Digest [REDACTED]`},
		{"json text", `{"apiKey": "abc", "title": "x"}`, `{"apiKey": "[REDACTED]", "title": "x"}`},
		{"escaped json text", `{\"password\":\"abc\",\"x\":1}`, `{\"password\":\"[REDACTED]\",\"x\":1}`},
		{"single quotes", `password='a b c' next`, `password='[REDACTED]' next`},
		{"unterminated quote", `token="abc def`, `token="[REDACTED]`},
		{"secret named header", "Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic [REDACTED]"},

		// Bearer and Basic.
		{"bearer", "Bearer eyJhbGciOi.eyJzdWIi.sig-_x", "Bearer [REDACTED]"},
		{"bearer lower", "curl -H 'authorization: bearer abc123XYZ'", "curl -H 'authorization: bearer [REDACTED]'"},
		{"bearer in text", "sent Bearer Zm9vYmFy== to host", "sent Bearer [REDACTED] to host"},
		{"bearer prose", "uses Bearer authentication", "uses Bearer authentication"},
		{"bearer realm", `Bearer realm="example"`, `Bearer realm="example"`},
		{"basic", "Basic dXNlcjpwYXNz", "Basic [REDACTED]"},
		{"basic unpadded", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", "Basic [REDACTED]"},
		{"basic prose", "Basic authentication is enabled", "Basic authentication is enabled"},
		{"basic realm", `Basic realm="Sonarr"`, `Basic realm="Sonarr"`},
		{"not a word boundary", "subearer abc123", "subearer abc123"},

		// Known values.
		{"known exact", knownSecret, Marker},
		{"known inside", "prefix" + knownSecret + "suffix", "prefix[REDACTED]suffix"},
		{"known twice", knownSecret + " " + knownSecret, "[REDACTED] [REDACTED]"},
		{"known query escaped", "http://h/x?q=k3y%2FSecret%2Bv%40lue", "http://h/x?q=[REDACTED]"},
		{"known path escaped", "http://h/k3y%2FSecret+v@lue/x", "http://h/[REDACTED]/x"},
		{"short known ignored", "short story", "short story"},

		// Known values re-encoded by an upstream.
		{"known base64", base64.StdEncoding.EncodeToString([]byte(knownSecret)), Marker},
		{"known base64 unpadded", "v=" + base64.RawStdEncoding.EncodeToString([]byte(knownSecret)) + ";", "v=" + Marker + ";"},
		{"known base64url", base64.URLEncoding.EncodeToString([]byte(knownSecret)), Marker},
		{"known base64url unpadded", base64.RawURLEncoding.EncodeToString([]byte(knownSecret)), Marker},
		{"known json escaped slash", `{"k":"k3y\/Secret+v@lue"}`, `{"k":"[REDACTED]"}`},
		{"known json unicode escaped", `k3y\u002fSecret\u002Bv\u0040lue`, Marker},
		{"known percent lower case", "http://h/x?q=k3y%2fSecret%2bv%40lue&p=1", "http://h/x?q=[REDACTED]&p=1"},
		{"known percent mixed", "k3y%2FSecret%2bv@lue", Marker},
		{"known html decimal entities", "k3y&#47;Secret&#43;v&#64;lue", Marker},
		{"known html one entity", "<td>k3y/Secret&#43;v@lue</td>", "<td>[REDACTED]</td>"},
		{"known html hex entities", "k3y&#x2f;Secret&#X2B;v&#x40;lue", Marker},

		// Pairs hidden by an encoding or written differently.
		{"percent-encoded next parameter", "/login?next=%2Fapi%3Fapikey%3Dabc123%26page%3D2", "/login?next=%2Fapi%3Fapikey%3D[REDACTED]%26page%3D2"},
		{"percent-encoded lower case", "/login?next=%2fapi%3ftoken%3dabc123", "/login?next=%2fapi%3ftoken%3d[REDACTED]"},
		{"html-escaped json", `{&quot;password&quot;:&quot;abc&quot;}`, `{&quot;password&quot;:&quot;[REDACTED]&quot;}`},
		{"fat arrow", `password => 'hunter2 x', user => 'bob'`, `password => '[REDACTED]', user => 'bob'`},
		{"fat arrow quoted name", `{'api_key'=>"abc123"}`, `{'api_key'=>"[REDACTED]"}`},
		{"fat arrow symbol", `:password => secret123, :user => "bob"`, `:password => [REDACTED], :user => "bob"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.String(tt.in)
			if got != tt.want {
				t.Fatalf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := r.String(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestNilRedactor(t *testing.T) {
	var r *Redactor
	if got := r.String("?token=abc"); got != "?token=[REDACTED]" {
		t.Fatalf("nil Redactor String = %q", got)
	}
	got := r.Value(map[string]any{"password": "x"}).(map[string]any)
	if got["password"] != Marker {
		t.Fatalf("nil Redactor Value = %v", got)
	}
}

func TestStringDoesNotAllocateWithoutSecrets(t *testing.T) {
	r := New([]byte(knownSecret))
	inputs := []string{
		"The Expanse",
		"https://artworks.thetvdb.com/banners/posters/280619-1.jpg",
		"/MediaCover/12/poster.jpg?lastWrite=638412345678901234",
		"Bob said: basic stuff, a=b; time 12:30 bearer",
		strings.Repeat("lorem ipsum: dolor=sit ", 200),
	}
	for _, in := range inputs {
		allocs := testing.AllocsPerRun(50, func() { _ = r.String(in) })
		if allocs != 0 {
			t.Errorf("String(%.40q...) allocated %v times", in, allocs)
		}
	}
}

func TestNewIgnoresShortAndDuplicateValues(t *testing.T) {
	r := New([]byte("abc"), []byte(""), nil, []byte("abcdef"), []byte("abcdef"))
	if len(r.raw) != 1 || r.raw[0] != "abcdef" {
		t.Fatalf("known = %q, want only abcdef once", r.raw)
	}
	buf := []byte("mutable1")
	r = New(buf)
	copy(buf, "XXXXXXXX")
	if got := r.String("a mutable1 b"); got != "a [REDACTED] b" {
		t.Fatalf("New kept a reference to the caller's slice: %q", got)
	}
}

func TestNewReplacesLongestFirst(t *testing.T) {
	r := New([]byte("abcdef"), []byte("abcdefghij"))
	if got := r.String("x abcdefghij y"); got != "x [REDACTED] y" {
		t.Fatalf("got %q", got)
	}
}
