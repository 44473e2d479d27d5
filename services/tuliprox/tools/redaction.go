package tools

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/redact"
)

// Tuliprox-specific redaction, on top of the toolkit's generic redactor
// that every result passes afterwards.
//
// get_config follows the seed's rules (§3.4) and goes further where the
// seed admits gaps: it never returns a URL at all (provider URLs carry
// Xtream credentials in their path, /live/<user>/<pass>/…), and masks
// such paths in every string, with or without a scheme; and it masks
// every request header but a few harmless ones, since providers name
// their credential headers as they like. Every other tool loses URL
// members (a stream's provider URL, say) and has Xtream path credentials,
// URL userinfo and credential query parameters masked in its strings.
// Shapes every service shares (a proxy's user:pass@host:port without a
// scheme, JWTs, bot tokens) are internal/redact's.

// Mask replaces a secret value, as Tuliprox's own redaction does.
const Mask = "********"

// URLWithheld replaces a URL that could carry a provider's credentials.
const URLWithheld = "[URL withheld]"

// maxDepth bounds the nesting a hostile answer can make us follow.
const maxDepth = 64

// tooDeep replaces what lies deeper than maxDepth.
const tooDeep = "[withheld: nested too deeply]"

// configSecretWords: a key containing one of these (lower-cased, '-' and
// ' ' as '_', and without separators for "apikey") has its value masked.
var configSecretWords = []string{"password", "secret", "token", "api_key", "apikey", "authorization", "cookie", "passwd", "credential"}

// credentialParams are masked in the query of every URL-like string.
var credentialParams = map[string]bool{
	"password": true, "pass": true, "username": true, "user": true, "token": true, "api_key": true,
	"apikey": true, "passwd": true, "pwd": true, "auth": true, "access_token": true,
}

// xtreamPath matches the credential segments of Xtream stream paths:
// /live/<user>/<pass>/…, /movie/…, /series/…, /timeshift/…; the root form
// without a cluster is xtreamRoot's.
var xtreamPath = regexp.MustCompile(`(?i)((?:^|/)(?:live|movie|movies|series|timeshift|hls|hlsr|m3u-stream|resource)/)([^/\s"'?#]+)/([^/\s"'?#]+)/`)

// xtreamRoot matches Xtream's root stream form, host[:port]/<user>/<pass>/<id>
// (with or without scheme or userinfo), where the path names no cluster:
// the host must be a dotted name, an IP literal or carry a port, so a plain
// "a/b/1" title is left alone.
var xtreamRoot = regexp.MustCompile(`(?i)((?:^|[\s"'(=,;@]|://)(?:(?:[a-z0-9-]+\.)+[a-z0-9-]+(?::\d{1,5})?|[a-z0-9-]+:\d{1,5}|\[[0-9a-f:.]+\](?::\d{1,5})?)/)[^/\s"'?#]+/[^/\s"'?#]+/(\d+(?:\.[a-z0-9]{1,5})?(?:$|[?#\s"'<>),;]))`)

// absURL matches an absolute URL inside free text.
var absURL = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s"'<>]+`)

// queryPair matches name=value pairs of the credential parameters in text
// that is not a parsable URL (a bare query string, a log line).
var queryPair = regexp.MustCompile(`(?i)([?&;](?:password|pass|username|user|token|api_key|apikey|passwd|pwd|auth|access_token)=)([^&#\s"']*)`)

// userinfo matches scheme://user:pass@ and scheme://user@.
var userinfo = regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]{1,15}://)[^/\s@"'<>]+@`)

// scrubString masks credentials that can sit in any string: Xtream path
// segments, URL userinfo and credential query parameters.
func scrubString(s string) string {
	if !strings.ContainsAny(s, "/?&@;") {
		return s
	}
	s = xtreamPath.ReplaceAllString(s, "${1}"+Mask+"/"+Mask+"/")
	s = xtreamRoot.ReplaceAllString(s, "${1}"+Mask+"/"+Mask+"/${2}")
	s = userinfo.ReplaceAllString(s, "${1}"+Mask+"@")
	s = queryPair.ReplaceAllString(s, "${1}"+Mask)
	return s
}

// isURLKey tells members that hold URLs: url, urls, *_url, *_urls, and
// the members Tuliprox strips from additional_properties.
func isURLKey(k string) bool {
	k = strings.ToLower(k)
	switch k {
	case "url", "urls", "direct_source", "catch-up source", "catchup_source", "stream_url", "uri":
		return true
	}
	return strings.HasSuffix(k, "_url") || strings.HasSuffix(k, "_urls") || strings.HasSuffix(k, "url")
}

// rules are one pass's redaction: walk applies member to every object
// member and text to every string and to the key of every member it
// walks on.
type rules struct {
	member func(key string, val any) (fate, any)
	text   func(string) string
}

// fate is what becomes of an object member.
type fate int

const (
	walkOn       fate = iota // key through text, value walked
	dropMember               // left out
	replaceValue             // key kept as it is, value replaced
)

