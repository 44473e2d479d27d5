package redact

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// splicer rebuilds a string only once a rule actually changes it, so text
// without secrets costs no allocation.
type splicer struct {
	s    string
	b    strings.Builder
	last int
	used bool
}

// replace substitutes Marker for s[from:to]; calls must move forward.
func (p *splicer) replace(from, to int) {
	if !p.used {
		p.used = true
		p.b.Grow(len(p.s))
	}
	p.b.WriteString(p.s[p.last:from])
	p.b.WriteString(Marker)
	p.last = to
}

// extend makes the last replacement reach to instead.
func (p *splicer) extend(to int) { p.last = to }

func (p *splicer) result() string {
	if !p.used {
		return p.s
	}
	p.b.WriteString(p.s[p.last:])
	return p.b.String()
}

// byteFinder yields the positions of two bytes in s in increasing order,
// using the vectorised IndexByte instead of a byte-by-byte loop.
type byteFinder struct {
	s      string
	a, b   byte
	na, nb int // next known positions; -1 before the first search
	init   bool
}

// from returns the first position >= i holding a or b, or len(s).
func (f *byteFinder) from(i int) int {
	if !f.init {
		f.init = true
		f.na, f.nb = -1, -1
	}
	if f.na < i {
		f.na = indexFrom(f.s, f.a, i)
	}
	if f.nb < i {
		f.nb = indexFrom(f.s, f.b, i)
	}
	return min(f.na, f.nb)
}

// indexFrom is IndexByte from position i, returning len(s) when absent.
func indexFrom(s string, c byte, i int) int {
	if i >= len(s) {
		return len(s)
	}
	if j := strings.IndexByte(s[i:], c); j >= 0 {
		return i + j
	}
	return len(s)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

// redactUserinfo replaces the userinfo of every "scheme://userinfo@host".
func redactUserinfo(s string) string {
	if !strings.Contains(s, "://") || strings.IndexByte(s, '@') < 0 {
		return s
	}
	p := splicer{s: s}
	i := 0
	for {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		start := i + j + 3
		end, at := start, -1
		// The authority ends at the first path, query or fragment
		// delimiter; the last '@' before it ends the userinfo, so a raw '@'
		// inside a password is covered too.
	scan:
		for ; end < len(s); end++ {
			switch c := s[end]; {
			case c == '/' || c == '?' || c == '#' || c == '\\' || isSpace(c) ||
				c == '"' || c == '\'' || c == '<' || c == '>' || c == '`':
				break scan
			case c == '@':
				at = end
			}
		}
		if at > start && s[start:at] != Marker {
			p.replace(start, at)
		}
		i = end
	}
	return p.result()
}

// redactHookPaths replaces the rest of a URL path after a "webhook" or
// "webhooks" segment (Home Assistant's /api/webhook/<id>, Discord's
// /api/webhooks/<id>/<token>) and the path of a URL whose host starts with
// "hooks." (Nabu Casa's cloudhooks, Slack's incoming webhooks): whoever
// knows it can trigger the hook, so it is a credential.
func redactHookPaths(s string) string {
	p := splicer{s: s}
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "hook")
		if j < 0 {
			break
		}
		j += i
		i = j + len("hook")
		from := hookSecretStart(s, j)
		if from < 0 || strings.HasPrefix(s[from:], Marker) {
			continue
		}
		to := from
		for to < len(s) && !isValueStop(s[to]) && s[to] != '?' {
			to++
		}
		if to > from {
			p.replace(from, to)
			i = to
		}
	}
	return p.result()
}

// hookSecretStart returns where the secret part of a hook URL starts, for
// "hook" found at s[j:], or -1.
func hookSecretStart(s string, j int) int {
	k := j + len("hook")
	// A path segment "webhook" or "webhooks" (any case) and a slash.
	if j >= 4 && s[j-4] == '/' && strings.EqualFold(s[j-3:k], "webhook") {
		if k < len(s) && (s[k] == 's' || s[k] == 'S') {
			k++
		}
		if k < len(s) && s[k] == '/' {
			return k + 1
		}
		return -1
	}
	// A host "hooks.…" right after the scheme (or a userinfo); the secret
	// is its path.
	if (j >= 3 && s[j-3:j] == "://" || j >= 1 && s[j-1] == '@') && strings.HasPrefix(s[k:], "s.") {
		for h := k; h < len(s) && !isValueStop(s[h]) && s[h] != '?'; h++ {
			if s[h] == '/' {
				return h + 1
			}
		}
	}
	return -1
}

