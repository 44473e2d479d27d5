package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"unicode/utf8"
)

// MetaPreviewFacts holds, in a preview result's _meta, the small facts the
// preview reports about what the write would touch (for example the Home
// Assistant domains and device classes of the target entities). The gateway
// validates them and gives them to the policy before it issues a ticket;
// the policy may only raise the approval a write needs because of them.
const MetaPreviewFacts = "io.toolgate/preview-facts"

// Facts are a preview's facts: a flat object whose values are a boolean,
// a short string or a short list of short strings. Their shape is bounded
// so that no service can hand the policy a document it has to search.
type Facts map[string]any

// Bounds of Facts.
const (
	MaxFacts         = 16
	MaxFactList      = 64
	MaxFactString    = 128
	MaxFactsJSONSize = 8 << 10
)

// ErrFacts: the facts break their shape or their bounds.
var ErrFacts = errors.New("preview facts are malformed")

var factKey = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// FactsReporter is implemented by a write's preview value that reports
// facts. The toolkit sends them with the preview and binds them into the
// preview digest, so an apply whose recomputed facts differ is refused
// like any other change of scope.
type FactsReporter interface {
	PreviewFacts() Facts
}

// Validate checks f's shape and bounds, and that it has a JSON form.
func (f Facts) Validate() error {
	if len(f) > MaxFacts {
		return fmt.Errorf("%w: more than %d facts", ErrFacts, MaxFacts)
	}
	for k, v := range f {
		if !factKey.MatchString(k) {
			return fmt.Errorf("%w: a fact name must be lower-case letters, digits and _", ErrFacts)
		}
		switch v := v.(type) {
		case bool:
		case string:
			if err := factString(v); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrFacts, k, err)
			}
		case []string:
			if err := factList(len(v), func(i int) (string, bool) { return v[i], true }); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrFacts, k, err)
			}
		case []any:
			if err := factList(len(v), func(i int) (string, bool) { s, ok := v[i].(string); return s, ok }); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrFacts, k, err)
			}
		default:
			return fmt.Errorf("%w: %s is not a boolean, a string or a list of strings", ErrFacts, k)
		}
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFacts, err)
	}
	if len(raw) > MaxFactsJSONSize {
		return fmt.Errorf("%w: larger than %d bytes", ErrFacts, MaxFactsJSONSize)
	}
	return nil
}

func factString(s string) error {
	if len(s) > MaxFactString {
		return fmt.Errorf("a value is longer than %d bytes", MaxFactString)
	}
	if !utf8.ValidString(s) {
		return errors.New("a value is not UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return errors.New("a value has a control character")
		}
	}
	return nil
}

func factList(n int, at func(int) (string, bool)) error {
	if n > MaxFactList {
		return fmt.Errorf("a list is longer than %d", MaxFactList)
	}
	for i := range n {
		s, ok := at(i)
		if !ok {
			return errors.New("a list holds something other than strings")
		}
		if err := factString(s); err != nil {
			return err
		}
	}
	return nil
}

// ParseFacts decodes and validates facts from their JSON form (as they
// arrive in _meta). Lists come back as []string, sorted and without
// duplicates, so equal facts compare and digest alike.
func ParseFacts(raw []byte) (Facts, error) {
	if len(raw) > MaxFactsJSONSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrFacts, MaxFactsJSONSize)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrFacts)
	}
	f := Facts(m)
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return f.Normalized(), nil
}

// Normalized returns f with every list as a sorted []string without
// duplicates. f must be valid.
func (f Facts) Normalized() Facts {
	out := make(Facts, len(f))
	for k, v := range f {
		switch v := v.(type) {
		case []string:
			out[k] = sortedSet(v)
		case []any:
			s := make([]string, 0, len(v))
			for _, x := range v {
				s = append(s, x.(string))
			}
			out[k] = sortedSet(s)
		default:
			out[k] = v
		}
	}
	return out
}

func sortedSet(in []string) []string {
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
