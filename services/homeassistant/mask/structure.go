package mask

import (
	"cmp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/internal/redact"
)

// maxWalkDepth bounds how deep the parsed documents are followed; the
// text scanner still covers what lies deeper.
const maxWalkDepth = 256

// structural hides the values Home Assistant's loader would read under a
// credential key but the text scanner cannot see: keys that are quoted
// with escapes ("pass\u0077ord"), written as an explicit or multi-line
// key, or given as an alias; values reached through an alias (the
// anchored node is hidden where it is written); entries of a "headers"
// mapping in any style. Documents that do not parse are left to the text
// scanner; the ones before the error are still read.
func structural(t *textScanner) {
	w := walker{t: t, anchored: map[*yaml.Node]place{}}
	d := yaml.NewDecoder(strings.NewReader(t.s))
	for {
		var doc yaml.Node
		if err := d.Decode(&doc); err != nil {
			break // io.EOF, or text that does not parse from here on
		}
		w.walk(&doc, -1, false, 0)
	}
	// In the order of the text, skipping what an earlier value (the text
	// scanner's or one here) already hides: nested credential keys would
	// otherwise each rescan the lines below them.
	covered := coverage(t.spans)
	slices.SortFunc(w.secrets, func(a, b secretNode) int { return cmp.Or(a.n.Line-b.n.Line, a.n.Column-b.n.Column) })
	end := 0
	for _, sec := range w.secrets {
		off, _, ok := w.offset(sec.n)
		if !ok || off < end || covered(off) {
			continue
		}
		before := len(t.spans)
		w.hide(sec)
		for _, sp := range t.spans[before:] {
			end = max(end, sp.to)
		}
	}
}

// coverage returns a test for offsets inside one of spans.
func coverage(spans []span) func(int) bool {
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b span) int { return a.from - b.from })
	var merged []span
	for _, sp := range sorted {
		if n := len(merged); n > 0 && sp.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, sp.to)
			continue
		}
		merged = append(merged, sp)
	}
	return func(off int) bool {
		i, _ := slices.BinarySearchFunc(merged, off, func(sp span, off int) int { return sp.from - off })
		// merged[i-1] is the last span starting at or before off.
		if i < len(merged) && merged[i].from == off {
			return true
		}
		return i > 0 && off < merged[i-1].to
	}
}

// Secrets returns the nodes of a parsed document (or of any node in it)
// that hold credentials: values under credential keys (for an alias, the
// anchored node it stands for) and entries of a "headers" mapping that are
// not harmless headers. A value already under a credential key is in the
// set too; what lies inside a collection in the set is all credential.
func Secrets(root *yaml.Node) map[*yaml.Node]bool {
	w := walker{anchored: map[*yaml.Node]place{}}
	w.walk(root, -1, false, 0)
	set := make(map[*yaml.Node]bool, len(w.secrets))
	for _, sec := range w.secrets {
		set[sec.n] = true
	}
	return set
}

type walker struct {
	t *textScanner
	// anchored are the places of the nodes that carry an anchor, which
	// an alias under a credential key may refer to later.
	anchored map[*yaml.Node]place
	secrets  []secretNode
	cols     colCursor
	offs     offsetCursor
}

// place is where a node stands: the column of the key (or the list) it
// belongs to, and whether it is inside a flow collection.
type place struct {
	owner int
	flow  bool
}

type secretNode struct {
	n *yaml.Node
	place
}

// offset is the byte offset of a node's position, and its line.
func (w *walker) offset(n *yaml.Node) (int, int, bool) {
	li := n.Line - 1
	if li < 0 || li >= len(w.t.lines) {
		return 0, 0, false
	}
	return w.offs.at(w.t.s, w.t.lines[li], n.Column-1), li, true
}

// col is a node's display column, as the text scanner counts (-1
// without a text).
func (w *walker) col(n *yaml.Node) int {
	if w.t == nil {
		return -1
	}
	off, li, ok := w.offset(n)
	if !ok {
		return -1
	}
	return w.cols.at(w.t.s, w.t.lines[li], off)
}

func (w *walker) walk(n *yaml.Node, owner int, flow bool, depth int) {
	if n == nil || depth > maxWalkDepth {
		return
	}
	if n.Anchor != "" {
		w.anchored[n] = place{owner, flow}
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.walk(c, -1, false, depth+1)
		}
	case yaml.SequenceNode:
		f, c := flow || n.Style&yaml.FlowStyle != 0, w.col(n)
		for _, item := range n.Content {
			w.walk(item, c, f, depth+1)
		}
	case yaml.MappingNode:
		f := flow || n.Style&yaml.FlowStyle != 0
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kc := w.col(k)
			w.walk(k, owner, f, depth+1)
			w.walk(v, kc, f, depth+1)
			name := keyText(k)
			switch {
			case IsSecretKey(name):
				w.secret(v, place{kc, f})
			case isHeadersKey(name):
				if hs := resolve(v); hs != nil && hs.Kind == yaml.MappingNode {
					hf := f || hs.Style&yaml.FlowStyle != 0
					for j := 0; j+1 < len(hs.Content); j += 2 {
						if !redact.HarmlessHeader(keyText(hs.Content[j])) {
							w.secret(hs.Content[j+1], place{w.col(hs.Content[j]), hf})
						}
					}
				}
			}
		}
	}
}

// keyText is a key's text: a scalar's value, an alias's target's.
func keyText(k *yaml.Node) string {
	if k = resolve(k); k != nil && k.Kind == yaml.ScalarNode {
		return strings.TrimSpace(k.Value)
	}
	return ""
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// secret notes a value to hide, standing at p; an alias is hidden where
// its anchor is.
func (w *walker) secret(v *yaml.Node, p place) {
	if v != nil && v.Kind == yaml.AliasNode {
		v = resolve(v)
		if v == nil || v.Kind == yaml.AliasNode {
			return
		}
		var ok bool
		if p, ok = w.anchored[v]; !ok {
			p = place{-1, false}
		}
	}
	if v != nil {
		w.secrets = append(w.secrets, secretNode{v, p})
	}
}

func (w *walker) hide(sec secretNode) {
	n, owner := sec.n, sec.owner
	if n.Kind == yaml.ScalarNode && (n.Tag == "!secret" || n.Tag == "!env_var" || n.Tag == "!input" || strings.HasPrefix(n.Tag, "!include")) {
		return // the tag rules see to these
	}
	off, li, ok := w.offset(n)
	if !ok {
		return
	}
	t := w.t
	if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0 {
		end := t.lines[li].end
		if _, e, ok := t.deeper(li, owner, false, true); ok {
			end = e
		}
		t.hide(off, end)
		return
	}
	t.value(off, li, owner, sec.flow, false, false)
}
