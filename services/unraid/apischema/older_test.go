package apischema_test

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/toolgate/toolgate/services/unraid/apischema"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// specsDir is where upstream's older schemas may be: the project's shared
// specs, or $TOOLGATE_SHARED_SPECS.
func specsDir() string {
	if d := os.Getenv("TOOLGATE_SHARED_SPECS"); d != "" {
		return d
	}
	return "/work/shared/specs"
}

// The facts of each older release are true to upstream's file where it is
// at hand (unraid-api-<release>-generated-schema.graphql, unraid/api's
// api/generated-schema.graphql at the tag v<release>): the file is the one
// the table cites, it lacks every fact, and the schema built from the
// facts agrees with it on everything the service's documents reach —
// every selected field, its type and arguments, every variable and
// argument type, every enum value. So the table cannot drift from
// upstream on a machine that has the files.
func TestOlderFactsMatchUpstreamSchemas(t *testing.T) {
	dir := specsDir()
	current, err := apischema.Schema()
	if err != nil {
		t.Fatal(err)
	}
	r := reachOf(t, current)
	for _, o := range apischema.OlderReleases() {
		t.Run(o.Release, func(t *testing.T) {
			path := filepath.Join(dir, "unraid-api-"+o.Release+"-generated-schema.graphql")
			src, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("%s is absent, so API %s's facts are not compared with upstream's schema: put unraid/api's v%s:api/generated-schema.graphql there, or set TOOLGATE_SHARED_SPECS to a directory holding it",
					path, o.Release, o.Release)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := blobID(src); got != o.Blob {
				t.Fatalf("%s has blob %s, not the %s the table cites for v%s (commit %s)", path, got, o.Blob, o.Release, o.Commit)
			}
			upstream, err := gqlparser.LoadSchema(&ast.Source{Name: path, Input: string(src)})
			if err != nil {
				t.Fatal(err)
			}
			for _, fact := range o.Lacks {
				if apischema.Has(upstream, fact) {
					t.Errorf("the table says %s lacks %s; upstream's schema has it", o.Release, fact)
				}
			}
			built, err := apischema.SchemaOf(o.Release)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range r.disagreements(built, upstream) {
				t.Errorf("built schema of %s and upstream's disagree: %s", o.Release, d)
			}
			// The comparison sees what the facts are about: without them,
			// Version's schema disagrees with the older one.
			if len(r.disagreements(current, upstream)) == 0 {
				t.Errorf("%s's schema agrees with %s's on everything the documents reach; the comparison sees nothing", apischema.Version, o.Release)
			}
		})
	}
}

func blobID(src []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(src))
	h.Write(src)
	return hex.EncodeToString(h.Sum(nil))
}

// reach is what the service's documents rely on in a schema: the fields
// they select ("Type.field") and the types they name (selected fields'
// types, variable and argument types, and the types of an input's
// fields).
type reach struct {
	fields []string
	types  []string
}

func reachOf(t *testing.T, s *ast.Schema) reach {
	t.Helper()
	fields, types := map[string]bool{}, map[string]bool{}
	var typ func(name string)
	typ = func(name string) {
		if types[name] {
			return
		}
		types[name] = true
		if d := s.Types[name]; d != nil && d.Kind == ast.InputObject {
			for _, f := range d.Fields {
				typ(f.Type.Name())
			}
		}
	}
	var walk func(set ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			f := sel.(*ast.Field)
			fields[f.ObjectDefinition.Name+"."+f.Name] = true
			typ(f.ObjectDefinition.Name)
			typ(f.Definition.Type.Name())
			for _, a := range f.Definition.Arguments {
				typ(a.Type.Name())
			}
			walk(f.SelectionSet)
		}
	}
	for _, d := range unraidapi.Documents() {
		_, op, err := apischema.Parse(d.Text, nil)
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		for _, v := range op.VariableDefinitions {
			typ(v.Type.Name())
		}
		walk(op.SelectionSet)
	}
	r := reach{}
	for f := range fields {
		r.fields = append(r.fields, f)
	}
	for n := range types {
		r.types = append(r.types, n)
	}
	slices.Sort(r.fields)
	slices.Sort(r.types)
	return r
}

// disagreements lists where a and b differ on what r reaches.
func (r reach) disagreements(a, b *ast.Schema) []string {
	var out []string
	differ := func(what string, x, y any) {
		out = append(out, fmt.Sprintf("%s: %v, upstream's %v", what, x, y))
	}
	presence := func(what string, inBuilt bool) {
		if inBuilt {
			out = append(out, what+": the built schema has it, upstream's has not")
		} else {
			out = append(out, what+": upstream's schema has it, the built one has not")
		}
	}
	for _, name := range r.types {
		x, y := a.Types[name], b.Types[name]
		if (x == nil) != (y == nil) {
			presence(name, x != nil)
			continue
		}
		if x == nil {
			continue
		}
		if x.Kind != y.Kind {
			differ(name+" kind", x.Kind, y.Kind)
		}
		if x.Kind == ast.Enum {
			if vx, vy := enumValues(x), enumValues(y); !slices.Equal(vx, vy) {
				differ(name+" values", vx, vy)
			}
		}
		if x.Kind == ast.InputObject {
			if fx, fy := inputFields(x), inputFields(y); !slices.Equal(fx, fy) {
				differ(name+" fields", fx, fy)
			}
		}
	}
	for _, tf := range r.fields {
		x, y := fieldOf(a, tf), fieldOf(b, tf)
		if (x == nil) != (y == nil) {
			presence(tf, x != nil)
			continue
		}
		if x == nil {
			continue
		}
		if x.Type.String() != y.Type.String() {
			differ(tf+" type", x.Type, y.Type)
		}
		if ax, ay := arguments(x), arguments(y); !slices.Equal(ax, ay) {
			differ(tf+" arguments", ax, ay)
		}
	}
	return out
}

func fieldOf(s *ast.Schema, typeField string) *ast.FieldDefinition {
	typ, field, _ := strings.Cut(typeField, ".")
	if d := s.Types[typ]; d != nil {
		return d.Fields.ForName(field)
	}
	return nil
}

func enumValues(d *ast.Definition) []string {
	var out []string
	for _, v := range d.EnumValues {
		out = append(out, v.Name)
	}
	slices.Sort(out)
	return out
}

func inputFields(d *ast.Definition) []string {
	var out []string
	for _, f := range d.Fields {
		out = append(out, f.Name+": "+f.Type.String())
	}
	slices.Sort(out)
	return out
}

func arguments(f *ast.FieldDefinition) []string {
	var out []string
	for _, a := range f.Arguments {
		out = append(out, a.Name+": "+a.Type.String())
	}
	slices.Sort(out)
	return out
}
