package redact

import (
	"encoding/base64"
	"slices"
	"strings"
	"unicode/utf8"
)

// An upstream may echo a secret re-encoded: base64 (inside a longer blob,
// at any alignment), percent-encoded in either case, JSON-escaped ("\/",
// "\u002b") or as HTML character references ("&#43;", "&#x2b;", "&amp;").
// Base64 cannot be undone in place, so each secret's base64 forms are
// matched as text; the character-level encodings are undone in a decoded
// view of the string, whose matches are mapped back to the original bytes.

// knownForm is one text form of a registered secret.
type knownForm struct {
	text string
	// b64 is the alphabet of a base64 form (nil for other forms); left and
	// right are how many alphabet characters next to it still carry bits
	// of the secret, removed with it.
	b64         *[256]bool
	left, right int
}

var stdAlphabet, urlAlphabet = alphabet("+/"), alphabet("-_")

func alphabet(extra string) *[256]bool {
	var a [256]bool
	for _, r := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + extra {
		a[r] = true
	}
	return &a
}

// base64Forms returns the part of secret's base64 encoding that does not
// depend on its neighbours, for each of the three byte alignments it can
// have inside a longer encoded blob, in the standard and URL alphabets.
func base64Forms(secret string) []knownForm {
	var out []knownForm
	for shift := range 3 {
		full := base64.RawStdEncoding.EncodeToString([]byte(strings.Repeat("\x00", shift) + secret))
		// The characters of the first group mix filler and secret bits,
		// and the last character of an incomplete group mixes the secret
		// with whatever follows it.
		skip := [3]int{0, 2, 3}[shift]
		drop := 0
		if (shift+len(secret))%3 != 0 {
			drop = 1
		}
		if len(full)-skip-drop < MinKnownLen {
			continue
		}
		core := full[skip : len(full)-drop]
		out = append(out,
			knownForm{text: core, b64: stdAlphabet, left: skip, right: drop},
			knownForm{text: toURLAlphabet(core), b64: urlAlphabet, left: skip, right: drop})
	}
	return out
}

func toURLAlphabet(s string) string {
	return strings.NewReplacer("+", "-", "/", "_").Replace(s)
}

// replaceForm replaces every occurrence of f in s.
func replaceForm(s string, f knownForm) string {
	if f.b64 == nil {
		return strings.ReplaceAll(s, f.text, Marker)
	}
	p := splicer{s: s}
	for i := 0; ; {
		j := strings.Index(s[i:], f.text)
		if j < 0 {
			break
		}
		from, to := i+j, i+j+len(f.text)
		for k := 0; k < f.left && from > i && f.b64[s[from-1]]; k++ {
			from--
		}
		for k := 0; k < f.right && to < len(s) && f.b64[s[to]]; k++ {
			to++
		}
		for k := 0; k < 2 && to < len(s) && s[to] == '='; k++ {
			to++
		}
		p.replace(from, to)
		i = to
	}
	return p.result()
}

// decodedView undoes one level of percent-encoding, JSON string escapes
// and HTML character references in s. off[i] is the position in s of the
// sequence that produced view[i]; off[len(view)] is len(s). ok is false,
// without allocating, when s holds no such sequence.
func decodedView(s string) (view string, off []int, ok bool) {
	first := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c == '%' || c == '&' || c == '\\') && escapeLen(s, i) > 0 {
			first = i
			break
		}
	}
	if first < 0 {
		return "", nil, false
	}
	b := make([]byte, 0, len(s))
	off = make([]int, 0, len(s)+1)
	for i := range first {
		b = append(b, s[i])
		off = append(off, i)
	}
	var enc [utf8.UTFMax]byte
	for i := first; i < len(s); {
		if n := escapeLen(s, i); n > 0 {
			r := escapeRune(s[i : i+n])
			var out []byte
			if s[i] == '%' {
				out = []byte{byte(r)} // a byte, not a code point
			} else {
				out = enc[:utf8.EncodeRune(enc[:], r)]
			}
			for _, c := range out {
				b = append(b, c)
				off = append(off, i)
			}
			i += n
			continue
		}
		b = append(b, s[i])
		off = append(off, i)
		i++
	}
	off = append(off, len(s))
	return string(b), off, true
}