func isToken68(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// proseWord reports whether tok is a short all-lower-case word, as in
// "Bearer authentication"; real bearer tokens are longer or mixed.
func proseWord(tok string) bool {
	if len(tok) >= 16 {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if c := tok[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// basicCredential reports whether tok is base64 of "user:password".
func basicCredential(tok string) bool {
	if len(tok) > 4096 {
		return true // too long to be anything but a credential; don't decode
	}
	enc := base64.StdEncoding
	if !strings.HasSuffix(tok, "=") && len(tok)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	// Decode short tokens on the stack: prose such as "Basic setup" reaches
	// this point and should cost no allocation.
	var src [64]byte
	var dst [48]byte
	if len(tok) <= len(src) {
		n, err := enc.Decode(dst[:], src[:copy(src[:], tok)])
		return err == nil && bytes.IndexByte(dst[:n], ':') >= 0
	}
	dec, err := enc.DecodeString(tok)
	return err == nil && bytes.IndexByte(dec, ':') >= 0
}

// redactAuthSchemes replaces the credential after "Bearer " and "Basic ".
func redactAuthSchemes(s string) string {
	next := byteFinder{s: s, a: 'b', b: 'B'}
	p := splicer{s: s}
	for i := next.from(0); i < len(s); i = next.from(i + 1) {
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		var basic bool
		j := i
		switch {
		case hasPrefixFold(s[i:], "bearer"):
			j += 6
		case hasPrefixFold(s[i:], "basic"):
			j += 5
			basic = true
		default:
			continue
		}
		if j >= len(s) || (s[j] != ' ' && s[j] != '\t') {
			continue
		}
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		k := j
		for k < len(s) && isToken68(s[k]) {
			k++
		}
		if k == j {
			continue
		}
		for k < len(s) && s[k] == '=' {
			k++
		}
		// `Bearer realm="x"` is an auth-param list, not a credential.
		if k < len(s) && s[k-1] == '=' && (s[k] == '"' || isToken68(s[k]) || strings.HasPrefix(s[k:], Marker)) {
			continue
		}
		tok := s[j:k]
		if basic && !basicCredential(tok) || !basic && proseWord(tok) {
			continue
		}
		p.replace(j, k)
		i = k - 1
	}
	return p.result()
}

// isNameByte: bytes of a parameter, header or environment variable name.
func isNameByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.'
}

// isValueStop: bytes that end an unquoted value.
func isValueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '&', '#', ',', ';', '"', '\'', '<', '>', ')', ']', '}', '`', '\\':
		return true
	}
	return false
}

// pairName returns the start of the name written before the separator at
// s[sep], allowing a closing quote, backslash or spaces in between, and
// the name.
func pairName(s string, sep int) (int, string) {
	ne := sep
	for k := 0; k < 3 && ne > 0 && (s[ne-1] == ' ' || s[ne-1] == '\t' || isQuote(s[ne-1]) || s[ne-1] == '\\'); k++ {
		ne--
	}
	ns := ne
	for ns > 0 && isNameByte(s[ns-1]) {
		ns--
	}
	return ns, s[ns:ne]
}

var schemeWords = []string{"bearer", "basic", "token", "digest", "negotiate"}

// pairValue returns the bounds of the value that starts after the
// separator at position j. With eol the value runs to the end of the line
// or to closer, the quote (if any) that opened before the header name.
// The caller resumes scanning at the returned end, so the scan stays linear.
func pairValue(s string, j int, eol bool, closer byte) (int, int) {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j >= len(s) {
		return j, j
	}
	if strings.HasPrefix(s[j:], Marker) {
		return j, j + len(Marker)
	}
	var q byte
	switch {
	case s[j] == '\\' && j+1 < len(s) && isQuote(s[j+1]):
		q, j = s[j+1], j+2
	case isQuote(s[j]):
		q, j = s[j], j+1
	}
	if q != 0 {
		end := strings.IndexByte(s[j:], q)
		if end < 0 {
			// Unterminated: the rest is the value. Taking it all also keeps
			// repeated unterminated quotes from making the scan quadratic.
			return j, len(s)
		}
		end += j
		if end > j && s[end-1] == '\\' {
			end--
		}
		return j, end
	}
	// "Authorization: Bearer abc", "X-Auth: Token abc": the credential is
	// what follows the scheme word, which stays readable.
	j = skipScheme(s, j)
	if strings.HasPrefix(s[j:], Marker) {
		return j, j + len(Marker)
	}
	if eol {
		end := j
		for end < len(s) && s[end] != '\r' && s[end] != '\n' && (closer == 0 || s[end] != closer) {
			end++
		}
		for end > j && (s[end-1] == ' ' || s[end-1] == '\t') {
			end--
		}
		return j, end
	}
	end := j
	for end < len(s) && !isValueStop(s[end]) {
		end++
	}
	return j, end
}

// skipScheme returns the position after an auth scheme word and its
// spaces at s[j:], or j when there is none.
func skipScheme(s string, j int) int {
	for _, w := range schemeWords {
		k := j + len(w)
		if k < len(s) && (s[k] == ' ' || s[k] == '\t') && strings.EqualFold(s[j:k], w) {
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k < len(s) && !isValueStop(s[k]) {
				return k
			}
			return j
		}
	}
	return j
}

// redactPairs replaces the values of name=value and name: value pairs
// whose name is secret.
func redactPairs(s string) string {
	p := splicer{s: s}
	pairSpans(s, p.replace)
	return p.result()
}

// pairSpans calls emit with the bounds of each secret value of a name=value,
// name: value or name => value pair in s, in increasing order.
func pairSpans(s string, emit func(from, to int)) {
	next := byteFinder{s: s, a: '=', b: ':'}
	for i := next.from(0); i < len(s); i = next.from(i + 1) {
		c := s[i]
		rest := s[i+1:]
		if c == ':' && strings.HasPrefix(rest, "//") || c == '=' && strings.HasPrefix(rest, "=") {
			continue // a URL scheme or a comparison, not an assignment
		}
		valueAt := i + 1
		if c == '=' && strings.HasPrefix(rest, ">") {
			valueAt++ // Perl, PHP and Ruby hashes: password => '…'
		}
		ns, name := pairName(s, i)
		if name == "" || !isSecretParam(name) {
			continue
		}
		var closer byte
		if ns > 0 && isQuote(s[ns-1]) {
			closer = s[ns-1]
		}
		vs, ve := pairValue(s, valueAt, c == ':' && isLineHeader(name), closer)
		if ve <= vs {
			continue
		}
		if s[vs:ve] != Marker {
			emit(vs, ve)
		}
		i = ve - 1
	}
}
