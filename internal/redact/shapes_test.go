package redact

import (
	"strings"
	"testing"
)

const (
	testJWT      = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	testBotToken = "123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"
)

// Credentials that announce themselves by their shape are redacted
// wherever they stand, with no name in front of them: a JWT (three
// base64url parts, the first a JSON header "eyJ…"), a Telegram-style bot
// token (/bot<id>:<secret>/), and user:password@host written without a
// scheme (proxy settings: HTTPS_PROXY, curl -x).
func TestCredentialsAreRedactedByTheirShape(t *testing.T) {
	r := New()
	tests := []struct{ name, in, want string }{
		{"bare jwt", "token " + testJWT + " here", "token [REDACTED] here"},
		{"jwt alone", testJWT, Marker},
		{"jwt in a path", "https://h/reset/" + testJWT + "/confirm", "https://h/reset/[REDACTED]/confirm"},
		{"jwt in quotes", `"` + testJWT + `"`, `"[REDACTED]"`},
		{"jwt after a colon", "id_token:" + testJWT, "id_token:[REDACTED]"},
		{"unsecured jwt", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. next", "[REDACTED]. next"},
		{"jwt ends a sentence", "It was " + testJWT + ".", "It was [REDACTED]."},
		{"jwe with five parts", "eyJhbGciOiJkaXIiLCJlbmMiOiJBMTI4R0NNIn0..8ZJo4cm1.aXjU5xW0RXg.tC7v-rNfg8hI z", "[REDACTED] z"},
		{"bot token in a path", "https://api.telegram.org/bot" + testBotToken + "/sendMessage", "https://api.telegram.org/bot[REDACTED]/sendMessage"},
		{"bot token upper-case prefix", "GET /BOT" + testBotToken + "/getMe", "GET /BOT[REDACTED]/getMe"},
		{"bare bot token", "telegram " + testBotToken + " ok", "telegram [REDACTED] ok"},
		{"bot token in quotes", `'` + testBotToken + `'`, `'[REDACTED]'`},
		{"proxy without scheme", "proxy bob:hunter2@proxy.lan:3128", "proxy [REDACTED]@proxy.lan:3128"},
		{"proxy env entry", "HTTPS_PROXY=bob:hunter2@proxy.lan:3128", "HTTPS_PROXY=[REDACTED]@proxy.lan:3128"},
		{"proxy with a path", "via bob:p4ss@10.0.0.2:8080/x", "via [REDACTED]@10.0.0.2:8080/x"},
		{"proxy without port", "bob:hunter2@proxy.lan", "[REDACTED]@proxy.lan"},
		{"colon in the password", "curl -x bob:a:b@proxy.lan:3128 h", "curl -x [REDACTED]@proxy.lan:3128 h"},
		{"proxy in json", `{"proxy":"bob:hunter2@proxy.lan:3128"}`, `{"proxy":"[REDACTED]@proxy.lan:3128"}`},
		{"ipv6 host", "bob:pw@[fd00::1]:3128", "[REDACTED]@[fd00::1]:3128"},
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

// Ordinary text shaped a little like those credentials stays as it is.
func TestLookalikesOfShapedCredentialsStay(t *testing.T) {
	r := New()
	for _, in := range []string{
		"mailto:bob@example.com",
		"sip:alice@atlanta.example.com",
		"contact bob@example.com or git@github.com:org/repo.git",
		"nginx:1.25@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b5a",
		"ghcr.io/org/app:v1@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b5a",
		"registry:5000/img@sha256:abc",
		"at 12:30 on 2024-01-01T10:00:00Z",
		"ratio 16:9, item 12345:67890",
		"eyJ is how base64 of {\" starts",
		"eyJhbGciOiJIUzI1NiJ9 alone is only a header",
		"keyJunk.eyJfoo.bar",
		"seasons 123456:abc",
		"1:0 after 90:00",
		"S01E02: The Return @ 21:00",
	} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q, want it unchanged", in, got)
		}
	}
}

// The new shapes keep the rules linear: a megabyte of near-misses
// finishes, and clean text costs no allocation.
func TestShapeRulesStayCheap(t *testing.T) {
	r := New()
	for _, unit := range []string{"eyJ.", "eyJaaaaaaaaaa.b", "1:", "12345:", "bot1:", "a:b@", "a:b@@", ":@"} {
		in := strings.Repeat(unit, (1<<20)/len(unit))
		_ = r.String(in)
	}
	if s := r.String(strings.Repeat("a:"+testBotToken[:20], 1000)); s == "" {
		t.Fatal("empty")
	}
	for _, in := range []string{"S01E02: The Return @ 21:00", "eyJ is how it starts", "ratio 16:9, item 12345:67890"} {
		if allocs := testing.AllocsPerRun(50, func() { _ = r.String(in) }); allocs != 0 {
			t.Errorf("String(%q) allocated %v times", in, allocs)
		}
	}
}
