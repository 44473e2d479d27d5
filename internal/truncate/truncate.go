// Package truncate cuts text to a byte budget without splitting a UTF-8
// character, so a capped result, log field or error message stays valid
// text.
package truncate

import "unicode/utf8"

// String returns the longest prefix of s that is at most n bytes and ends
// on a rune boundary.
func String(s string, n int) string {
	if n >= len(s) {
		return s
	}
	if n < 0 {
		n = 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
