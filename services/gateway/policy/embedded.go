package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/toolgate/toolgate/internal/approval"
)

// Embedded evaluates the policy in-process. It is safe for concurrent use.
// It remembers the decisions that partial evaluation proves independent of
// the arguments, ticket, user and time (see constant.go); the memory lives
// and dies with this engine, i.e. with this compiled policy and its data.
type Embedded struct {
	query rego.PreparedEvalQuery
	known *knownDecisions
	// partialMu serializes partial evaluations (see NewEmbedded).
	partialMu sync.Mutex
	partial   rego.PreparedPartialQuery
	// The data a residual is evaluated with (residual.go): the
	// evaluations' store.
	store    storage.Store
	compiled *residuals // under partialMu
	// Evaluations, partial evaluations and residual evaluations run, for
	// tests.
	evals, partials, residuals atomic.Int64
	// residualChecks: see residual.go (tests lower it).
	residualChecks int32
}

var _ Engine = (*Embedded)(nil)

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
	return &Embedded{
		query: pq, partial: partial, known: newKnownDecisions(maxKnownDecisions),
		store: store, residualChecks: residualChecks,
		compiled: &residuals{m: map[string]*residual{}, max: maxKnownDecisions},
	}, nil
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

// Decide answers from memory when the decision for in's known part was
// proven constant, and evaluates the policy otherwise.
func (e *Embedded) Decide(ctx context.Context, in Input) (Decision, error) {
	key, ok := in.knownKey()
	if !ok {
		return e.evaluate(ctx, in)
	}
	if k, found := e.known.get(key); found {
		switch {
		case k.constant:
			return k.decision, nil
		case k.residual != nil:
			return e.decideResidual(ctx, key, k, in)
		}
		return e.evaluate(ctx, in)
	}
	d, err := e.evaluate(ctx, in)
	if err != nil {
		return d, err
	}
	// First time for this known part: is the decision a constant?
	c, isConstant, res := e.constant(ctx, in, key.fixed)
	// The constant must be what the full evaluation of this very input
	// said; anything else would be a partial evaluation fault, and the
	// full evaluation is then used for every call with this known part.
	// So must the residual's answer.
	k := known{decision: c, constant: isConstant && c == d}
	if !isConstant && res != nil {
		if rd, rerr := e.evalResidual(ctx, res, in); rerr == nil && rd == d {
			k.residual, k.checked = res, new(atomic.Int32)
		}
	}
	e.known.put(key, k)
	return d, nil
}

// decideResidual answers with the residual of in's known part; during its
// first residualChecks calls the full evaluation must agree, and when it
// does not, the full evaluation decides this known part from then on.
func (e *Embedded) decideResidual(ctx context.Context, key knownKey, k known, in Input) (Decision, error) {
	if k.checked.Load() >= e.residualChecks {
		return e.evalResidual(ctx, k.residual, in)
	}
	d, err := e.evaluate(ctx, in)
	rd, rerr := e.evalResidual(ctx, k.residual, in)
	if (err == nil) != (rerr == nil) || rd != d {
		e.known.put(key, known{})
		return d, err
	}
	k.checked.Add(1)
	return d, err
}

func (e *Embedded) evalResidual(ctx context.Context, r *residual, in Input) (Decision, error) {
	e.residuals.Add(1)
	return r.eval(ctx, in)
}

// evaluate runs the whole policy for in.
func (e *Embedded) evaluate(ctx context.Context, in Input) (Decision, error) {
	e.evals.Add(1)
	v, err := in.astValue()
	if err != nil {
		return failClosed, fmt.Errorf("%w: build input: %w", ErrEvaluation, err)
	}
	rs, err := e.query.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		return failClosed, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return failClosed, ErrUndefined
	}
	d, err := decisionFromResult(rs[0].Expressions[0].Value)
	if err != nil {
		return failClosed, err
	}
	return checked(d)
}

// decisionFromResult converts the evaluated object, applying the same rules
// as JSON decoding of the Remote answer: missing keys stay zero (Validate
// rejects them), wrong types are errors.
func decisionFromResult(v any) (Decision, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Decision{}, fmt.Errorf("%w: result is %T, not an object", ErrInvalidDecision, v)
	}
	var d Decision
	var kind string
	for key, dst := range map[string]*string{"decision": &d.Decision, "reason": &d.Reason, "approval": &kind} {
		raw, ok := obj[key]
		if !ok {
			continue
		}
		s, ok := raw.(string)
		if !ok {
			return Decision{}, fmt.Errorf("%w: %s is %T, not a string", ErrInvalidDecision, key, raw)
		}
		*dst = s
	}
	d.Approval = approval.Kind(kind)
	if raw, ok := obj["ttl_seconds"]; ok {
		n, ok := raw.(json.Number)
		if !ok {
			return Decision{}, fmt.Errorf("%w: ttl_seconds is %T, not a number", ErrInvalidDecision, raw)
		}
		i, err := n.Int64()
		if err != nil || i < math.MinInt32 || i > math.MaxInt32 {
			return Decision{}, fmt.Errorf("%w: ttl_seconds is not a small integer", ErrInvalidDecision)
		}
		d.TTLSeconds = int(i)
	}
	return d, nil
}

