package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

const (
	// Marker replaces every redacted value.
	Marker = "[REDACTED]"
	// TooDeep replaces a subtree nested deeper than MaxDepth.
	TooDeep = "[TRUNCATED: too deep]"
	// Unsupported replaces a value of a type that cannot be encoded as JSON.
	Unsupported = "[REDACTED: unsupported value]"
	// MaxDepth is the deepest container nesting Value walks. Real API
	// results stay far below it; the bound keeps hostile input from
	// exhausting the stack.
	MaxDepth = 64
	// MinKnownLen is the shortest known secret value that is replaced:
	// shorter ones would match ordinary text.
	MinKnownLen = 6
)

// Redactor removes secrets from values and text. It is immutable after New
// and safe for concurrent use. A nil *Redactor applies all rules except
// known values.
type Redactor struct {
	// known holds the registered secret values and their encoded forms,
	// longest first so a secret containing another is replaced whole.
	known []knownForm
	// raw holds the registered values themselves, longest first, for the
	// decoded view of a string.
	raw []string
	// starts has a bit for the hash of the first four bytes of every known
	// form, so most strings are cleared with one pass instead of one
	// search per form.
	starts *[1 << 16 / 64]uint64
	minLen int
}

// New returns a Redactor that, besides the generic rules, replaces the
// given secret values (for example the service's own API keys) wherever
// they occur, also re-encoded (URL escapes, base64, JSON escapes, HTML
// character references). Values shorter than MinKnownLen are ignored. The
// slices are copied.
func New(known ...[]byte) *Redactor {
	r := &Redactor{}
	add := func(f knownForm) {
		if !slices.ContainsFunc(r.known, func(k knownForm) bool { return k.text == f.text }) {
			r.known = append(r.known, f)
		}
	}
	for _, k := range known {
		if len(k) < MinKnownLen {
			continue
		}
		s := string(k)
		if slices.Contains(r.raw, s) {
			continue
		}
		r.raw = append(r.raw, s)
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
			add(knownForm{text: v})
		}
		for _, f := range base64Forms(s) {
			add(f)
		}
	}
	slices.SortStableFunc(r.known, func(a, b knownForm) int { return len(b.text) - len(a.text) })
	if len(r.known) > 0 {
		r.starts = new([1 << 16 / 64]uint64)
		r.minLen = len(r.known[len(r.known)-1].text)
		for _, k := range r.known {
			h := startHash(k.text)
			r.starts[h/64] |= 1 << (h % 64)
		}
	}
	slices.SortStableFunc(r.raw, func(a, b string) int { return len(b) - len(a) })
	return r
}

// String applies the free-text rules to s. It returns s itself (no
// allocation) when nothing needs redacting.
func (r *Redactor) String(s string) string {
	if r.mayContainKnown(s) {
		for _, k := range r.known {
			if strings.Contains(s, k.text) {
				s = replaceForm(s, k)
			}
		}
	}
	// Each rule needs a byte that most text lacks; the vectorised checks
	// keep clean strings cheap.
	if strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '&') >= 0 || strings.IndexByte(s, '\\') >= 0 {
		s = r.redactView(s)
	}
	colon := strings.IndexByte(s, ':') >= 0
	if colon && strings.IndexByte(s, '@') >= 0 {
		s = redactUserinfo(s)
		s = redactBareUserinfo(s)
	}
	if strings.Contains(s, "eyJ") {
		s = redactJWTs(s)
	}
	if colon {
		s = redactBotTokens(s)
	}
	if strings.IndexByte(s, 'b') >= 0 || strings.IndexByte(s, 'B') >= 0 {
		s = redactAuthSchemes(s)
	}
	if colon || strings.IndexByte(s, '=') >= 0 {
		s = redactPairs(s)
	}
	if strings.Contains(s, "hook") {
		s = redactHookPaths(s)
	}
	if vendorTokenHint(s) {
		s = redactVendorTokens(s)
	}
	return s
}

// startHash hashes the first four bytes of s (len(s) >= 4) to 16 bits.
func startHash(s string) uint32 {
	w := uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
	return (w * 2654435761) >> 16
}

// mayContainKnown is false when no known form can start anywhere in s.
func (r *Redactor) mayContainKnown(s string) bool {
	if r == nil || r.starts == nil || len(s) < r.minLen {
		return false
	}
	for i := 0; i+r.minLen <= len(s); i++ {
		if h := startHash(s[i:]); r.starts[h/64]&(1<<(h%64)) != 0 {
			return true
		}
	}
	return false
}

