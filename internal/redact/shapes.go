package redact

import "strings"

// Credentials recognised by their shape alone, with no secret-sounding
// name in front of them: JWTs, Telegram-style bot tokens and
// user:password@host written without a scheme. Each rule is one forward
// scan with bounded look-back, so hostile input stays linear.

func isB64URL(c byte) bool { return isAlnum(c) || c == '-' || c == '_' }

// minJWTHeader is the shortest header worth a look: base64url of the
// smallest JSON object with one member is ten characters.
const minJWTHeader = 10

// redactJWTs replaces every JWT, JWS or JWE in compact form: a run of
// base64url parts joined by at least two dots whose first part is a JSON
// header (base64url of `{"` is "eyJ"). A dot that ends the run (an
// unsecured JWT's empty signature, or the end of a sentence) stays.
func redactJWTs(s string) string {
	p := splicer{s: s}
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], "eyJ")
		if j < 0 {
			break
		}
		start := i + j
		i = start + 3
		if start > 0 && (isB64URL(s[start-1]) || s[start-1] == '.') {
			continue
		}
		end, dots, header := start, 0, 0
		for end < len(s) && (isB64URL(s[end]) || s[end] == '.') {
			if s[end] == '.' {
				if dots == 0 {
					header = end - start
				}
				dots++
			}
			end++
		}
		i = end
		if dots < 2 || header < minJWTHeader {
			continue
		}
		for s[end-1] == '.' {
			end--
		}
		if end-start-header < 3 {
			continue
		}
		p.replace(start, end)
	}
	return p.result()
}

// Telegram bot tokens are "<bot id>:<35 characters>"; the bounds leave
// room for other services of the same shape.
const (
	minBotID     = 5
	maxBotID     = 20
	minBotSecret = 30
)

// redactBotTokens replaces "<digits>:<long base64url secret>", alone or
// after "bot" in a URL path (https://api.telegram.org/bot<id>:<secret>/…);
// the "bot" prefix stays readable.
func redactBotTokens(s string) string {
	p := splicer{s: s}
	next := 0
	for i := indexFrom(s, ':', 0); i < len(s); i = indexFrom(s, ':', i+1) {
		if i < next {
			continue
		}
		d := i
		for d > 0 && i-d <= maxBotID && '0' <= s[d-1] && s[d-1] <= '9' {
			d--
		}
		if n := i - d; n < minBotID || n > maxBotID {
			continue
		}
		if d > 0 && isB64URL(s[d-1]) && !afterBotWord(s, d) {
			continue
		}
		e := i + 1
		for e < len(s) && isB64URL(s[e]) {
			e++
		}
		if e-i-1 < minBotSecret {
			continue
		}
		p.replace(d, e)
		next = e
	}
	return p.result()
}

// afterBotWord reports whether s[:d] ends in a word "bot" (any case)
// that starts a token.
func afterBotWord(s string, d int) bool {
	if d < 3 || !strings.EqualFold(s[d-3:d], "bot") {
		return false
	}
	return d == 3 || !isB64URL(s[d-4])
}

// userinfoStart reports whether c may stand right before a bare
// "user:password@host": the start of a word, a value or a quoted string.
func userinfoStart(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '=', '(', '[', '{', ',', ';', '<', '>', '`', '|':
		return true
	}
	return false
}

// notUserinfo are URI schemes written "scheme:user@host" without "//":
// there the part before the colon is no user name.
var notUserinfo = []string{"mailto", "sip", "sips", "xmpp", "im", "pres", "acct", "tel", "urn", "news"}

