// Package apischema holds the GraphQL schema of Unraid's API that the
// unraid service is written against, unraid/api v4.37.2's
// api/generated-schema.graphql (schema.graphql, the copy the project was
// given in /work/shared/specs), and what two older releases' schemas lack
// (older.go), from which it builds their schemas for the fake to play.
// Unraid disables introspection, so the schema has to be kept here. Tests
// validate every document the service sends, and every answer the fake
// gives, against them; the service binary does not embed them.
package apischema

import (
	_ "embed"
	"fmt"
	"slices"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// Version is the unraid/api release the service is written against
// (schema.graphql: api/generated-schema.graphql at the tag v4.37.2,
// commit a00c99a55c6f16edc02f3e726a1b80930374f33d).
const Version = "4.37.2"

// Releases are the unraid/api releases SchemaOf knows, oldest first: the
// older ones (OlderReleases) and Version.
var Releases = func() []string {
	var out []string
	for _, o := range olderReleases {
		out = append(out, o.Release)
	}
	return append(out, Version)
}()

//go:embed schema.graphql
var source string

var loads = func() map[string]func() (*ast.Schema, error) {
	m := map[string]func() (*ast.Schema, error){Version: sync.OnceValues(func() (*ast.Schema, error) { return load(Version, nil) })}
	for _, o := range olderReleases {
		m[o.Release] = sync.OnceValues(func() (*ast.Schema, error) { return load(o.Release, o.Lacks) })
	}
	return m
}()

// load parses schema.graphql, leaves out what release lacks and validates
// what is left as a schema (a type removed while a field still names it
// fails here).
func load(release string, lacks []string) (*ast.Schema, error) {
	name := "schema.graphql"
	if len(lacks) > 0 {
		name += " as of " + release
	}
	doc, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: name, Input: source})
	if err != nil {
		return nil, err
	}
	if err := without(doc, lacks); err != nil {
		return nil, err
	}
	return validator.ValidateSchemaDocument(doc)
}

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
