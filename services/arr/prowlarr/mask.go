package prowlarr

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// secretWords mark a setting name or a URL query parameter as a
// credential. Matching is on the lower-cased name with separators removed,
// by substring: over-masking a harmless setting costs little, one missed
// tracker passkey costs the account.
var secretWords = []string{
	"apikey", "key", "pass", "cookie", "token", "secret", "auth", "session",
	"user", "login", "mail", "2fa", "otp", "captcha", "credential", "uid", "pid", "hash", "sig",
}

// secretName reports whether a setting or parameter name looks like a
// credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	// Prowlarr names nested settings "baseSettings.limitsUnit": only the
	// last part says what it holds.
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	n = strings.NewReplacer("_", "", "-", "", " ", "").Replace(n)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// secretField reports whether an indexer setting must not show its value:
// Prowlarr marks credentials with privacy apiKey/password/userName, but
// Cardigann definitions name theirs freely (cookie, passkey, rsskey …), so
// the name and the input type count too.
func secretField(f Field) bool {
	switch strings.ToLower(f.Privacy) {
	case "apikey", "password", "username":
		return true
	}
	switch strings.ToLower(f.Type) {
	case "password", "cardiganncaptcha":
		return true
	}
	return secretName(f.Name) || secretName(f.Label)
}

// longToken matches a run that looks like a passkey or key (24 or more
// letters and digits without separators), as trackers embed them in paths
// too; hasDigit keeps long plain words and slugs.
var longToken = regexp.MustCompile(`[A-Za-z0-9]{24,}`)

func keyLike(seg string) bool {
	for _, m := range longToken.FindAllString(seg, -1) {
		if strings.ContainsAny(m, "0123456789") {
			return true
		}
	}
	return false
}

// SafeLink returns link when it is an http(s) URL that carries no
// credential, and "" otherwise: magnet links (tracker lists with passkeys),
// userinfo, credential-like query parameters, long key-like path
// segments, or any occurrence of a known secret (e.g. Prowlarr's own key,
// which it writes into its rewritten download links).
func SafeLink(link string, known ...[]byte) string {
	if link == "" {
		return ""
	}
	for _, k := range known {
		if len(k) > 0 && strings.Contains(link, string(k)) {
			return ""
		}
	}
	if arrapi.SensitiveLink(link) {
		return ""
	}
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Host == "" {
		return ""
	}
	for name := range u.Query() {
		if secretName(name) {
			return ""
		}
	}
	// Anchors are fine (wiki links use them); a fragment with parameters
	// is how implicit OAuth flows hand out tokens.
	if strings.ContainsAny(u.Fragment, "=&") {
		return ""
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if keyLike(seg) {
			return ""
		}
	}
	return link
}

// maskedField is a setting as the tools show it.
type maskedField struct {
	Name  string `json:"name"`
	Label string `json:"label,omitempty"`
	Value any    `json:"value,omitempty"`
	// Masked says the value exists but is a credential and withheld.
	Masked bool `json:"masked,omitempty"`
}

// maskFields keeps the settings worth showing: secret ones appear only as
// {"masked": true} (when set), others with scalar values; empty values and
// help-text fields are left out.
func maskFields(fields []Field, known ...[]byte) []maskedField {
	var out []maskedField
	for _, f := range fields {
		if strings.EqualFold(f.Type, "info") || f.Name == "" {
			continue
		}
		set := isSet(f.Value)
		if secretField(f) {
			if set {
				out = append(out, maskedField{Name: f.Name, Label: f.Label, Masked: true})
			}
			continue
		}
		if !set {
			continue
		}
		v, ok := scalar(f.Value, known...)
		if !ok {
			out = append(out, maskedField{Name: f.Name, Label: f.Label, Masked: true})
			continue
		}
		out = append(out, maskedField{Name: f.Name, Label: f.Label, Value: v})
	}
	return out
}

func isSet(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null")) && !bytes.Equal(t, []byte(`""`)) && !bytes.Equal(t, []byte("[]"))
}

// scalar decodes a non-secret value: strings, numbers, booleans and lists
// of them. A string that holds a link is shown only when SafeLink passes
// it; anything else (objects) is withheld as possibly sensitive.
func scalar(raw json.RawMessage, known ...[]byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return safeScalar(v, known...)
}

func safeScalar(v any, known ...[]byte) (any, bool) {
	switch t := v.(type) {
	case bool, json.Number:
		return t, true
	case string:
		for _, k := range known {
			if len(k) > 0 && strings.Contains(t, string(k)) {
				return nil, false
			}
		}
		// A setting that is a link with parameters is withheld whole:
		// feed and API URLs carry keys under names no list anticipates
		// (IPTorrents' "tp=").
		if strings.Contains(t, "://") || strings.HasPrefix(strings.ToLower(t), "magnet:") {
			if SafeLink(t, known...) == "" || strings.ContainsAny(t, "?#") {
				return nil, false
			}
		}
		return t, true
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			s, ok := safeScalar(e, known...)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}
