package unraidapi

import (
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/toolgate/toolgate/services/unraid/apischema"
)

// Every document the service can send is valid against Unraid's schema
// (API 4.37): a field that does not exist fails here, not in a user's call.
func TestEveryDocumentIsValidAgainstTheSchema(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Documents() {
		t.Run(d.Name, func(t *testing.T) {
			if seen[d.Name] {
				t.Fatalf("two documents named %s", d.Name)
			}
			seen[d.Name] = true
			_, op, err := apischema.Parse(d.Text, nil)
			if err != nil {
				t.Fatalf("%s does not validate: %v", d.Name, err)
			}
			if op.Name != d.Name {
				t.Errorf("operation is named %q, the document %q (operationName must match)", op.Name, d.Name)
			}
			if want := map[bool]ast.Operation{false: ast.Query, true: ast.Mutation}[d.Mutation]; op.Operation != want {
				t.Errorf("%s is a %s but marked Mutation=%v", d.Name, op.Operation, d.Mutation)
			}
		})
	}
}

// The writes the service can send are exactly the managed actions of the
// issue: container start/stop/restart, VM start/stop, the four parity-check
// actions and archiving notifications. Array state, disks, API keys,
// plugins, settings and the rest of Unraid's mutations are unreachable.
func TestOnlyTheManagedMutationsExist(t *testing.T) {
	var got []string
	for _, d := range Documents() {
		if !d.Mutation {
			continue
		}
		_, op, err := apischema.Parse(d.Text, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, sel := range op.SelectionSet {
			f := sel.(*ast.Field)
			// docker, vm, parityCheck, array … group their mutations in a
			// *Mutations type: the action is the field inside.
			if !strings.HasSuffix(f.Definition.Type.Name(), "Mutations") {
				got = append(got, f.Name)
				continue
			}
			for _, inner := range f.SelectionSet {
				got = append(got, f.Name+"."+inner.(*ast.Field).Name)
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"archiveNotifications",
		"docker.restart", "docker.start", "docker.stop",
		"parityCheck.cancel", "parityCheck.pause", "parityCheck.resume", "parityCheck.start",
		"vm.start", "vm.stop",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("mutation fields:\n got %v\nwant %v", got, want)
	}
}

// A document that is not one of Documents() is never sent, even if some
// future code builds one; a read is never sent as a mutation or back.
func TestUnknownDocumentsAreNotSent(t *testing.T) {
	c := New(nil, NewLimiter(90, 0, nil, nil), nil)
	for _, d := range []Document{
		{Name: "Evil", Text: `mutation Evil { array { setState(input: {desiredState: STOP}) { state } } }`, Mutation: true},
		{Name: "Overview", Text: strings.Replace(Overview.Text, "time", "time machineId", 1)},
		{Name: "VMStop", Text: VMStop.Text, Mutation: true, Newer: []Field{{Path: "vm.stop", Since: "9.0.0", Optional: true}}},
	} {
		var err error
		if d.Mutation {
			err = c.Mutate(t.Context(), d, nil, nil)
		} else {
			_, err = c.Query(t.Context(), d, nil, nil)
		}
		if err == nil || !strings.Contains(err.Error(), "not one the service may send") {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
	if _, err := c.Query(t.Context(), VMStop, nil, nil); err == nil || !strings.Contains(err.Error(), "not a read") {
		t.Errorf("a mutation went out as a read: %v", err)
	}
	if err := c.Mutate(t.Context(), VMs, nil, nil); err == nil || !strings.Contains(err.Error(), "not a mutation") {
		t.Errorf("a read went out as a mutation: %v", err)
	}
}

// newerField is one field a document selects, with its type in API
// 4.37.2, as a walk of the document finds it.
type newerField struct {
	path, parent, name string
}

func fieldsOf(t *testing.T, d Document) []newerField {
	t.Helper()
	_, op, err := apischema.Parse(d.Text, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []newerField
	var walk func(set ast.SelectionSet, prefix string)
	walk = func(set ast.SelectionSet, prefix string) {
		for _, sel := range set {
			f := sel.(*ast.Field)
			path := strings.TrimPrefix(prefix+"."+f.Name, ".")
			out = append(out, newerField{path: path, parent: f.ObjectDefinition.Name, name: f.Name})
			walk(f.SelectionSet, path)
		}
	}
	walk(op.SelectionSet, "")
	return out
}

// Newer is true to the older releases' schemas: a field an older release
// SchemaOf knows lacks is listed, with a release after it, and a listed field is
// there from its release on. (Every release tag from v4.7.0 to v4.37.2 was
// compared when the list was made; the older releases SchemaOf builds keep
// it honest.) One
// name stands for one field per document, as the client matches Unraid's
// message by name.
func TestNewerFieldsAreTrueToOlderReleases(t *testing.T) {
	for _, d := range Documents() {
		all := fieldsOf(t, d)
		byPath := map[string]newerField{}
		for _, f := range all {
			byPath[f.path] = f
		}
		byName := map[string]Field{}
		for _, n := range d.Newer {
			f, ok := byPath[n.Path]
			if !ok {
				t.Errorf("%s: Newer lists %s, which it does not select", d.Name, n.Path)
				continue
			}
			if Older(n.Since, "4.7.0") || Older(apischema.Version, n.Since) {
				t.Errorf("%s: %s since %q is not a release between 4.7.0 and %s", d.Name, n.Path, n.Since, apischema.Version)
			}
			if prev, ok := byName[f.name]; ok && (prev.Since != n.Since || prev.Optional != n.Optional) {
				t.Errorf("%s: two fields named %s differ (%+v, %+v)", d.Name, f.name, prev, n)
			}
			byName[f.name] = n
		}
		for _, release := range apischema.Releases {
			s, err := apischema.SchemaOf(release)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range all {
				parent := s.Types[f.parent]
				if parent == nil {
					continue // the field above it is missing: checked there
				}
				has := parent.Fields.ForName(f.name) != nil
				listed := slices.IndexFunc(d.Newer, func(n Field) bool { return n.Path == f.path })
				switch {
				case !has && listed < 0:
					t.Errorf("%s: API %s lacks %s (%s.%s), which Newer does not list", d.Name, release, f.path, f.parent, f.name)
				case !has && !Older(release, d.Newer[listed].Since):
					t.Errorf("%s: API %s lacks %s, listed since %s", d.Name, release, f.path, d.Newer[listed].Since)
				case has && listed >= 0 && Older(release, d.Newer[listed].Since):
					t.Errorf("%s: API %s has %s, listed since %s", d.Name, release, f.path, d.Newer[listed].Since)
				}
			}
		}
	}
}

// What the client sends to an older release validates against that
// release's schema, and against 4.37.2's: leaving fields out never makes a
// document the service could not send. A read that cannot do without a
// field says so instead.
func TestReadsForOlderReleasesValidate(t *testing.T) {
	for _, release := range apischema.Releases {
		for _, d := range Documents() {
			t.Run(release+"/"+d.Name, func(t *testing.T) {
				text, lacks, err := d.TextFor(release)
				if err != nil {
					if _, _, verr := apischema.ParseAt(release, d.Text, nil); verr == nil {
						t.Fatalf("refused a document API %s accepts: %v", release, err)
					}
					return
				}
				if release == apischema.Version && (text != d.Text || len(lacks) > 0) {
					t.Fatalf("the current release gets a changed document: %v", lacks)
				}
				for _, r := range []string{release, apischema.Version} {
					_, op, err := apischema.ParseAt(r, text, nil)
					if err != nil {
						t.Fatalf("the text for %s does not validate against %s: %v\n%s", release, r, err, text)
					}
					if op.Name != d.Name {
						t.Fatalf("operation renamed to %s", op.Name)
					}
				}
			})
		}
	}
}

func TestOlderComparesReleases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"4.20.4", "4.21.0", true}, {"4.21.0", "4.21.0", false}, {"4.37.2", "4.9.0", false}, {"4.9.0", "4.37.2", true},
		{"v4.34.0", "4.35.0", true}, {"4.35.0-build-number-96", "4.35.0", false}, {"4.34.9+abc", "4.35.0", true},
		{"unknown", "4.35.0", false}, {"", "4.35.0", false}, {"4.35", "4.36.0", false},
	} {
		if got := Older(c.a, c.b); got != c.want {
			t.Errorf("Older(%q, %q) = %v", c.a, c.b, got)
		}
	}
}
