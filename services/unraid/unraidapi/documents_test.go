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
// future code builds one.
func TestUnknownDocumentsAreNotSent(t *testing.T) {
	c := New(nil, NewLimiter(90, 0, nil, nil), nil)
	for _, d := range []Document{
		{Name: "Evil", Text: `mutation Evil { array { setState(input: {desiredState: STOP}) { state } } }`, Mutation: true},
		{Name: "Overview", Text: strings.Replace(Overview.Text, "time", "time machineId", 1)},
	} {
		if err := c.Do(t.Context(), d, nil, nil); err == nil || !strings.Contains(err.Error(), "not one the service may send") {
			t.Errorf("%s: %v", d.Name, err)
		}
	}
}
