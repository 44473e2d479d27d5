package redact

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestHugeStrings runs every rule over 1 MB inputs built to provoke
// quadratic scans (a quadratic rule would need ~10^12 steps, so the test
// finishing at all is the assertion about time; the checks are about the
// result), then a 10 MB document through String, Value and JSON.
func TestHugeStrings(t *testing.T) {
	const size = 1 << 20
	r := New([]byte(knownSecret))
	rep := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, out string)
	}{
		{"plain text", rep("abcdefghij "), unchanged},
		{"separators", rep("a=b:c "), unchanged},
		{"long name", rep("x") + "_token=abc", endsWith("_token=[REDACTED]")},
		{"long value", "token=" + rep("v"), equals("token=[REDACTED]")},
		{"unterminated quotes", rep(`token="`), prefix(`token="[REDACTED]`)},
		{"scheme separators", rep("://"), unchanged},
		{"userinfo everywhere", rep("h://u:p@x "), noSubstring("u:p@")},
		{"authority without end", "https://" + rep("a") + "@h", equals("https://[REDACTED]@h")},
		{"bearer words", rep("bearer "), unchanged},
		{"bearer tokens", rep("Bearer Ab1 "), noSubstring("Ab1")},
		{"basic tokens", rep("Basic dXNlcjpwYXNz "), noSubstring("dXNlcjpwYXNz")},
		{"long basic token", "Basic " + rep("QUFB"), equals("Basic [REDACTED]")},
		{"known values", rep(knownSecret + " "), noSubstring(knownSecret)},
		{"header lines", rep("Cookie: a=b\n"), noSubstring("a=b")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := r.String(tt.in)
			if tt.check != nil {
				tt.check(t, out)
			} else if out != tt.in {
				t.Fatal("changed")
			}
		})
	}
	// 10 MB of realistic text, through String, Value and JSON.
	big := strings.Repeat("GET http://h:8989/api?page=1 took 12:30 "+knownSecret+" b=c\n", 10<<20/64) + "?apikey=abc"
	if s := r.String(big); strings.Contains(s, knownSecret) || !strings.HasSuffix(s, "?apikey=[REDACTED]") {
		t.Fatal("String missed a secret in 10 MB")
	}
	v := r.Value(map[string]any{"s": big}).(map[string]any)
	if s := v["s"].(string); !strings.HasSuffix(s, "?apikey=[REDACTED]") {
		t.Fatalf("Value tail = %q", s[len(s)-30:])
	}
	raw, _ := json.Marshal(map[string]any{"s": big})
	out, err := r.JSON(raw)
	if err != nil || !strings.HasSuffix(string(out), `?apikey=[REDACTED]"}`) {
		t.Fatalf("JSON tail = %q, %v", out[len(out)-30:], err)
	}
}

var unchanged func(t *testing.T, out string)

func equals(want string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		if out != want {
			t.Fatalf("got %.80q (len %d), want %q", out, len(out), want)
		}
	}
}

func prefix(want string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		if !strings.HasPrefix(out, want) {
			t.Fatalf("got %.80q, want prefix %q", out, want)
		}
	}
}

func endsWith(want string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		if !strings.HasSuffix(out, want) {
			t.Fatalf("got ...%q, want suffix %q", out[max(0, len(out)-40):], want)
		}
	}
}

func noSubstring(bad string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		if i := strings.Index(out, bad); i >= 0 {
			t.Fatalf("%q survived at %d: %.80q", bad, i, out[i:])
		}
	}
}

func TestInvalidUTF8(t *testing.T) {
	r := New([]byte(knownSecret))
	tests := []struct {
		name, in, want string
	}{
		{"untouched", "caf\xe9 \xff\xfe", "caf\xe9 \xff\xfe"},
		{"query", "\xff?token=\xfe\xfd&a=1", "\xff?token=[REDACTED]&a=1"},
		{"userinfo", "http://\xffu:p\xfe@h/", "http://[REDACTED]@h/"},
		{"known next to bad bytes", "\xff" + knownSecret + "\xfe", "\xff[REDACTED]\xfe"},
		{"bad key name", "\xffpassword=x", "\xffpassword=[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
	// As keys and values of a document, and through JSON(): the result must
	// still encode (encoding/json substitutes U+FFFD).
	v := r.Value(map[string]any{"\xffk": "\xfe?sig=\xfd", "api\xffkey": "x", "api_key": "\xff"})
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(out) || strings.Contains(string(out), `"api_key":"\ufffd"`) {
		t.Fatalf("bad output %s", out)
	}
	m := v.(map[string]any)
	if m["api_key"] != Marker || m["\xffk"] != "\xfe?sig=[REDACTED]" {
		t.Fatalf("got %q", m)
	}
	if got, err := r.JSON([]byte("{\"token\":\"\xff\"}")); err != nil || string(got) != `{"token":"[REDACTED]"}` {
		t.Fatalf("JSON = %s, %v", got, err)
	}
}
