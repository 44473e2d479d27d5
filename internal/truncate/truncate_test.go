package truncate

import (
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"aé", 2, "a"},  // é is 2 bytes
		{"a€", 3, "a"},  // € is 3 bytes
		{"a😀", 4, "a"},  // 😀 is 4 bytes
		{"a😀", 5, "a😀"}, // exactly fits
		{"\xff\xfe", 1, "\xff"},
	}
	for _, tc := range cases {
		if got := String(tc.in, tc.n); got != tc.want {
			t.Errorf("String(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("aé€😀", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got := String(s, n)
		if len(got) > max(n, 0) && len(got) != len(s) {
			t.Fatalf("too long: %d > %d", len(got), n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("cut a rune: %q -> %q", s, got)
		}
	})
}