// redactBareUserinfo replaces "user:password" in "user:password@host" or
// "user:password@host:port" written without a scheme, as proxies are
// (HTTPS_PROXY, curl -x, Tuliprox's proxy setting). The host must end the
// token or be followed by a port of digits or a path, so container
// digests ("nginx:1.25@sha256:…") and e-mail addresses stay.
func redactBareUserinfo(s string) string {
	p := splicer{s: s}
	last := 0
	for at := indexFrom(s, '@', 0); at < len(s); at = indexFrom(s, '@', at+1) {
		b := at
		for b > last && !userinfoStart(s[b-1]) && s[b-1] != '/' && s[b-1] != '@' && s[b-1] != '\\' {
			b--
		}
		if b > 0 && (s[b-1] == '/' || s[b-1] == '@' || s[b-1] == '\\') {
			continue
		}
		colon := strings.IndexByte(s[b:at], ':')
		if colon <= 0 || s[b:at] == Marker {
			continue
		}
		user := s[b : b+colon]
		if !bareHostFollows(s, at+1) || containsFold(notUserinfo, user) {
			continue
		}
		p.replace(b, at)
		last = at
	}
	return p.result()
}

func containsFold(words []string, w string) bool {
	for _, x := range words {
		if strings.EqualFold(x, w) {
			return true
		}
	}
	return false
}

// bareHostFollows reports whether s[i:] starts with a host name or an
// IPv6 literal, an optional port of digits, and then the end, a path or
// a byte that ends the token.
func bareHostFollows(s string, i int) bool {
	h := i
	if h < len(s) && s[h] == '[' {
		for h < len(s) && s[h] != ']' && (isAlnum(s[h]) || s[h] == ':' || s[h] == '.' || s[h] == '[' || s[h] == '%') {
			h++
		}
		if h >= len(s) || s[h] != ']' {
			return false
		}
		h++
	} else {
		for h < len(s) && (isAlnum(s[h]) || s[h] == '.' || s[h] == '-' || s[h] == '_') {
			h++
		}
		if h == i {
			return false
		}
	}
	if h < len(s) && s[h] == ':' {
		d := h + 1
		for d < len(s) && '0' <= s[d] && s[d] <= '9' {
			d++
		}
		if d == h+1 || d-h-1 > 5 {
			return false
		}
		h = d
	}
	return h == len(s) || s[h] == '/' || userinfoStart(s[h]) || s[h] == ')' || s[h] == ']' || s[h] == '}' || s[h] == '.' && (h+1 == len(s) || isSpace(s[h+1]))
}

// vendorToken is a credential format that announces itself by a fixed
// prefix: GitHub, GitLab, OpenAI and Anthropic, Slack, Stripe, Google,
// Hugging Face, npm, ntfy and Tailscale keys, and toolgate's own. The prefix stays readable
// (it says what kind of key was there); the rest is replaced.
type vendorToken struct {
	prefix   string
	min, max int // length of the part after the prefix
	// mixed: the rest must hold a letter and a digit, so that a long
	// hyphenated word after a short prefix ("sk-…") is not taken for a key.
	mixed bool
}

var vendorTokens = []vendorToken{
	{prefix: "ghp_", min: 30, max: 255}, // GitHub: personal, OAuth, user-to-server, server, refresh
	{prefix: "gho_", min: 30, max: 255},
	{prefix: "ghu_", min: 30, max: 255},
	{prefix: "ghs_", min: 30, max: 255},
	{prefix: "ghr_", min: 30, max: 255},
	{prefix: "github_pat_", min: 40, max: 255},
	{prefix: "glpat-", min: 20, max: 255},                // GitLab
	{prefix: "sk-", min: 32, max: 255, mixed: true},      // OpenAI (sk-proj-…), Anthropic (sk-ant-…)
	{prefix: "sk_live_", min: 20, max: 255, mixed: true}, // Stripe
	{prefix: "rk_live_", min: 20, max: 255, mixed: true}, // Stripe restricted
	{prefix: "xoxb-", min: 10, max: 255, mixed: true},    // Slack bot, user, app, refresh
	{prefix: "xoxp-", min: 10, max: 255, mixed: true},
	{prefix: "xoxa-", min: 10, max: 255, mixed: true},
	{prefix: "xoxe-", min: 10, max: 255, mixed: true},
	{prefix: "xapp-", min: 10, max: 255, mixed: true},
	{prefix: "hf_", min: 30, max: 255, mixed: true},    // Hugging Face
	{prefix: "npm_", min: 36, max: 36},                 // npm
	{prefix: "tk_", min: 29, max: 29, mixed: true},     // ntfy access token
	{prefix: "tskey-", min: 20, max: 255, mixed: true}, // Tailscale auth and API keys
	{prefix: "tg_", min: 43, max: 43},                  // toolgate's own client tokens (auth.NewToken)
	// Google API keys have no separator; the scan expects this entry last.
	{prefix: "AIza", min: 35, max: 35},
}

