package policy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
)

// residualPackage holds the rule built from the residual queries.
const residualPackage = "toolgate_residual"

// residual is what partial evaluation left of the policy for a static
// part: the few conditions on the per-call fields that remain once
// everything static is folded in. It is compiled on its own, which costs
// far less to evaluate than the whole policy, and used only when it refers
// to nothing but itself, its support rules and (embedded) the data
// documents.
type residual struct {
	query rego.PreparedEvalQuery
	// reads are the input paths (without "input") whose values alone
	// decide the residual's answer (memo.go); answers remembers its
	// answers by those values, nil when they are not remembered.
	reads   []ast.Ref
	answers *boundedMap[string, Decision]
	// hits counts the answers found there, for tests.
	hits atomic.Int64
	// disagreed: it once answered otherwise than the full evaluation.
	disagreed atomic.Bool
}

// residualSource is the rule made of the residual queries: each binds the
// decision to resultVar, and one rule per query collects them, as the
// policy's rule definitions are alternatives.
func residualSource(queries []ast.Body) string {
	var src strings.Builder
	fmt.Fprintf(&src, "package %s\n\n", residualPackage)
	for _, body := range queries {
		fmt.Fprintf(&src, "decision contains %s if {\n", resultVar)
		for _, expr := range body {
			fmt.Fprintf(&src, "\t%s\n", expr)
		}
		src.WriteString("}\n\n")
	}
	return src.String()
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
	// The residual is compiled on its own (the whole policy per static
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
		r.reads, r.answers = reads, newBoundedMap[string, Decision](maxResidualAnswers)
	}
	return r
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
		if d, hit := r.answers.get(key); hit {
			r.hits.Add(1)
			return d, nil
		}
	}
	d, err := r.evalQuery(ctx, in)
	if err == nil && ok {
		r.answers.put(key, d)
	}
	return d, err
}

// evalQuery evaluates the residual for in. No decision is ErrUndefined and
// two different ones an evaluation error, as the whole policy's complete
// rule would answer.
func (r *residual) evalQuery(ctx context.Context, in Input) (Decision, error) {
	v, err := evalWith(ctx, r.query, in)
	if err != nil {
		return failClosed, err
	}
	set, ok := v.([]any)
	if !ok {
		return failClosed, fmt.Errorf("%w: residual result is %T", ErrEvaluation, v)
	}
	switch len(set) {
	case 0:
		return failClosed, ErrUndefined
	case 1:
	default:
		return failClosed, fmt.Errorf("%w: the policy gives %d different decisions", ErrEvaluation, len(set))
	}
	return decisionOf(set[0])
}

// memoKey is the values r reads from in, each as its canonical text with
// its length in front, or "-" where the path is absent. ok is false when
// r's answers are not remembered or a value cannot be read.
func (r *residual) memoKey(in Input) (string, bool) {
	if r.answers == nil {
		return "", false
	}
	var b []byte
	for _, path := range r.reads {
		v, present, err := in.find(path)
		if err != nil {
			return "", false
		}
		if !present {
			b = append(b, '-')
			continue
		}
		s := v.String()
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	return string(b), true
}
