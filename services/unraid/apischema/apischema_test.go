package apischema

import (
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
