package policy

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Residual decisions.
//
// When the decision for a known part is not one constant, partial
// evaluation still leaves a residual: the few conditions on the varying
// fields that are left once everything known is folded in (for a write,
// typically "is input.args.force true?"). Evaluating that residual costs a
// fraction of the whole policy. It is compiled together with the whole
// policy and its data, so anything the residual still refers to means what
// it means there, and its answer is used only after it agreed with the full
// evaluation on the first residualChecks calls of its known part; any
// disagreement, or a residual that does not compile, means full evaluation
// for that known part from then on.

// residualPackage holds the rule built from the residual queries.
const residualPackage = "toolgate_residual"

// residualChecks is how many calls of a known part are evaluated both ways
// before its residual alone decides.
const residualChecks = 16

type residual struct {
	query rego.PreparedEvalQuery
	// checked counts the calls the full evaluation confirmed.
	checked atomic.Int32
}

// newResidual compiles the partial result pq (queries and support modules)
// with the whole policy into one query over a set of decisions, or returns
// nil when it cannot.
func (e *Embedded) newResidual(ctx context.Context, pq *rego.PartialQueries) *residual {
	if len(pq.Queries) == 0 {
		return nil
	}
	// Each query binds the decision to resultVar; one rule per query
	// collects them, as the policy's rule definitions are alternatives.
	var src strings.Builder
	fmt.Fprintf(&src, "package %s\n\n", residualPackage)
	for _, body := range pq.Queries {
		fmt.Fprintf(&src, "decision contains %s if {\n", resultVar)
		for _, expr := range body {
			fmt.Fprintf(&src, "\t%s\n", expr)
		}
		src.WriteString("}\n\n")
	}
	mod, err := ast.ParseModuleWithOpts(residualPackage+".rego", src.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil
	}
	modules := map[string]*ast.Module{residualPackage + ".rego": mod}
	for name, m := range e.modules {
		modules[name] = m.Copy()
	}
	for i, m := range pq.Support {
		modules[fmt.Sprintf("toolgate_support_%d.rego", i)] = m.Copy()
	}
	c := ast.NewCompiler()
	c.Compile(modules)
	if c.Failed() {
		return nil
	}
	q, err := rego.New(
		rego.Query("data."+residualPackage+".decision"),
		rego.Compiler(c),
		rego.Store(e.store),
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(ctx)
	if err != nil {
		return nil
	}
	return &residual{query: q}
}

// eval decides in with the residual. No decision is ErrUndefined and two
// different ones an evaluation error, as the whole policy's complete rule
// would answer.
func (r *residual) eval(ctx context.Context, in Input) (Decision, error) {
	v, err := in.astValue()
	if err != nil {
		return failClosed, fmt.Errorf("%w: build input: %w", ErrEvaluation, err)
	}
	rs, err := r.query.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		return failClosed, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return failClosed, ErrUndefined
	}
	set, ok := rs[0].Expressions[0].Value.([]any)
	if !ok {
		return failClosed, fmt.Errorf("%w: residual result is %T", ErrEvaluation, rs[0].Expressions[0].Value)
	}
	switch len(set) {
	case 0:
		return failClosed, ErrUndefined
	case 1:
	default:
		return failClosed, fmt.Errorf("%w: the policy gives %d different decisions", ErrEvaluation, len(set))
	}
	d, err := decisionFromResult(set[0])
	if err != nil {
		return failClosed, err
	}
	return checked(d)
}
