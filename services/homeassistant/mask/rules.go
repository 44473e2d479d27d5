package mask

import (
	"regexp"
	"strings"
)

// Rules that hide a credential wherever it stands, whatever key it is
// under.

var (
	// secretTag is a !secret reference and its name.
	secretTag = regexp.MustCompile(`!secret(\s+)("[^"\n]*"|'[^'\n]*'|[^\s#,\]\}]+)`)
	// hookPath is what follows a webhook path segment, or the path of a
	// hooks.* host (redact's rule, in this package's mask).
	hookPath = regexp.MustCompile("(/[Ww]ebhooks?/|(?:://|@)hooks\\.[^/\\s?#\"'<>]*/)([^\\s?#\"'<>,;)\\]}`\\\\&]+)")
)

// secretNames hides the names behind !secret: a name can say what the
// secret is for, and guessing secrets.yaml's keys should not be helped.
func secretNames(s string, hide func(from, to int)) {
	if !strings.Contains(s, "!secret") {
		return
	}
	for _, m := range secretTag.FindAllStringSubmatchIndex(s, -1) {
		hide(m[4], m[5])
	}
}

// envDefaults hides the default of "!env_var NAME default": Home
// Assistant's loader (homeassistant/util/yaml/loader.py, _env_var_yaml)
// splits the scalar at blanks and uses the rest as the value when the
// variable is unset, so it is often the credential itself.
func envDefaults(s string, hide func(from, to int)) {
	const tag = "!env_var"
	for i := strings.Index(s, tag); i >= 0; {
		p := i + len(tag)
		for p < len(s) && (isBlank(s[p]) || s[p] == '\r' || s[p] == '\n') {
			p++
		}
		quote := byte(0)
		if p < len(s) && (s[p] == '"' || s[p] == '\'') {
			quote = s[p]
			p++
		}
		for p < len(s) && !isBlank(s[p]) && s[p] != '\r' && s[p] != '\n' && s[p] != quote {
			p++
		}
		for p < len(s) && isBlank(s[p]) {
			p++
		}
		e := p
		for e < len(s) && s[e] != '\r' && s[e] != '\n' && s[e] != quote && !(s[e] == '#' && isBlank(s[e-1])) {
			e++
		}
		for e > p && isBlank(s[e-1]) {
			e--
		}
		hide(p, e)
		n := strings.Index(s[max(e, i+len(tag)):], tag)
		if n < 0 {
			break
		}
		i = max(e, i+len(tag)) + n
	}
}

// userinfo hides the password of scheme://user:password@ (or the user,
// when it stands alone: a token used as a user name). The last '@'
// before the path ends the userinfo, so a raw '@' in a password is
// covered too.
func userinfo(s string, hide func(from, to int)) {
	for i := strings.Index(s, "://"); i >= 0; {
		start := i + 3
		end, at := start, -1
		for ; end < len(s) && strings.IndexByte("/?#\\\"'<>` \t\r\n", s[end]) < 0; end++ {
			if s[end] == '@' {
				at = end
			}
		}
		if at > start {
			if c := strings.IndexByte(s[start:at], ':'); c >= 0 {
				hide(start+c+1, at)
			} else {
				hide(start, at)
			}
		}
		n := strings.Index(s[end:], "://")
		if n < 0 {
			break
		}
		i = end + n
	}
}

// hookPaths hides webhook ids in webhook URLs (/api/webhook/<id>,
// https://hooks.nabu.casa/<token>): whoever knows one triggers the
// automation behind it.
func hookPaths(s string, hide func(from, to int)) {
	if !strings.Contains(s, "ebhook") && !strings.Contains(s, "hooks.") {
		return
	}
	for _, m := range hookPath.FindAllStringSubmatchIndex(s, -1) {
		hide(m[4], m[5])
	}
}
