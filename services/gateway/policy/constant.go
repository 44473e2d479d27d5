package policy

import (
	"context"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// resultVar is the variable the partial query binds the decision to.
const resultVar = "toolgate_decision"

// constantOf reports whether the queries partial evaluation left (with no
// support rules) bind resultVar to one and the same valid decision
// whatever the unknowns are, and which. OPA leaves some constant
// expressions unfolded (count(set()) > 0 where a rule that depends on an
// unknown turned out empty), so a query that refers to nothing but
// deterministic builtins is evaluated here; exactly one value must come
// out of all of them.
func constantOf(ctx context.Context, queries []ast.Body) (Decision, bool) {
	var value ast.Value
	for _, body := range queries {
		if !selfContained(body) {
			return Decision{}, false
		}
		rs, err := rego.New(rego.ParsedQuery(body), rego.StrictBuiltinErrors(true)).Eval(ctx)
		if err != nil {
			return Decision{}, false
		}
		for _, r := range rs {
			x, ok := r.Bindings[resultVar]
			if !ok {
				return Decision{}, false
			}
			v, err := ast.InterfaceToValue(x)
			if err != nil || (value != nil && value.Compare(v) != 0) {
				return Decision{}, false
			}
			value = v
		}
	}
	if value == nil {
		return Decision{}, false
	}
	x, err := ast.JSON(value)
	if err != nil {
		return Decision{}, false
	}
	d, err := decisionFromResult(x)
	if err != nil || Validate(d) != nil {
		return Decision{}, false
	}
	return d, true
}

// selfContained reports whether body refers to no document (input, data,
// a rule, a support module) and calls nothing but deterministic builtins:
// then nothing outside it can change what it evaluates to.
func selfContained(body ast.Body) bool {
	ok := true
	ast.WalkExprs(body, func(e *ast.Expr) bool {
		if len(e.With) > 0 {
			ok = false
		}
		return !ok
	})
	ast.WalkRefs(body, func(r ast.Ref) bool {
		b, isBuiltin := ast.BuiltinMap[r.String()]
		if !isBuiltin || b.Nondeterministic {
			ok = false
		}
		return !ok
	})
	return ok
}
