package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// Embedded evaluates the policy in-process. It is safe for concurrent use.
// What it remembers (decisionCache) lives and dies with this engine, i.e.
// with this compiled policy and its data.
type Embedded struct{ *decisionCache }

var _ Engine = (*Embedded)(nil)

// inProcess evaluates the compiled policy.
type inProcess struct {
	query rego.PreparedEvalQuery
	// partialMu serializes partial evaluations (see NewEmbedded).
	partialMu    sync.Mutex
	partialQuery rego.PreparedPartialQuery
}

// embeddedResidualRoots are where an embedded residual's references may
// point: the residual itself, the support rules partial evaluation wrote
// (package partial) and the data documents (policies/data, loaded under
// data.data).
var embeddedResidualRoots = []ast.Ref{
	ast.MustParseRef("data." + residualPackage),
	ast.MustParseRef("data.partial"),
	ast.MustParseRef("data.data"),
}

// NewEmbedded loads the policy directory fsys (policies.FS in production,
// os.DirFS in tests) with OPA's own loader, so data files land at the same
// paths as under `opa run --server policies/` (data/toolgate/x.json ->
// data.data.toolgate). *_test.rego files are skipped. The modules are
// compiled and the query prepared once, here.
func NewEmbedded(ctx context.Context, fsys fs.FS) (*Embedded, error) {
	res, err := loader.NewFileLoader().
		WithFS(fsys).
		WithRegoVersion(ast.RegoV1).
		Filtered([]string{"."}, skipTests)
	if err != nil {
		return nil, fmt.Errorf("load policy: %w", err)
	}

	compiler := ast.NewCompiler()
	compiler.Compile(res.ParsedModules())
	if compiler.Failed() {
		return nil, fmt.Errorf("compile policy: %w", compiler.Errors)
	}
	// Without this check a policy that lost its entry point would load fine
	// and then deny every call as "undefined"; fail at start-up instead.
	if len(compiler.GetRulesExact(ast.MustParseRef(Query))) == 0 {
		return nil, fmt.Errorf("load policy: no rule defines %s", Query)
	}

	// Keeping the data as AST values spares a Go->AST conversion of every
	// data document the policy reads on every evaluation.
	store, err := res.StoreWithOpts(inmem.OptReturnASTValuesOnRead(true))
	if err != nil {
		return nil, fmt.Errorf("load policy data: %w", err)
	}
	pq, err := rego.New(
		rego.Query(Query),
		rego.Compiler(compiler),
		rego.Store(store),
		// A builtin error (e.g. a type error on odd input) becomes an
		// evaluation error, not a silently undefined rule; the Remote engine
		// asks OPA for the same with ?strict-builtin-errors=true.
		rego.StrictBuiltinErrors(true),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare policy: %w", err)
	}
	// Partial evaluation rewrites terms in place as it goes, so it gets its
	// own copy of the modules and the data, and runs one at a time: it
	// never touches what the evaluations above read.
	modules := map[string]*ast.Module{}
	for name, m := range res.ParsedModules() {
		modules[name] = m.Copy()
	}
	partialCompiler := ast.NewCompiler()
	partialCompiler.Compile(modules)
	if partialCompiler.Failed() {
		return nil, fmt.Errorf("compile policy: %w", partialCompiler.Errors)
	}
	docs, err := copyDocuments(res.Documents)
	if err != nil {
		return nil, fmt.Errorf("load policy data: %w", err)
	}
	partial, err := rego.New(
		rego.Query(resultVar+" = "+Query),
		rego.Compiler(partialCompiler),
		rego.Store(inmem.NewFromObjectWithOpts(docs, inmem.OptReturnASTValuesOnRead(true))),
		rego.StrictBuiltinErrors(true),
	).PrepareForPartial(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare policy for partial evaluation: %w", err)
	}
	opa := &inProcess{query: pq, partialQuery: partial}
	return &Embedded{newDecisionCache(opa, cacheOptions{residualData: store, residualRoots: embeddedResidualRoots})}, nil
}

// copyDocuments deep-copies loaded data through its JSON form.
func copyDocuments(docs map[string]any) (map[string]any, error) {
	b, err := json.Marshal(docs)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return out, dec.Decode(&out)
}

// skipTests is a loader filter that drops *_test.rego files.
func skipTests(p string, info fs.FileInfo, _ int) bool {
	return !info.IsDir() && strings.HasSuffix(path.Base(p), "_test.rego")
}

// evaluate runs the whole policy for in.
func (p *inProcess) evaluate(ctx context.Context, in Input) (Decision, error) {
	v, err := evalWith(ctx, p.query, in)
	if err != nil {
		return failClosed, err
	}
	return decisionOf(v)
}

// partial partially evaluates the decision for in's static part.
func (p *inProcess) partial(ctx context.Context, in Input, noArgs bool) (*rego.PartialQueries, error) {
	items := in.staticItems()
	var unknowns []*ast.Term
	for _, f := range unknownFields(noArgs) {
		unknowns = append(unknowns, ast.RefTerm(ast.InputRootDocument, ast.StringTerm(f)))
	}
	if noArgs {
		items = append(items, item("args", ast.ObjectTerm()), item("ticket", Ticket{State: "none"}.term()))
	}
	p.partialMu.Lock()
	defer p.partialMu.Unlock()
	pq, err := p.partialQuery.Partial(ctx, rego.EvalParsedInput(ast.NewObject(items...)), rego.EvalParsedUnknowns(unknowns))
	if err != nil {
		return nil, err
	}
	// Copies: the result may share terms with what the next partial
	// evaluation rewrites.
	out := &rego.PartialQueries{}
	for _, q := range pq.Queries {
		out.Queries = append(out.Queries, q.Copy())
	}
	for _, m := range pq.Support {
		out.Support = append(out.Support, m.Copy())
	}
	return out, nil
}
