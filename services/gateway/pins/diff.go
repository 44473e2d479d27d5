package pins

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Render shows a definition for a person: instructions as their text,
// a tool definition as indented JSON. Invalid JSON is shown as it is.
func Render(definition json.RawMessage) string {
	if len(bytes.TrimSpace(definition)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(definition))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(definition)
	}
	if text, ok := v.(string); ok {
		return text
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return string(definition)
	}
	return strings.TrimRight(buf.String(), "\n")
}

// Diff is a unified diff from the pinned to the current definition of c,
// with enough context to read it without the whole definition. It is empty
// when the pinned definition is unknown (a pin from a hash-only file).
func Diff(c Change) string {
	if len(c.PinnedDefinition) == 0 {
		return ""
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(Render(c.PinnedDefinition)),
		B:        difflib.SplitLines(Render(c.CurrentDefinition)),
		FromFile: "pinned " + c.Pinned,
		ToFile:   "pending " + c.Current,
		Context:  3,
	})
	if err != nil {
		return ""
	}
	return d
}