// minVendorToken is the length of the shortest vendor token.
const minVendorToken = len("xoxb-") + 10

// vendorTokenHint reports whether s is long enough and has a byte every
// vendor prefix contains, so most text skips the scan.
func vendorTokenHint(s string) bool {
	return len(s) >= minVendorToken &&
		(strings.IndexByte(s, '_') >= 0 || strings.IndexByte(s, '-') >= 0 || strings.Contains(s, "AIza"))
}

// redactVendorTokens replaces the secret part of every vendorToken that
// starts a word. It jumps from one '-' or '_' to the next and looks back
// at most len("github_pat_") bytes for a prefix ending there (Google's
// "AIza" has no separator and is searched for itself), so hostile input
// stays linear.
func redactVendorTokens(s string) string {
	p := splicer{s: s}
	last := 0
	try := func(v *vendorToken, start int) int {
		if start < last || start > 0 && isB64URL(s[start-1]) {
			return -1
		}
		rest := start + len(v.prefix)
		end, letter, digit := rest, false, false
		for end < len(s) && isB64URL(s[end]) {
			c := s[end]
			letter = letter || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
			digit = digit || '0' <= c && c <= '9'
			end++
		}
		if n := end - rest; n < v.min || n > v.max || v.mixed && !(letter && digit) {
			return -1
		}
		p.replace(rest, end)
		last = end
		return end
	}
	seps := byteFinder{s: s, a: '-', b: '_'}
	for k := seps.from(0); k < len(s); k = seps.from(k + 1) {
		if v, start := vendorPrefixEndingAt(s, k); v != nil {
			if end := try(v, start); end > k {
				k = end - 1
			}
		}
	}
	google := &vendorTokens[len(vendorTokens)-1]
	for k := strings.Index(s, google.prefix); k >= 0; {
		end := try(google, k)
		if end < 0 {
			end = k + len(google.prefix)
		}
		j := strings.Index(s[end:], google.prefix)
		if j < 0 {
			break
		}
		k = end + j
	}
	return p.result()
}

// vendorByEnd indexes vendorTokens by the letter before the separator
// that ends the prefix ([0] for '-', [1] for '_'), so most separators in
// ordinary text are dismissed with one lookup.
var vendorByEnd = func() (t [2][26][]uint8) {
	for i, v := range vendorTokens[:len(vendorTokens)-1] {
		n := len(v.prefix)
		sep, letter := v.prefix[n-1], v.prefix[n-2]|0x20
		t[boolIndex(sep == '_')][letter-'a'] = append(t[boolIndex(sep == '_')][letter-'a'], uint8(i))
	}
	return t
}()

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// vendorPrefixEndingAt returns the vendor token whose prefix ends with
// s[k] (a '-' or '_'), and where that prefix starts.
func vendorPrefixEndingAt(s string, k int) (*vendorToken, int) {
	if k == 0 {
		return nil, 0
	}
	c := s[k-1]
	if c < 'a' || c > 'z' {
		return nil, 0 // every prefix has a lower-case letter before its separator
	}
	for _, i := range vendorByEnd[boolIndex(s[k] == '_')][c-'a'] {
		v := &vendorTokens[i]
		if start := k + 1 - len(v.prefix); start >= 0 && s[start:k+1] == v.prefix {
			return v, start
		}
	}
	return nil, 0
}
