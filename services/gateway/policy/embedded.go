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

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
)

// Embedded evaluates the policy in-process. It is safe for concurrent use.
type Embedded struct {
	query rego.PreparedEvalQuery
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
	return &Embedded{query: pq}, nil
}

// skipTests is a loader filter that drops *_test.rego files.
func skipTests(p string, info fs.FileInfo, _ int) bool {
	return !info.IsDir() && strings.HasSuffix(path.Base(p), "_test.rego")
}

// Decide evaluates the policy for in.
func (e *Embedded) Decide(ctx context.Context, in Input) (Decision, error) {
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
	for key, dst := range map[string]*string{"decision": &d.Decision, "reason": &d.Reason, "approval": &d.Approval} {
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
	args, err := jsonValue(in.Args)
	if err != nil {
		return nil, fmt.Errorf("args: %w", err)
	}
	groups := ast.NullTerm()
	if in.Client.Groups != nil {
		terms := make([]*ast.Term, len(in.Client.Groups))
		for i, g := range in.Client.Groups {
			terms[i] = ast.StringTerm(g)
		}
		groups = ast.ArrayTerm(terms...)
	}
	ts, err := in.Time.MarshalText() // RFC 3339, exactly as encoding/json writes it
	if err != nil {
		return nil, fmt.Errorf("time: %w", err)
	}
	return ast.NewObject(
		item("action", ast.StringTerm(in.Action)),
		item("client", ast.ObjectTerm(
			item("name", ast.StringTerm(in.Client.Name)),
			item("groups", groups),
		)),
		item("user", ast.StringTerm(in.User)),
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
		item("args", ast.NewTerm(args)),
		item("ticket", ast.ObjectTerm(
			item("state", ast.StringTerm(in.Ticket.State)),
			item("force", ast.BooleanTerm(in.Ticket.Force)),
		)),
		item("time", ast.StringTerm(string(ts))),
		item("transport", ast.StringTerm(in.Transport)),
	), nil
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
