package yamlguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/homeassistant/mask"
)

// Kind is what the structured tools edit: automations and scenes are lists
// of mappings with an id, scripts a mapping by key.
type Kind string

// The kinds, named as the domains HA reloads.
const (
	Automation Kind = "automation"
	Script     Kind = "script"
	Scene      Kind = "scene"
)

// File is the kind's file.
func (k Kind) File() File {
	switch k {
	case Automation:
		return Automations
	case Script:
		return Scripts
	case Scene:
		return Scenes
	}
	return ""
}

func (k Kind) list() bool { return k != Script }

// Entry is one automation, script or scene in its file.
type Entry struct {
	ID string
	// Node is the entry's configuration (a list item, or a script's value).
	Node *yaml.Node
	// key is a script's key node.
	key *yaml.Node
	// start and end are the 0-based lines [start, end) of its text; col is
	// the column of its "- " or key.
	start, end, col int
}

// Doc is a parsed automations.yaml, scripts.yaml or scenes.yaml that
// keeps its text: every change is a splice of the changed entry's lines,
// so every other byte of the file stays as it was.
type Doc struct {
	Kind    Kind
	Entries []Entry
	lines   []string // with their line endings
	root    *yaml.Node
	// rootLine is the 0-based line of an empty flow root ([] or {}), or -1.
	rootLine int
}

// Parse parses the file of kind k.
func Parse(k Kind, raw []byte) (*Doc, error) {
	d := &Doc{Kind: k, lines: splitLines(string(raw)), rootLine: -1}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, invalidFile(k, "it is not valid YAML (%s)", yamlProblem(err))
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, invalidFile(k, "it holds more than one YAML document")
	}
	if len(doc.Content) == 0 {
		return d, nil
	}
	root := doc.Content[0]
	want := yaml.MappingNode
	if k.list() {
		want = yaml.SequenceNode
	}
	switch {
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
		return d, nil
	case root.Kind != want:
		return nil, invalidFile(k, "its top level is not a %s", map[bool]string{true: "list", false: "mapping"}[k.list()])
	case root.Style&yaml.FlowStyle != 0:
		if len(root.Content) > 0 {
			return nil, invalidFile(k, "it is written in flow style ([…] or {…}); the YAML tools edit block style only")
		}
		d.rootLine = root.Line - 1
		return d, nil
	}
	d.root = root
	if k.list() {
		for _, item := range root.Content {
			e, err := d.listEntry(item)
			if err != nil {
				return nil, err
			}
			d.Entries = append(d.Entries, e)
		}
	} else {
		for i := 0; i+1 < len(root.Content); i += 2 {
			key, val := root.Content[i], root.Content[i+1]
			start, col := key.Line-1, key.Column-1
			d.Entries = append(d.Entries, Entry{ID: key.Value, Node: val, key: key, start: start, col: col, end: d.blockEnd(start, col)})
		}
	}
	for i := 1; i < len(d.Entries); i++ {
		if d.Entries[i].start < d.Entries[i-1].end {
			return nil, invalidFile(k, "its layout is unusual (entries share lines)")
		}
	}
	return d, nil
}

func invalidFile(k Kind, format string, args ...any) error {
	return toolerr.New(toolerr.InvalidArgument, "%s cannot be edited here: "+format+"; fix it in Home Assistant first", append([]any{k.File()}, args...)...)
}

// yamlProblem keeps the position of a parse error, never the text.
var yamlLine = regexp.MustCompile(`line \d+`)

func yamlProblem(err error) string {
	if m := yamlLine.FindString(err.Error()); m != "" {
		return "error at " + m
	}
	return "parse error"
}

// listEntry locates a list item: the line of its "- ", which is the
// item's own line or, for a bare "-", the line above.
func (d *Doc) listEntry(item *yaml.Node) (Entry, error) {
	e := Entry{Node: item}
	if item.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(item.Content); i += 2 {
			if item.Content[i].Value == "id" && item.Content[i+1].Kind == yaml.ScalarNode {
				e.ID = item.Content[i+1].Value
			}
		}
	}
	line, col := item.Line-1, item.Column-1
	if line < 0 || line >= len(d.lines) {
		return e, invalidFile(d.Kind, "its layout is unusual")
	}
	text := d.lines[line]
	if col > len(text) {
		col = len(text)
	}
	if dash := strings.LastIndex(text[:col], "-"); dash >= 0 && strings.TrimSpace(text[:dash]) == "" {
		e.start, e.col = line, dash
	} else {
		for line--; line >= 0 && strings.TrimSpace(d.lines[line]) == ""; line-- {
		}
		if line < 0 || strings.TrimSpace(stripComment(d.lines[line])) != "-" {
			return e, invalidFile(d.Kind, "its layout is unusual near line %d", item.Line)
		}
		e.start, e.col = line, indentOf(d.lines[line])
	}
	e.end = d.blockEnd(e.start, e.col)
	return e, nil
}