// astValue builds the same value that JSON-encoding in and parsing it would
// give, without the JSON round trip (EvalParsedInput is the cheapest way
// into OPA).
func (in Input) astValue() (ast.Value, error) {
	varying, err := in.varyingItems()
	if err != nil {
		return nil, err
	}
	return ast.NewObject(append(in.knownItems(), varying...)...), nil
}

// knownItems are the input fields that stay the same for a client calling
// one tool: the parts a remembered decision is keyed by (knownKey).
func (in Input) knownItems() [][2]*ast.Term {
	groups := ast.NullTerm()
	if in.Client.Groups != nil {
		terms := make([]*ast.Term, len(in.Client.Groups))
		for i, g := range in.Client.Groups {
			terms[i] = ast.StringTerm(g)
		}
		groups = ast.ArrayTerm(terms...)
	}
	return [][2]*ast.Term{
		item("action", ast.StringTerm(in.Action)),
		item("client", ast.ObjectTerm(
			item("name", ast.StringTerm(in.Client.Name)),
			item("groups", groups),
		)),
		// The end user's role, unlike the user, is few values that rules
		// about services read on every call: known, so part of the key.
		item("user_role", ast.StringTerm(in.UserRole)),
		item("service", ast.StringTerm(in.Service)),
		item("tool", ast.StringTerm(in.Tool)),
		item("write", ast.BooleanTerm(in.Write)),
		item("annotations", ast.ObjectTerm(
			item("readOnlyHint", ast.BooleanTerm(in.Annotations.ReadOnly)),
			item("destructiveHint", ast.BooleanTerm(in.Annotations.Destructive)),
			item("idempotentHint", ast.BooleanTerm(in.Annotations.Idempotent)),
			item("openWorldHint", ast.BooleanTerm(in.Annotations.OpenWorld)),
		)),
		item("transport", ast.StringTerm(in.Transport)),
	}
}

// varyingItems are the fields that may differ from call to call (varying).
func (in Input) varyingItems() ([][2]*ast.Term, error) {
	args, err := jsonValue(in.Args)
	if err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	ts, err := in.Time.MarshalText() // RFC 3339, exactly as encoding/json writes it
	if err != nil {
		return nil, fmt.Errorf("time: %w", err)
	}
	items := [][2]*ast.Term{
		item("user", ast.StringTerm(in.User)),
		item("args", ast.NewTerm(args)),
		item("ticket", in.Ticket.term()),
		item("time", ast.StringTerm(string(ts))),
	}
	// Absent, not null, when the preview has not run: as encoding/json
	// writes it (omitempty) for the sidecar.
	if in.Preview != nil {
		facts, err := jsonValue(in.Preview.Facts)
		if err != nil {
			return nil, fmt.Errorf("preview: %w", err)
		}
		items = append(items, item("preview", ast.ObjectTerm(item("facts", ast.NewTerm(facts)))))
	}
	return items, nil
}

func (t Ticket) term() *ast.Term {
	return ast.ObjectTerm(
		item("state", ast.StringTerm(t.State)),
		item("force", ast.BooleanTerm(t.Force)),
	)
}

func item(key string, v *ast.Term) [2]*ast.Term {
	return ast.Item(ast.StringTerm(key), v)
}

// errNotJSON mirrors json.Marshal refusing a value.
var errNotJSON = errors.New("value has no JSON form")

// jsonValue converts decoded-JSON Go values directly and everything else via
// a JSON round trip, so nil maps and slices become null as encoding/json
// would write them (ast.InterfaceToValue would make them empty).
func jsonValue(x any) (ast.Value, error) {
	switch x := x.(type) {
	case nil:
		return ast.NullValue, nil
	case bool, string, int, int64, json.Number:
		return ast.InterfaceToValue(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errNotJSON
		}
		return ast.InterfaceToValue(x)
	case map[string]any:
		if x == nil {
			return ast.NullValue, nil
		}
		obj := ast.NewObjectWithCapacity(len(x))
		for k, v := range x {
			val, err := jsonValue(v)
			if err != nil {
				return nil, err
			}
			obj.Insert(ast.StringTerm(k), ast.NewTerm(val))
		}
		return obj, nil
	case []any:
		if x == nil {
			return ast.NullValue, nil
		}
		terms := make([]*ast.Term, len(x))
		for i, v := range x {
			val, err := jsonValue(v)
			if err != nil {
				return nil, err
			}
			terms[i] = ast.NewTerm(val)
		}
		return ast.NewArray(terms...), nil
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNotJSON, err)
		}
		return ast.ValueFromReader(bytes.NewReader(b))
	}
}
