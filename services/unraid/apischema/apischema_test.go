package apischema

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// The schema parses, and validation really rejects what Unraid
// would: an unknown field, a missing required argument, a wrong enum value.
func TestSchemaValidatesDocuments(t *testing.T) {
	if _, err := Schema(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, doc string
		vars      map[string]any
		want      string // "" means valid
	}{
		{"valid", `query { array { state parityCheckStatus { status progress } } }`, nil, ""},
		{"unknown field", `query { array { stat } }`, nil, `Cannot query field "stat"`},
		{"memory is not on info.memory", `query { info { memory { total } } }`, nil, `Cannot query field "total"`},
		{"missing argument", `query { logFile { content } }`, nil, `argument "path"`},
		{"wrong enum in a variable", `query Q($f: NotificationFilter!) { notifications { list(filter: $f) { id } } }`,
			map[string]any{"f": map[string]any{"type": "READ", "offset": 0, "limit": 5}}, "READ"},
		{"two operations", `query A { online } query B { online }`, nil, "exactly one operation"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse(c.doc, c.vars)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("valid document refused: %v", err)
			case c.want != "" && err == nil:
				t.Fatal("invalid document accepted")
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %q lacks %q", err, c.want)
			}
		})
	}
}

// schema.graphql is upstream's file byte for byte: its git blob id is the
// one `git rev-parse v4.37.2:api/generated-schema.graphql` prints in a
// clone of unraid/api.
func TestSchemaIsUpstreamFile(t *testing.T) {
	if got, want := blobID([]byte(source)), "c697f9886757b642f839c322350a9bd69f4ac7f8"; got != want {
		t.Errorf("schema.graphql: blob %s, want upstream's %s", got, want)
	}
}

// blobID is git's object id of a file's contents.
func blobID(src []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(src))
	h.Write(src)
	return hex.EncodeToString(h.Sum(nil))
}

// Every release SchemaOf knows builds, an older one without what it
// lacks; a release it does not know is refused.
func TestOlderSchemasLackTheirFacts(t *testing.T) {
	if want := len(olderReleases) + 1; len(Releases) != want || Releases[len(Releases)-1] != Version {
		t.Fatalf("releases %v", Releases)
	}
	current, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range OlderReleases() {
		s, err := SchemaOf(o.Release)
		if err != nil {
			t.Fatalf("%s: %v", o.Release, err)
		}
		if !Known(o.Release) || len(o.Lacks) == 0 {
			t.Errorf("%s: known %v, %d facts", o.Release, Known(o.Release), len(o.Lacks))
		}
		for _, fact := range o.Lacks {
			if !Has(current, fact) {
				t.Errorf("%s: %s is not in %s's schema either", o.Release, fact, Version)
			}
			if Has(s, fact) {
				t.Errorf("%s: built schema still has %s", o.Release, fact)
			}
		}
	}
	if _, err := SchemaOf("4.0.0"); err == nil || Known("4.0.0") {
		t.Error("a release that is not known was accepted")
	}
}

// A fact that names nothing, or leaves a field naming a type that is
// gone, fails the build of that release's schema instead of being
// ignored.
func TestWrongFactsFailTheSchema(t *testing.T) {
	for _, c := range []struct{ fact, want string }{
		{"NoSuchType", "no type NoSuchType"},
		{"ArrayDisk.noSuchField", "no field noSuchField of ArrayDisk"},
		{"ContainerState.NOSUCH", "no value NOSUCH of enum ContainerState"},
		{"Docker.logs(noSuchArg)", "no argument noSuchArg of Docker.logs"},
		{"Docker.logs(tail", "Type.field(argument)"},
		{"DockerContainerLogs", "DockerContainerLogs"}, // Docker.logs still returns it
	} {
		_, err := load("test", []string{c.fact})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.fact, err, c.want)
		}
	}
	s, err := load("test", []string{"Docker.logs(tail)", "ArrayDiskType.BOOT"})
	if err != nil {
		t.Fatal(err)
	}
	if Has(s, "Docker.logs(tail)") || !Has(s, "Docker.logs(since)") || Has(s, "ArrayDiskType.BOOT") || !Has(s, "ArrayDiskType.DATA") {
		t.Error("an argument or an enum value was not removed alone")
	}
}