// blockEnd is the line after an entry that starts at line start with its
// "- " or key at column col: it runs to its last line indented deeper
// (comments included). Blank lines and comments at col or less do not end
// it (a commented-out action at column 0 may sit inside an entry), but
// trailing ones are not part of it.
func (d *Doc) blockEnd(start, col int) int {
	last := start + 1
	for end := start + 1; end < len(d.lines); end++ {
		t := strings.TrimSpace(d.lines[end])
		deeper := indentOf(d.lines[end]) > col
		switch {
		case t == "" || strings.HasPrefix(t, "#") && !deeper:
			continue
		case !deeper:
			return last
		}
		last = end + 1
	}
	return last
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func stripComment(l string) string {
	if i := strings.Index(l, "#"); i >= 0 {
		return l[:i]
	}
	return l
}

func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// Find returns the entry with id; more than one is refused, as it is
// ambiguous which to change.
func (d *Doc) Find(id string) (Entry, error) {
	var found []Entry
	for _, e := range d.Entries {
		if e.ID == id {
			found = append(found, e)
		}
	}
	switch len(found) {
	case 0:
		return Entry{}, toolerr.New(toolerr.NotFound, "%s has no %s %q (ha_yaml_list shows the ids)", d.Kind.File(), d.Kind, id)
	case 1:
		return found[0], nil
	}
	return Entry{}, toolerr.New(toolerr.InvalidArgument, "%s has %d entries with id %q; fix that in Home Assistant first", d.Kind.File(), len(found), id)
}

// Text is the entry's own lines as they are in the file.
func (d *Doc) Text(e Entry) string { return strings.Join(d.lines[e.start:e.end], "") }

// Lines are the entry's first and last line, 1-based.
func (e Entry) Lines() (int, int) { return e.start + 1, e.end }

// Delete returns the file without e's lines. Comments above it stay (they
// may head the file or a group); a list left empty becomes [].
func (d *Doc) Delete(e Entry) []byte {
	lines := append(append([]string{}, d.lines[:e.start]...), d.lines[e.end:]...)
	// Two blank lines where the entry sat between blank lines become one.
	if e.start > 0 && e.start < len(lines) && blank(lines[e.start-1]) && blank(lines[e.start]) {
		lines = append(lines[:e.start], lines[e.start+1:]...)
	}
	out := strings.Join(lines, "")
	if len(d.Entries) == 1 && d.Kind.list() {
		out = ensureNewline(out) + "[]\n"
	}
	return []byte(out)
}

func blank(l string) bool { return strings.TrimSpace(l) == "" }

func ensureNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// Replace returns the file with e's lines replaced by node, encoded at e's
// column.
func (d *Doc) Replace(e Entry, node *yaml.Node) ([]byte, error) {
	text, err := d.encode(e.ID, node, e.col, d.Text(e))
	if err != nil {
		return nil, err
	}
	end := strings.Join(d.lines[e.end:], "")
	before := strings.Join(d.lines[:e.start], "")
	return []byte(before + text + end), nil
}

// Append returns the file with a new entry after the last one (before
// any comments that close the file), or in place of an empty [] or {}.
func (d *Doc) Append(id string, node *yaml.Node) ([]byte, error) {
	col := 0
	if len(d.Entries) > 0 {
		col = d.Entries[0].col
	}
	text, err := d.encode(id, node, col, "")
	if err != nil {
		return nil, err
	}
	switch {
	case len(d.Entries) > 0:
		at := d.Entries[len(d.Entries)-1].end
		head := ensureNewline(strings.Join(d.lines[:at], ""))
		return []byte(head + text + strings.Join(d.lines[at:], "")), nil
	case d.rootLine >= 0:
		// [] or {} on its own line: the entry takes its place; anything
		// else on that line (a comment) is kept above it.
		rest := strings.TrimSpace(d.lines[d.rootLine])
		keep := ""
		if i := strings.Index(rest, "#"); i >= 0 {
			keep = rest[i:] + "\n"
		} else if rest != "[]" && rest != "{}" {
			return nil, invalidFile(d.Kind, "its empty list shares a line with other text")
		}
		head := strings.Join(d.lines[:d.rootLine], "")
		return []byte(head + keep + text + strings.Join(d.lines[d.rootLine+1:], "")), nil
	}
	return []byte(ensureNewline(strings.Join(d.lines, "")) + text), nil
}

// encode renders one entry as block YAML at column col. Comments the node
// carries from lines outside the entry's own text (old) are left out, as
// those lines stay in the file.
func (d *Doc) encode(id string, node *yaml.Node, col int, old string) (string, error) {
	node = shallow(node)
	node.HeadComment = keepComments(node.HeadComment, old)
	node.FootComment = keepComments(node.FootComment, old)
	var wrap *yaml.Node
	if d.Kind.list() {
		wrap = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{node}}
	} else {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id}
		if ambiguous(id) {
			key.Style = yaml.SingleQuotedStyle
		}
		if e, err := d.Find(id); err == nil && e.key != nil {
			key = shallow(e.key)
			key.HeadComment = keepComments(key.HeadComment, old)
			key.FootComment = keepComments(key.FootComment, old)
		}
		wrap = &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, node}}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(wrap); err != nil {
		return "", toolerr.Wrap(toolerr.InvalidArgument, err, "the configuration cannot be written as YAML")
	}
	if err := enc.Close(); err != nil {
		return "", toolerr.Wrap(toolerr.InvalidArgument, err, "the configuration cannot be written as YAML")
	}
	out := dropForeignComments(buf.String(), old)
	if col > 0 {
		pad := strings.Repeat(" ", col)
		lines := splitLines(out)
		for i, l := range lines {
			if !blank(l) {
				lines[i] = pad + l
			}
		}
		out = strings.Join(lines, "")
	}
	return out, nil
}

