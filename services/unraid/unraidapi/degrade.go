package unraidapi

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// Older Unraid API releases lack fields that newer ones have. Unraid
// (Apollo Server over graphql-js) validates a document before running it
// and answers one it cannot validate with HTTP 400, extensions.code
// GRAPHQL_VALIDATION_FAILED and one error per problem, all at once:
// `Cannot query field "isSpinning" on type "ArrayDisk".` A read whose
// missing fields are all Optional is sent again without them; the answer
// names what was left out and the release that has it.

// Lack is a field of a read this Unraid's API does not have.
type Lack struct {
	// Field is its path in the read ("array.disks.isSpinning").
	Field string `json:"field"`
	// Since is the unraid/api release that brought it.
	Since string `json:"needs_api"`
}

// Lacks are the fields a read was answered without.
type Lacks []Lack

// unknownField reads graphql-js's message for a field the schema does not
// have. Only the two identifiers are ever used, never the rest.
var unknownField = regexp.MustCompile(`^Cannot query field "([A-Za-z_][A-Za-z0-9_]{0,63})" on type "([A-Za-z_][A-Za-z0-9_]{0,63})"`)

// maxDegrade bounds how often one read is sent again with fewer fields:
// Unraid names every unknown field in its first answer, so one more
// request is the norm.
const maxDegrade = 2

// lacksTTL is how long the client remembers what a read lacks before it
// asks for every field again (Unraid may have been updated meanwhile).
const lacksTTL = 10 * time.Minute

// matchNewer returns the fields of doc.Newer named name (the last element
// of their path); Unraid's message names the field and its type, and a
// test keeps one name per document to one field of one type.
func matchNewer(doc Document, name string) []Field {
	var out []Field
	for _, f := range doc.Newer {
		if f.Path == name || strings.HasSuffix(f.Path, "."+name) {
			out = append(out, f)
		}
	}
	return out
}

// without returns doc's text with the fields at paths left out; a field
// whose selection becomes empty goes too. It fails when nothing is left
// or a variable would be left unused (Unraid refuses that:
// NoUnusedVariablesRule).
func without(doc Document, paths []string) (string, error) {
	q, err := parser.ParseQuery(&ast.Source{Name: doc.Name, Input: doc.Text})
	if err != nil || len(q.Operations) != 1 {
		return "", fmt.Errorf("document %s does not parse: %v", doc.Name, err)
	}
	op := q.Operations[0]
	drop := map[string]bool{}
	for _, p := range paths {
		drop[p] = true
	}
	op.SelectionSet = prune(op.SelectionSet, "", drop)
	if len(op.SelectionSet) == 0 {
		return "", errNothingLeft
	}
	used := map[string]bool{}
	var uses func(set ast.SelectionSet)
	uses = func(set ast.SelectionSet) {
		for _, sel := range set {
			f := sel.(*ast.Field)
			for _, a := range f.Arguments {
				markVariables(a.Value, used)
			}
			uses(f.SelectionSet)
		}
	}
	uses(op.SelectionSet)
	for _, v := range op.VariableDefinitions {
		if !used[v.Variable] {
			return "", errNothingLeft
		}
	}
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatQueryDocument(q)
	return b.String(), nil
}

var errNothingLeft = fmt.Errorf("nothing of the read is left")

func prune(set ast.SelectionSet, prefix string, drop map[string]bool) ast.SelectionSet {
	out := set[:0]
	for _, sel := range set {
		f, ok := sel.(*ast.Field)
		if !ok {
			out = append(out, sel) // the service's documents use no fragments
			continue
		}
		path := f.Name
		if prefix != "" {
			path = prefix + "." + f.Name
		}
		if drop[path] {
			continue
		}
		if len(f.SelectionSet) > 0 {
			if f.SelectionSet = prune(f.SelectionSet, path, drop); len(f.SelectionSet) == 0 {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

func markVariables(v *ast.Value, used map[string]bool) {
	if v == nil {
		return
	}
	if v.Kind == ast.Variable {
		used[v.Raw] = true
	}
	for _, c := range v.Children {
		markVariables(c.Value, used)
	}
}

// lackMemo remembers, per document, what this Unraid lacked, so a read is
// not sent twice every time; it forgets after lacksTTL.
type lackMemo struct {
	mu  sync.Mutex
	now func() time.Time
	m   map[string]lackEntry
}

type lackEntry struct {
	lacks Lacks
	until time.Time
}

func (m *lackMemo) get(name string) Lacks {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.m[name]
	if !ok || !m.now().Before(e.until) {
		delete(m.m, name)
		return nil
	}
	return slices.Clone(e.lacks)
}

func (m *lackMemo) put(name string, l Lacks) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(l) == 0 {
		delete(m.m, name)
		return
	}
	m.m[name] = lackEntry{lacks: slices.Clone(l), until: m.now().Add(lacksTTL)}
}

func (l Lacks) paths() []string {
	out := make([]string, 0, len(l))
	for _, x := range l {
		out = append(out, x.Field)
	}
	return out
}

func (l Lacks) has(path string) bool {
	return slices.ContainsFunc(l, func(x Lack) bool { return x.Field == path })
}

// String names the fields and the releases that have them.
func (l Lacks) String() string {
	parts := make([]string, 0, len(l))
	for _, x := range l {
		parts = append(parts, x.Field+" (API "+x.Since+")")
	}
	return strings.Join(parts, ", ")
}

// TextFor is doc's text as it can be sent to an Unraid whose API is
// release: without the Optional fields that came later, which it returns.
// It fails when doc needs a field that came later, or nothing is left.
func (d Document) TextFor(release string) (string, Lacks, error) {
	var lacks Lacks
	for _, f := range d.Newer {
		if !Older(release, f.Since) {
			continue
		}
		if !f.Optional {
			return "", nil, fmt.Errorf("%s needs %s, which came with API %s", d.Name, f.Path, f.Since)
		}
		lacks = append(lacks, Lack{Field: f.Path, Since: f.Since})
	}
	if len(lacks) == 0 {
		return d.Text, nil, nil
	}
	text, err := without(d, lacks.paths())
	if err != nil {
		return "", lacks, fmt.Errorf("%s without %s: %w", d.Name, lacks, err)
	}
	return text, lacks, nil
}

// Older reports whether release a (x.y.z, maybe with a leading v and a
// suffix) comes before b; a release it cannot read is not older.
func Older(a, b string) bool {
	x, okA := releaseOf(a)
	y, okB := releaseOf(b)
	return okA && okB && slices.Compare(x, y) < 0
}

var releaseRE = regexp.MustCompile(`^v?(\d{1,4})\.(\d{1,4})\.(\d{1,4})`)

func releaseOf(v string) ([]int, bool) {
	m := releaseRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return nil, false
	}
	out := make([]int, 3)
	for i := range out {
		out[i], _ = strconv.Atoi(m[i+1])
	}
	return out, true
}