func (r *Redactor) containsKnown(s string) bool {
	if !r.mayContainKnown(s) {
		return false
	}
	for _, k := range r.known {
		if strings.Contains(s, k.text) {
			return true
		}
	}
	return false
}

// Value returns a redacted deep copy of a JSON-like value: map[string]any,
// []any, string, json.Number, float64, bool or nil, nested freely. It never
// mutates v. Other Go numbers pass through; a []byte is treated as a
// string (not base64, which would hide its content from the rules); any
// other type (structs, typed maps and slices, json.RawMessage) is converted
// through encoding/json first, and replaced by Unsupported if that fails.
func (r *Redactor) Value(v any) any {
	return r.value(v, 0)
}

func (r *Redactor) value(v any, depth int) any {
	switch t := v.(type) {
	case nil, bool, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return v
	case string:
		// Return the original interface when nothing changed: boxing the
		// string again would allocate.
		if s := r.String(t); s != t {
			return s
		}
		return v
	case json.Number:
		// A numeric secret (a PIN) could appear as a number.
		if r.containsKnown(string(t)) {
			return Marker
		}
		return v
	case map[string]any:
		if depth >= MaxDepth {
			return TooDeep
		}
		return r.object(t, depth+1)
	case []byte:
		// encoding/json would turn these into base64, hiding a known value
		// from the text rules.
		if r.containsKnown(string(t)) {
			return Marker
		}
		return r.value(string(t), depth)
	case []any:
		if depth >= MaxDepth {
			return TooDeep
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = r.value(e, depth+1)
		}
		return out
	default:
		raw, err := json.Marshal(t)
		if err != nil {
			return Unsupported
		}
		var decoded any
		if err := unmarshalNumber(raw, &decoded); err != nil {
			return Unsupported
		}
		return r.value(decoded, depth)
	}
}

// secretPairValue reports whether m is a name/value pair naming a secret,
// like Sonarr's {"name": "apiKey", "value": "..."} provider fields.
func secretPairValue(m map[string]any) bool {
	if _, ok := m["value"]; !ok {
		return false
	}
	for _, k := range [...]string{"name", "key", "field", "header"} {
		if s, ok := m[k].(string); ok && IsSecretKey(s) {
			return true
		}
	}
	p, _ := m["privacy"].(string)
	return strings.EqualFold(p, "apikey") || strings.EqualFold(p, "password")
}

func (r *Redactor) object(m map[string]any, depth int) map[string]any {
	out := make(map[string]any, len(m))
	pair := secretPairValue(m)
	var renamed []string
	for k, v := range m {
		if r.String(k) != k {
			renamed = append(renamed, k)
			continue
		}
		out[k] = r.member(k, v, depth, pair)
	}
	// Keys that carried a secret are added after all unchanged keys, in
	// sorted order, so a collision between redacted names is resolved the
	// same way every time and never overwrites an unchanged key.
	slices.Sort(renamed)
	for _, k := range renamed {
		nk := r.String(k)
		for n := 2; ; n++ {
			if _, taken := out[nk]; !taken {
				break
			}
			nk = r.String(k) + "#" + strconv.Itoa(n)
		}
		out[nk] = r.member(k, m[k], depth, pair)
	}
	return out
}

// member redacts the value of object member k.
func (r *Redactor) member(k string, v any, depth int, pair bool) any {
	if IsSecretKey(k) {
		if _, ok := v.(bool); ok && isFlagName(k) {
			return v
		}
		return Marker
	}
	if pair && k == "value" {
		return Marker
	}
	return r.value(v, depth)
}

func unmarshalNumber(raw []byte, v *any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	// Exactly one value: trailing data means raw was not a JSON document.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("redact: trailing data after JSON value")
	}
	return nil
}

// JSON redacts a JSON document: it decodes raw (numbers kept exact), applies
// Value and re-encodes without HTML escaping. Input that is not a single
// valid JSON document is redacted as text with String.
func (r *Redactor) JSON(raw []byte) ([]byte, error) {
	var v any
	if err := unmarshalNumber(raw, &v); err != nil {
		return []byte(r.String(string(raw))), nil
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.Value(v)); err != nil {
		return nil, fmt.Errorf("redact: encode: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
