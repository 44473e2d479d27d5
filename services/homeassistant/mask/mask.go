// Package mask hides credentials in Home Assistant configuration text before
// it leaves the service: values of keys that name a credential (password,
// token, api_key, webhook_id, …), the names behind !secret (a name can say
// what the secret is for, and guessing secrets.yaml's keys should not be
// helped), user:password@ in URLs, and webhook ids in webhook URLs
// (/api/webhook/<id>, https://hooks.nabu.casa/<token>): whoever knows one
// triggers the automation behind it. It works on raw text, comments included, because
// commented-out blocks are exactly where old credentials survive.
package mask

import (
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/redact"
)

// Masked replaces a hidden value.
const Masked = "***"

// SecretMasked replaces the name behind a !secret tag.
const SecretMasked = "!secret " + Masked

var (
	// secretTag is a !secret reference and its name.
	secretTag = regexp.MustCompile(`!secret(\s+)("[^"\n]*"|'[^'\n]*'|[^\s#,\]\}]+)`)
	// key is "key:" or "key=" (the key may be quoted), where a value
	// may follow.
	key = regexp.MustCompile(`(?:^|([\s{,\-#(&?;]))["']?([A-Za-z0-9_.\-]{1,64})["']?\s*[:=]`)
	// userinfo is scheme://user:password@.
	userinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)([^/\s:@]+):([^/\s@]+)@`)
	// hookPath is what follows a webhook path segment, or the path of a
	// hooks.* host (redact's rule, in this package's mask).
	hookPath = regexp.MustCompile("(/[Ww]ebhooks?/|(?:://|@)hooks\\.[^/\\s?#\"'<>]*/)([^\\s?#\"'<>,;)\\]}`\\\\&]+)")
)

// Text masks credentials in configuration text line by line. Structure,
// comments and line numbers are kept, so the result can still be read
// against the file.
func Text(s string) string {
	s = secretTag.ReplaceAllString(s, "!secret${1}"+Masked)
	s = userinfo.ReplaceAllString(s, "${1}${2}:"+Masked+"@")
	s = hookPath.ReplaceAllString(s, "${1}"+Masked)
	var b strings.Builder
	last := 0
	for _, m := range key.FindAllStringSubmatchIndex(s, -1) {
		from := m[1]
		if from < last || !redact.IsSecretKey(s[m[4]:m[5]]) {
			continue
		}
		for from < len(s) && (s[from] == ' ' || s[from] == '\t') {
			from++
		}
		// The value runs to the end of the line or to a comment (in a flow
		// mapping, to the next , or }); on a line of prose that may be
		// more than the value, which is fine.
		before := strings.TrimRight(s[:m[4]], " \t\"'")
		flow := strings.HasSuffix(before, "{") || strings.HasSuffix(before, ",")
		to := from
		for to < len(s) && s[to] != '\n' && !(s[to] == '#' && to > from && (s[to-1] == ' ' || s[to-1] == '\t')) &&
			!(flow && (s[to] == ',' || s[to] == '}')) {
			to++
		}
		value := strings.TrimRight(s[from:to], " \t\r")
		if value == "" || value == Masked || strings.HasPrefix(value, "!secret") || strings.HasPrefix(value, "!env_var") ||
			strings.HasPrefix(value, "!include") || value == "|" || value == ">" {
			continue
		}
		b.WriteString(s[last:from])
		b.WriteString(Masked)
		last = from + len(value)
	}
	b.WriteString(s[last:])
	return b.String()
}

// Value masks a scalar value that sits under key in structured data.
func Value(key, value string) string {
	if redact.IsSecretKey(key) && value != "" {
		return Masked
	}
	return Text(value)
}
