package redact

import "strings"

// The tables below implement the key-name rules documented in the package
// comment. They are read-only.
var (
	// secretSuffixes: a normalized name that equals or ends with one of these
	// is a secret key.
	secretSuffixes = []string{
		"password", "passwd", "passphrase", "passwords",
		"secret", "secrets",
		"token",
		"apikey", "apikeys",
		"accesskey", "secretkey", "privatekey", "encryptionkey", "signingkey", "masterkey",
		"credential", "credentials",
		"authorization",
		"cookie", "cookies",
		"sessionid",
		"bearer",
		"webhookurl", "cloudhookurl",
		"webhookid", "webhookids",
		// Private trackers' per-user keys (Prowlarr and Cardigann settings).
		"passkey", "rsskey", "authkey",
	}
	// secretExact: too generic to match as a suffix ("bypass", "compass").
	secretExact = []string{"auth", "pass", "pwd", "pw"}
	// harmlessSuffixes: checked first; pagination cursors end in "token"
	// but are not credentials, and redacting them would break paging.
	harmlessSuffixes = []string{"pagetoken", "continuationtoken", "nexttoken"}
	// paramExact and paramSuffixes: extra names that are secret as URL query
	// parameters or text pairs (?key=, ?sig=, X-Amz-Signature=, session=)
	// but too generic as JSON keys.
	paramExact    = []string{"key", "sig", "session", "sid"}
	paramSuffixes = []string{"signature"}
	// lineHeaders: header names whose "Name: value" form is redacted to
	// the end of the line, because their values contain spaces and ';'.
	lineHeaders = []string{"authorization", "proxyauthorization", "cookie", "setcookie"}
)

// bySuffixEnd groups secretSuffixes by their last byte, so a key is
// compared only with the few words that can match it. Built once, never
// modified.
var bySuffixEnd = func() (idx [256][]string) {
	for _, w := range secretSuffixes {
		c := w[len(w)-1]
		idx[c] = append(idx[c], w)
	}
	return idx
}()

// normCap bounds the normalized tail we compare; longer than any table word.
const normCap = 48

// normTail writes the last normCap normalized bytes of name into buf and
// returns them. full reports whether the whole name fitted, so exact-match
// rules only apply to short names. It never allocates.
func normTail(name string, buf *[normCap]byte) (tail []byte, full bool) {
	n := normCap
	for i := len(name) - 1; i >= 0; i-- {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == ' ':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if n == 0 {
			return buf[:], false
		}
		n--
		buf[n] = c
	}
	return buf[n:], true
}

// hasSuffix compares from the end, so most words are rejected at the last
// byte; it is on the path of every map key.
func hasSuffix(b []byte, w string) bool {
	if len(b) < len(w) {
		return false
	}
	off := len(b) - len(w)
	for i := len(w) - 1; i >= 0; i-- {
		if b[off+i] != w[i] {
			return false
		}
	}
	return true
}

func anySuffix(b []byte, words []string) bool {
	for _, w := range words {
		if hasSuffix(b, w) {
			return true
		}
	}
	return false
}

func anyExact(b []byte, full bool, words []string) bool {
	if !full {
		return false
	}
	for _, w := range words {
		if string(b) == w {
			return true
		}
	}
	return false
}

// IsSecretKey reports whether a map key (or header, or parameter) with this
// name holds a secret, by the key-name rules in the package comment.
func IsSecretKey(name string) bool {
	var buf [normCap]byte
	t, full := normTail(name, &buf)
	return isSecretNorm(t, full) || endsInWord(name, "pass") || endsInWord(name, "pw")
}

// endsInWord reports whether name ends in word as a word of its own:
// after '_', '-', '.' or ' ' (DB_PASS, wifi-pw), or capitalised after a
// lower-case letter (otaPass). Normalized names lose that boundary, and
// "pass" and "pw" inside a word (bypass, compass) are no credential.
func endsInWord(name, word string) bool {
	if len(name) <= len(word) {
		return false // the word alone is secretExact's to decide
	}
	head, tail := name[:len(name)-len(word)], name[len(name)-len(word):]
	switch c := head[len(head)-1]; {
	case c == '_' || c == '-' || c == '.' || c == ' ':
		return strings.EqualFold(tail, word)
	case 'a' <= c && c <= 'z':
		return tail[0] == word[0]-'a'+'A' && tail[1:] == word[1:]
	}
	return false
}

func isSecretNorm(t []byte, full bool) bool {
	if anySuffix(t, harmlessSuffixes) {
		return false
	}
	if len(t) == 0 {
		return false
	}
	return anySuffix(t, bySuffixEnd[t[len(t)-1]]) || anyExact(t, full, secretExact)
}

// isSecretParam is IsSecretKey widened by the query-parameter names.
func isSecretParam(name string) bool {
	var buf [normCap]byte
	t, full := normTail(name, &buf)
	return isSecretNorm(t, full) || anyExact(t, full, paramExact) || anySuffix(t, paramSuffixes) ||
		endsInWord(name, "pass") || endsInWord(name, "pw")
}

func isLineHeader(name string) bool {
	var buf [normCap]byte
	t, full := normTail(name, &buf)
	return anyExact(t, full, lineHeaders)
}

// isFlagName reports whether name reads as a boolean flag ("hasPassword",
// "is_secret"); a bool under such a key says nothing secret.
func isFlagName(name string) bool {
	return (len(name) > 3 && strings.EqualFold(name[:3], "has")) ||
		(len(name) > 2 && strings.EqualFold(name[:2], "is"))
}

// harmlessHeaders are request headers that never carry a credential.
var harmlessHeaders = []string{
	"accept", "acceptcharset", "acceptencoding", "acceptlanguage", "cachecontrol", "connection",
	"contenttype", "dnt", "origin", "pragma", "range", "referer", "useragent", "xrequestedwith",
}

// HarmlessHeader reports whether a request header with this name never
// carries a credential (Accept, User-Agent, Content-Type, …). Configured
// header lists (an integration's "headers:", a provider's) show only
// these: a credential can hide under any other name (X-Auth, X-Line).
func HarmlessHeader(name string) bool {
	var buf [normCap]byte
	t, full := normTail(strings.TrimSpace(name), &buf)
	return anyExact(t, full, harmlessHeaders)
}