var namedEntities = map[string]rune{"&amp;": '&', "&lt;": '<', "&gt;": '>', "&quot;": '"', "&apos;": '\''}

// escapeLen returns the length of the escape sequence at s[i], or 0.
func escapeLen(s string, i int) int {
	rest := s[i:]
	switch s[i] {
	case '%':
		if len(rest) >= 3 && isHex(rest[1]) && isHex(rest[2]) {
			return 3
		}
	case '\\':
		if len(rest) < 2 {
			return 0
		}
		switch rest[1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			return 2
		case 'u':
			if len(rest) >= 6 && isHex(rest[2]) && isHex(rest[3]) && isHex(rest[4]) && isHex(rest[5]) {
				if r := hexValue(rest[2:6]); utf8.ValidRune(r) {
					return 6
				}
			}
		}
	case '&':
		if len(rest) >= 4 && rest[1] == '#' {
			j, base := 2, 10
			if rest[2] == 'x' || rest[2] == 'X' {
				j, base = 3, 16
			}
			k := j
			for k < len(rest) && k < j+7 && (base == 16 && isHex(rest[k]) || '0' <= rest[k] && rest[k] <= '9') {
				k++
			}
			if k > j && k < len(rest) && rest[k] == ';' && escapeRune(rest[:k+1]) > 0 {
				return k + 1
			}
			return 0
		}
		for name := range namedEntities {
			if strings.HasPrefix(rest, name) {
				return len(name)
			}
		}
	}
	return 0
}

// escapeRune decodes one sequence that escapeLen accepted.
func escapeRune(seq string) rune {
	switch seq[0] {
	case '%':
		return hexValue(seq[1:3])
	case '\\':
		switch seq[1] {
		case 'u':
			return hexValue(seq[2:6])
		case 'b':
			return '\b'
		case 'f':
			return '\f'
		case 'n':
			return '\n'
		case 'r':
			return '\r'
		case 't':
			return '\t'
		}
		return rune(seq[1])
	}
	if r, ok := namedEntities[seq]; ok {
		return r
	}
	digits := seq[2 : len(seq)-1]
	var r rune
	if digits[0] == 'x' || digits[0] == 'X' {
		r = hexValue(digits[1:])
	} else {
		for _, c := range []byte(digits) {
			r = r*10 + rune(c-'0')
		}
	}
	if !utf8.ValidRune(r) || r == 0 {
		return 0
	}
	return r
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func hexValue(s string) rune {
	var r rune
	for _, c := range []byte(s) {
		switch {
		case c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a':
			r = r<<4 | rune(c-'a'+10)
		default:
			r = r<<4 | rune(c-'A'+10)
		}
	}
	return r
}

// redactView finds secrets in the decoded view of s (registered values and
// name=value pairs) and replaces the original bytes that encode them.
func (r *Redactor) redactView(s string) string {
	view, off, ok := decodedView(s)
	if !ok {
		return s
	}
	var spans [][2]int
	emit := func(from, to int) {
		if from, to = off[from], off[to]; to > from && s[from:to] != Marker {
			spans = append(spans, [2]int{from, to})
		}
	}
	if r != nil {
		for _, k := range r.raw {
			for i := 0; ; {
				j := strings.Index(view[i:], k)
				if j < 0 {
					break
				}
				emit(i+j, i+j+len(k))
				i += j + len(k)
			}
		}
	}
	pairSpans(view, emit)
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	p := splicer{s: s}
	last := 0
	for _, sp := range spans {
		if sp[0] < last {
			// Overlaps the previous span: extend it instead.
			if sp[1] > last {
				p.extend(sp[1])
				last = sp[1]
			}
			continue
		}
		p.replace(sp[0], sp[1])
		last = sp[1]
	}
	return p.result()
}