// dropForeignComments removes comment lines the encoder put into an
// entry's text that its old text does not have as often: yaml.v3 may hang
// a comment that sits outside the entry's lines on one of its nodes, and
// those lines stay in the file anyway.
func dropForeignComments(text, old string) string {
	have := map[string]int{}
	for _, l := range splitLines(old) {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
			have[t]++
		}
	}
	var b strings.Builder
	for _, l := range splitLines(text) {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
			if have[t] == 0 {
				continue
			}
			have[t]--
		}
		b.WriteString(l)
	}
	return b.String()
}

func shallow(n *yaml.Node) *yaml.Node {
	c := *n
	return &c
}

// keepComments keeps the comment lines found in old.
func keepComments(c, old string) string {
	if c == "" {
		return ""
	}
	var kept []string
	for _, l := range strings.Split(c, "\n") {
		if t := strings.TrimSpace(l); t != "" && strings.Contains(old, t) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// --- configurations from and to the model ---------------------------------

// tagged is a string the model sends for one of HA's YAML tags.
var tagged = regexp.MustCompile(`^(!secret|!include|!include_dir_list|!include_dir_named|!include_dir_merge_list|!include_dir_merge_named|!env_var|!input)\s+(\S.*)$`)

// Masks the model may send back unchanged for a value it was shown masked.
var masks = []string{mask.Masked, redact.Marker}

// FromJSON turns a configuration the model sent (JSON, keys in its order)
// into a node: block style, strings quoted where HA's YAML 1.1 loader would
// read them as something else, "!secret name" and the like as HA's tags.
func FromJSON(raw []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, toolerr.New(toolerr.InvalidArgument, "config must be a JSON object")
	}
	n := doc.Content[0]
	if err := restyle(n, 0); err != nil {
		return nil, err
	}
	return n, nil
}

const maxDepth = 32

func restyle(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return toolerr.New(toolerr.InvalidArgument, "config is nested deeper than %d levels", maxDepth)
	}
	n.Style, n.Line, n.Column = 0, 0, 0
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		if m := tagged.FindStringSubmatch(n.Value); m != nil {
			n.Tag, n.Value = m[1], m[2]
		} else if strings.Contains(n.Value, "\n") {
			n.Style = yaml.LiteralStyle
		} else if ambiguous(n.Value) {
			n.Style = yaml.SingleQuotedStyle
		}
	}
	for _, c := range n.Content {
		if err := restyle(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// yaml11 are plain scalars HA's loader (PyYAML, YAML 1.1) reads as
// something other than a string: booleans, null, numbers (with _ or
// sexagesimal :), dates and times.
var yaml11 = regexp.MustCompile(`(?i)^(y|n|yes|no|on|off|true|false|null|~|[-+]?\.?[0-9][0-9_:.eE+\-]*|[-+]?\.(inf|nan)|0[box][0-9a-f_]+)$`)

func ambiguous(s string) bool {
	if s == "" || yaml11.MatchString(s) {
		return true
	}
	var v any
	if err := yaml.Unmarshal([]byte(s), &v); err != nil {
		return true
	}
	_, isString := v.(string)
	return !isString
}

// Merge makes the node to write from the entry's current node (old, nil
// for a new entry) and the model's (new): wherever the new value equals
// the old one, or is the mask the model was shown in its place, the old
// node is kept with its comments, style and tags (!secret, !include,
// !input); keys keep the old order, new keys follow in the model's.
func Merge(old, new *yaml.Node) (*yaml.Node, error) { return merge(old, new, "") }

func merge(old, new *yaml.Node, key string) (*yaml.Node, error) {
	if old == nil {
		return new, unmaskedCheck(new)
	}
	if old.Kind == yaml.AliasNode {
		// An alias is kept when unchanged or sent back as it was shown
		// (masked, when it stands for a credential); else the value is
		// written out, without the anchor, which stays where it is.
		if same(old.Alias, new) {
			return old, nil
		}
		m, err := merge(old.Alias, new, key)
		if err != nil || m == old.Alias || same(m, old.Alias) {
			return old, err
		}
		if m.Anchor != "" {
			m = shallow(m)
			m.Anchor = ""
		}
		return m, nil
	}
	if new.Kind == yaml.ScalarNode && isMask(new.Value) {
		if old.Kind == yaml.ScalarNode {
			return old, nil
		}
		return nil, toolerr.New(toolerr.InvalidArgument, "a masked value (%s) stands where the entry has no single value to keep; send the real value", new.Value)
	}
	if same(old, new) {
		return old, nil
	}
	// A value shown partly masked (a URL with user:***@) sent back as shown.
	if old.Kind == yaml.ScalarNode && new.Kind == yaml.ScalarNode {
		// The toolkit's redaction pass runs over every answer after ours,
		// so the model may have seen either form.
		sent := new.Value
		if strings.HasPrefix(new.Tag, "!") && !strings.HasPrefix(new.Tag, "!!") {
			sent = new.Tag + " " + new.Value // "!env_var NAME ***" as shown
		}
		if shown, ok := toJSON(old, key, 0, nil).(string); ok && shown != old.Value &&
			(sent == shown || sent == redact.New().String(shown)) {
			return old, nil
		}
	}
	switch {
	case old.Kind == yaml.MappingNode && new.Kind == yaml.MappingNode:
		out := shallow(old)
		out.Content = nil
		newVals, newKeys := map[string]*yaml.Node{}, map[string]*yaml.Node{}
		var order []string
		for i := 0; i+1 < len(new.Content); i += 2 {
			k := new.Content[i].Value
			if _, dup := newVals[k]; !dup {
				order = append(order, k)
			}
			newVals[k], newKeys[k] = new.Content[i+1], new.Content[i]
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(old.Content); i += 2 {
			k := old.Content[i].Value
			nv, ok := newVals[k]
			if !ok || seen[k] {
				continue
			}
			seen[k] = true
			v, err := merge(old.Content[i+1], nv, k)
			if err != nil {
				return nil, err
			}
			out.Content = append(out.Content, old.Content[i], v)
		}
		for _, k := range order {
			if seen[k] {
				continue
			}
			if err := unmaskedCheck(newVals[k]); err != nil {
				return nil, err
			}
			out.Content = append(out.Content, newKeys[k], newVals[k])
		}
		return out, nil
	case old.Kind == yaml.SequenceNode && new.Kind == yaml.SequenceNode:
		out := shallow(old)
		out.Content = nil
		for i, nv := range new.Content {
			if i < len(old.Content) {
				v, err := merge(old.Content[i], nv, key)
				if err != nil {
					return nil, err
				}
				out.Content = append(out.Content, v)
				continue
			}
			if err := unmaskedCheck(nv); err != nil {
				return nil, err
			}
			out.Content = append(out.Content, nv)
		}
		return out, nil
	}
	return new, unmaskedCheck(new)
}

func isMask(s string) bool {
	for _, m := range masks {
		if s == m {
			return true
		}
	}
	return false
}

// unmaskedCheck refuses a mask in new content: there is nothing to keep
// in its place, and writing "***" as a password would break the entry.
func unmaskedCheck(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && isMask(n.Value) {
		return toolerr.New(toolerr.InvalidArgument, "%s is a masked value with nothing to keep in its place; send the real value or leave the key out", n.Value)
	}
	for _, c := range n.Content {
		if err := unmaskedCheck(c); err != nil {
			return err
		}
	}
	return nil
}

// same reports whether two nodes mean the same (tags and values; not
// style or comments).
func same(a, b *yaml.Node) bool {
	for a.Kind == yaml.AliasNode {
		a = a.Alias
	}
	for b.Kind == yaml.AliasNode {
		b = b.Alias
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode {
		return a.ShortTag() == b.ShortTag() && scalarEqual(a, b)
	}
	for i := range a.Content {
		if !same(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

func scalarEqual(a, b *yaml.Node) bool {
	if a.Value == b.Value {
		return true
	}
	var x, y any
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// ToJSON turns an entry's node into JSON-ready values for the model, with
// credentials masked: values under credential keys (Home Assistant's own
// too: an alarm panel's code), user:password@ in URLs, the names behind
// !secret, headers but harmless ones, and values an alias under a
// credential key stands for. HA's other tags show as "!include file" and
// the like, which the model may send back as they are.
func ToJSON(n *yaml.Node) any { return toJSON(n, "", 0, mask.Secrets(n)) }

// ToJSONIn is ToJSON for an entry of d: an alias anywhere in the file
// that puts the entry's anchored value under a credential key hides it.
func (d *Doc) ToJSONIn(n *yaml.Node) any { return toJSON(n, "", 0, d.secrets()) }

// secrets are the nodes of the file that hold credentials (mask.Secrets).
func (d *Doc) secrets() map[*yaml.Node]bool {
	if d.root == nil {
		return nil
	}
	return mask.Secrets(d.root)
}

// toJSON shows n, found under key; secrets are the nodes that hold
// credentials (inside one, every value is masked and keys stay).
func toJSON(n *yaml.Node, key string, depth int, secrets map[*yaml.Node]bool) any {
	if depth > maxDepth {
		return "…"
	}
	if secrets[n] {
		secrets = everything
	}
	switch n.Kind {
	case yaml.AliasNode:
		return toJSON(n.Alias, key, depth+1, secrets)
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			out[k] = toJSON(n.Content[i+1], k, depth+1, secrets)
		}
		return out
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			out = append(out, toJSON(c, key, depth+1, secrets))
		}
		return out
	case yaml.ScalarNode:
		switch {
		case n.Tag == "!secret":
			return mask.SecretMasked
		case n.Tag == "!env_var":
			return n.Tag + " " + mask.EnvVarValue(n.Value)
		case strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") && isEverything(secrets):
			return n.Tag + " " + mask.Masked
		case strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!"):
			return n.Tag + " " + mask.Value(key, n.Value)
		case (mask.IsSecretKey(key) || isEverything(secrets)) && n.Tag != "!!null":
			return mask.Masked
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return mask.Value(key, n.Value)
		}
		if s, ok := v.(string); ok {
			return mask.Value(key, s)
		}
		if v != nil {
			switch v.(type) {
			case bool, int, int64, uint64, float64:
			default:
				// Dates and the like go out as the text in the file.
				return mask.Value(key, n.Value)
			}
		}
		return v
	}
	return nil
}

// everything stands for "inside a credential": every value is masked.
var everything = map[*yaml.Node]bool{nil: true}

func isEverything(secrets map[*yaml.Node]bool) bool { return secrets[nil] }
