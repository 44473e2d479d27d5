// Package apischema holds the GraphQL schema of Unraid's API that the
// unraid service is written against (unraid/api v4.37, generated-schema.graphql
// as the API publishes it; Unraid disables introspection, so the schema is
// vendored). Tests validate every document the service sends, and every
// answer the fake gives, against it; the service binary does not embed it.
package apischema

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"
)

// Version is the unraid/api release the schema comes from.
const Version = "4.37"

//go:embed schema.graphql
var source string

var load = sync.OnceValues(func() (*ast.Schema, error) {
	return gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: source})
})

// Schema returns the parsed schema.
func Schema() (*ast.Schema, error) {
	s, err := load()
	if err != nil {
		return nil, fmt.Errorf("unraid schema: %w", err)
	}
	return s, nil
}

// Parse validates doc against the schema and, when vars is not nil, the
// variable values against the operation's variable definitions. It returns
// the document's one operation.
func Parse(doc string, vars map[string]any) (*ast.QueryDocument, *ast.OperationDefinition, error) {
	s, err := Schema()
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
