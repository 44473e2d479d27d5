// Package apischema holds the GraphQL schemas of Unraid's API that the
// unraid service is written against: unraid/api v4.37.2's
// api/generated-schema.graphql (schema.graphql), and two older releases'
// (older/) that the fake can play. Unraid disables introspection, so the
// schemas are vendored. Tests validate every document the service sends,
// and every answer the fake gives, against them; the service binary does
// not embed them.
package apischema

import (
	"embed"
	"fmt"
	"slices"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"
)

// Version is the unraid/api release the service is written against
// (schema.graphql).
const Version = "4.37.2"

// Releases are the unraid/api releases whose schemas are vendored, oldest
// first: api/generated-schema.graphql at the tags v4.20.4 (commit
// abc22bdb), v4.34.0 (a2d48433) and v4.37.2 (a00c99a5).
var Releases = []string{"4.20.4", "4.34.0", Version}

//go:embed schema.graphql older/*.graphql
var files embed.FS

var loads = func() map[string]func() (*ast.Schema, error) {
	m := map[string]func() (*ast.Schema, error){}
	for _, r := range Releases {
		name := "older/" + r + ".graphql"
		if r == Version {
			name = "schema.graphql"
		}
		m[r] = sync.OnceValues(func() (*ast.Schema, error) {
			src, err := files.ReadFile(name)
			if err != nil {
				return nil, err
			}
			return gqlparser.LoadSchema(&ast.Source{Name: name, Input: string(src)})
		})
	}
	return m
}()

// Schema returns the parsed schema of Version.
func Schema() (*ast.Schema, error) { return SchemaOf(Version) }

// SchemaOf returns the parsed schema of one of Releases.
func SchemaOf(release string) (*ast.Schema, error) {
	load, ok := loads[release]
	if !ok {
		return nil, fmt.Errorf("unraid schema: no release %q (have %v)", release, Releases)
	}
	s, err := load()
	if err != nil {
		return nil, fmt.Errorf("unraid schema %s: %w", release, err)
	}
	return s, nil
}

// Known reports whether release is one of Releases.
func Known(release string) bool { return slices.Contains(Releases, release) }

// Parse validates doc against the schema of Version (see ParseAt).
func Parse(doc string, vars map[string]any) (*ast.QueryDocument, *ast.OperationDefinition, error) {
	return ParseAt(Version, doc, vars)
}

// ParseAt validates doc against release's schema and, when vars is not
// nil, the variable values against the operation's variable definitions.
// It returns the document's one operation. Validation reports every error
// it finds, as graphql-js does (Unraid answers with all of them at once).
func ParseAt(release, doc string, vars map[string]any) (*ast.QueryDocument, *ast.OperationDefinition, error) {
	s, err := SchemaOf(release)
	if err != nil {
		return nil, nil, err
	}
	q, errs := gqlparser.LoadQueryWithRules(s, doc, nil) // nil: the specification's rules
	if len(errs) > 0 {
		return nil, nil, errs
	}
	if len(q.Operations) != 1 {
		return nil, nil, fmt.Errorf("a document must hold exactly one operation, not %d", len(q.Operations))
	}
	op := q.Operations[0]
	if vars != nil {
		if _, err := validator.VariableValues(s, op, vars); err != nil {
			return nil, nil, err
		}
	}
	return q, op, nil
}

// Errors returns the GraphQL errors in err (nil when there are none).
func Errors(err error) gqlerror.List {
	switch e := err.(type) {
	case gqlerror.List:
		return e
	case *gqlerror.Error:
		return gqlerror.List{e}
	}
	return nil
}
