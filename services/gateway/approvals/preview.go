package approvals

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// preview is a ticket's preview made readable: every unified diff it
// carries (a string field whose name contains "diff"), line by line, and
// the whole preview as indented JSON. It holds plain strings only; the
// template escapes them, so hostile upstream text stays text.
type preview struct {
	Diffs []diff
	JSON  string
}

type diff struct {
	Name  string
	Lines []diffLine
}

type diffLine struct {
	Kind string // "add", "del", "hunk" or "" (context); a fixed CSS class
	Text string
}

const (
	maxPreviewShown = 256 << 10
	maxDiffLines    = 2000
)

func renderPreview(raw json.RawMessage) preview {
	var p preview
	if len(raw) == 0 {
		p.JSON = "(no preview)"
		return p
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		p.JSON = cut(string(bytes.ToValidUTF8(raw, []byte("\uFFFD"))))
		return p
	}
	if obj, ok := v.(map[string]any); ok {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := obj[k].(string); ok && strings.Contains(strings.ToLower(k), "diff") && s != "" {
				p.Diffs = append(p.Diffs, diff{Name: k, Lines: diffLines(s)})
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // the template escapes; keep the text as sent
	_ = enc.Encode(v)
	p.JSON = cut(b.String())
	return p
}

func diffLines(s string) []diffLine {
	var out []diffLine
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if i == maxDiffLines {
			out = append(out, diffLine{Text: "… (diff cut; the full preview is below)"})
			break
		}
		kind := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			kind = "file"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		}
		out = append(out, diffLine{Kind: kind, Text: l})
	}
	return out
}

func cut(s string) string {
	if len(s) <= maxPreviewShown {
		return s
	}
	s = s[:maxPreviewShown]
	for len(s) > 0 && !strings.HasSuffix(s, "\n") && (s[len(s)-1]&0xC0) == 0x80 {
		s = s[:len(s)-1]
	}
	return strings.ToValidUTF8(s, "") + "\n… (cut: the preview is larger than the page shows)"
}
