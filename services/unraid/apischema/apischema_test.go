package apischema

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// The vendored schema parses, and validation really rejects what Unraid
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

// The vendored schemas are upstream's files byte for byte: each one's git
// blob id is the one `git rev-parse v<release>:api/generated-schema.graphql`
// prints in a clone of unraid/api.
func TestVendoredSchemasAreUpstreamFiles(t *testing.T) {
	want := map[string]string{
		"4.20.4": "90017c2dd29005af0f62ea34f219a07c30bb4cdb",
		"4.34.0": "9fe342c7ba509f0d42f5246f136d98c16cfdf534",
		"4.37.2": "c697f9886757b642f839c322350a9bd69f4ac7f8",
	}
	if len(want) != len(Releases) {
		t.Fatalf("releases %v, pinned %d", Releases, len(want))
	}
	for _, r := range Releases {
		name := "older/" + r + ".graphql"
		if r == Version {
			name = "schema.graphql"
		}
		src, err := files.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00", len(src))
		h.Write(src)
		if got := hex.EncodeToString(h.Sum(nil)); got != want[r] {
			t.Errorf("%s: blob %s, want upstream's %s", name, got, want[r])
		}
		if _, err := SchemaOf(r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	if _, err := SchemaOf("4.0.0"); err == nil {
		t.Error("a release that is not vendored was accepted")
	}
}