func (r rules) walk(v any, depth int) any {
	if depth > maxDepth {
		return tooDeep
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			switch f, repl := r.member(k, val); f {
			case walkOn:
				out[r.text(k)] = r.walk(val, depth+1)
			case replaceValue:
				out[k] = repl
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			out[i] = r.walk(val, depth+1)
		}
		return out
	case string:
		return r.text(t)
	}
	return v
}

// scrubResult is the pass of every tool but get_config: URL members are
// dropped, strings scrubbed.
func scrubResult(v any) any {
	return rules{member: resultMember, text: scrubString}.walk(v, 0)
}

func resultMember(k string, _ any) (fate, any) {
	if isURLKey(k) {
		return dropMember, nil
	}
	return walkOn, nil
}

// redactConfig applies get_config's rules to a decoded configuration.
func redactConfig(v any) any {
	if m, ok := v.(map[string]any); ok {
		if ap, ok := m["api_proxy"].(map[string]any); ok {
			m = shallowCopy(m)
			m["api_proxy"] = reduceAPIProxy(ap)
			v = m
		}
	}
	return rules{member: configMember, text: scrubConfigString}.walk(v, 0)
}

func shallowCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// reduceAPIProxy replaces the api_proxy user list, [{target,
// credentials: [...]}], by a credential count per target
// ({target, users}: a key named "credentials" would itself be
// redacted).
func reduceAPIProxy(ap map[string]any) map[string]any {
	out := shallowCopy(ap)
	users, ok := ap["user"].([]any)
	if !ok {
		if _, present := ap["user"]; present {
			out["user"] = Mask
		}
		return out
	}
	reduced := make([]any, 0, len(users))
	for _, u := range users {
		entry := map[string]any{"users": 0}
		if um, ok := u.(map[string]any); ok {
			if target, ok := um["target"].(string); ok {
				entry["target"] = target
			}
			if creds, ok := um["credentials"].([]any); ok {
				entry["users"] = len(creds)
			}
		}
		reduced = append(reduced, entry)
	}
	out["user"] = reduced
	return out
}

// keySeparators makes "Api-Key", "api key" and "api.key" read "api_key".
var keySeparators = strings.NewReplacer("-", "_", " ", "_", ".", "_")

func isConfigSecretKey(k string) bool {
	n := keySeparators.Replace(strings.ToLower(k))
	for _, w := range configSecretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// maskHeaders masks the values of a headers member: Tuliprox's inputs and
// downloads hold a map of name to value, its REST messaging a list of
// "Name: value" lines. Only headers that never carry a credential keep
// their value (through the string rules): providers put credentials under
// names of their own (X-Auth, X-Line, …) that no list of words can know.
func maskHeaders(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for name, val := range t {
			if s, isString := val.(string); isString && redact.HarmlessHeader(name) {
				out[name] = scrubConfigString(s)
			} else {
				out[scrubConfigString(name)] = Mask
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, line := range t {
			l, _ := line.(string)
			name, _, ok := strings.Cut(l, ":")
			switch {
			case !ok:
				out[i] = Mask
			case redact.HarmlessHeader(name):
				out[i] = scrubConfigString(l)
			default:
				out[i] = scrubConfigString(name) + ": " + Mask
			}
		}
		return out
	case nil:
		return nil
	}
	return Mask
}

// configMember masks secrets, user names and header values and withholds
// URLs; the order matters: "token_url" is a secret, not a URL.
func configMember(k string, val any) (fate, any) {
	lk := strings.ToLower(k)
	switch {
	case isConfigSecretKey(k):
		return replaceValue, Mask
	case lk == "headers" && !emptyValue(val):
		return replaceValue, maskHeaders(val)
	case (lk == "username" || lk == "user") && !emptyValue(val) && !container(val):
		return replaceValue, Mask
	case isURLKey(k) && !emptyValue(val):
		return replaceValue, URLWithheld
	}
	return walkOn, nil
}

// scrubConfigString withholds every absolute URL in s and masks the rest.
func scrubConfigString(s string) string {
	if strings.Contains(s, "://") {
		s = absURL.ReplaceAllString(s, URLWithheld)
	}
	return scrubString(maskQuery(s))
}

// maskQuery masks credential parameters of a string that is a relative
// URL or a bare query ("?username=a&password=b").
func maskQuery(s string) string {
	q, ok := strings.CutPrefix(s, "?")
	if !ok {
		if _, after, found := strings.Cut(s, "?"); found && !strings.ContainsAny(s, " \t\n") {
			q = after
		} else {
			return s
		}
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return s
	}
	changed := false
	for k := range vals {
		if credentialParams[strings.ToLower(k)] {
			vals[k] = []string{Mask}
			changed = true
		}
	}
	if !changed {
		return s
	}
	prefix := strings.TrimSuffix(s, q)
	return prefix + vals.Encode()
}

// container is a JSON list or object (api_proxy's "user" list is one).
func container(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

// emptyValue is a JSON null, "" or an empty list or object.
func emptyValue(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// decodeConfig parses the configuration; anything that is not a JSON
// object is refused so it can be withheld.
func decodeConfig(raw []byte) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if d.More() {
		return nil, false
	}
	return m, true
}
