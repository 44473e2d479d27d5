package policy

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
)

// Residual decisions.
//
// When the decision for a known part is not one constant, partial
// evaluation still leaves a residual: the few conditions on the varying
// fields that are left once everything known is folded in (for a write,
// typically "is input.args.force true?"). Evaluating that residual costs a
// fraction of the whole policy. It is compiled on its own with the
// policy's data, only when it refers to nothing but itself, its support
// rules and the data documents, and its answer is used only after it
// agreed with the full evaluation on the first residualChecks calls of its
// known part; any disagreement, or a residual that does not compile or
// refers elsewhere, means full evaluation for that known part from then on.
// Its answers are remembered per the input values it reads (memo.go).

// residualPackage holds the rule built from the residual queries.
const residualPackage = "toolgate_residual"

// residualChecks is how many calls of a known part are evaluated both ways
// before its residual alone decides.
const residualChecks = 16

type residual struct {
	query rego.PreparedEvalQuery
	// reads are the input paths (without "input") whose values alone
	// decide the residual's answer; nil when its answers are not
	// remembered (see reads).
	reads []ast.Ref
	memo  *decisionMemo
	// hits counts answers from memo, for tests.
	hits atomic.Int64
	// disagreed: it once answered otherwise than the sidecar (Remote).
	disagreed atomic.Bool
}

// residuals shares compiled residuals between known parts whose partial
// evaluation left the same program (every client of a group calling one
// tool, typically), keyed by its source. partialMu guards it.
type residuals struct {
	m   map[string]*residual
	max int
}

func (rs *residuals) get(src string) (*residual, bool) {
	r, ok := rs.m[src]
	return r, ok
}

func (rs *residuals) put(src string, r *residual) {
	if len(rs.m) >= rs.max {
		clear(rs.m)
	}
	rs.m[src] = r
}

// newResidual compiles the partial result pq (queries and support modules)
// into one query over a set of decisions, or returns nil when it cannot.
func (e *Embedded) newResidual(ctx context.Context, pq *rego.PartialQueries) *residual {
	return e.compiled.compile(ctx, pq.Queries, pq.Support, e.store, residualRoots)
}

// compile returns the residual of queries and support, compiled with the
// data in store (nil: none) and allowed to refer to roots only, or nil
// when it cannot; a residual already compiled from the same program is
// shared. The caller serializes calls.
func (rs *residuals) compile(ctx context.Context, queries []ast.Body, support []*ast.Module, store storage.Store, roots []ast.Ref) *residual {
	if len(queries) == 0 {
		return nil
	}
	// Each query binds the decision to resultVar; one rule per query
	// collects them, as the policy's rule definitions are alternatives.
	var src strings.Builder
	fmt.Fprintf(&src, "package %s\n\n", residualPackage)
	for _, body := range queries {
		fmt.Fprintf(&src, "decision contains %s if {\n", resultVar)
		for _, expr := range body {
			fmt.Fprintf(&src, "\t%s\n", expr)
		}
		src.WriteString("}\n\n")
	}
	key := src.String()
	for _, m := range support {
		key += "\n" + m.String()
	}
	if r, ok := rs.get(key); ok {
		return r
	}
	r := compileResidual(ctx, src.String(), support, store, roots)
	rs.put(key, r) // nil too: it will not compile next time either
	return r
}

// compileResidual compiles the residual's rule src with its support
// modules, or returns nil.
func compileResidual(ctx context.Context, src string, support []*ast.Module, store storage.Store, roots []ast.Ref) *residual {
	mod, err := ast.ParseModuleWithOpts(residualPackage+".rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil
	}
	modules := map[string]*ast.Module{residualPackage + ".rego": mod}
	for i, m := range support {
		modules[fmt.Sprintf("toolgate_support_%d.rego", i)] = m.Copy()
	}
	// The residual is compiled on its own (the whole policy per known
	// part would cost megabytes each), so it may refer only to itself, the
	// support rules and (where there is a store) the data documents: a
	// reference to a rule of the policy would be undefined here and change
	// the answer.
	for _, m := range modules {
		if !selfSufficient(m, roots) {
			return nil
		}
	}
	c := ast.NewCompiler()
	c.Compile(modules)
	if c.Failed() {
		return nil
	}
	opts := []func(*rego.Rego){
		rego.Query("data." + residualPackage + ".decision"),
		rego.Compiler(c),
		rego.StrictBuiltinErrors(true),
	}
	if store != nil {
		opts = append(opts, rego.Store(store))
	}
	q, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return nil
	}
	r := &residual{query: q}
	if reads, ok := inputReads(c.Modules); ok {
		r.reads, r.memo = reads, &decisionMemo{m: map[string]Decision{}, max: maxResidualMemo}
	}
	return r
}

// residualRoots are where an embedded residual's references may point: the
// residual itself, the support rules partial evaluation wrote (package
// partial) and the data documents (policies/data, loaded under data.data).
var residualRoots = []ast.Ref{
	ast.MustParseRef("data." + residualPackage),
	ast.MustParseRef("data.partial"),
	ast.MustParseRef("data.data"),
}

// selfSufficient reports whether every reference to data in m stays within
// roots.
func selfSufficient(m *ast.Module, roots []ast.Ref) bool {
	ok := true
	ast.WalkRefs(m, func(r ast.Ref) bool {
		if !r.HasPrefix(ast.DefaultRootRef) {
			return !ok
		}
		within := false
		for _, root := range roots {
			if r.HasPrefix(root) {
				within = true
				break
			}
		}
		ok = ok && within
		return !ok
	})
	return ok
}

// eval decides in with the residual: from its memory when the values it
// reads were decided before, else by evaluating it (evalQuery).
func (r *residual) eval(ctx context.Context, in Input) (Decision, error) {
	key, ok := r.memoKey(in)
	if ok {
		if d, hit := r.memo.get(key); hit {
			r.hits.Add(1)
			return d, nil
		}
	}
	d, err := r.evalQuery(ctx, in)
	if err == nil && ok {
		r.memo.put(key, d)
	}
	return d, err
}

// evalQuery evaluates the residual for in. No decision is ErrUndefined and
// two different ones an evaluation error, as the whole policy's complete
// rule would answer.
func (r *residual) evalQuery(ctx context.Context, in Input) (Decision, error) {
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
