package policy

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// Remembered decisions.
//
// Most calls ask the same question again: may this client read that tool?
// What can differ between two such calls is the arguments, the ticket, the
// end user, the time and a write's preview facts (varying). Whether the policy looks at them for a
// given client and tool is not guessed from the Rego we ship: the engine
// partially evaluates the decision with exactly those fields unknown and
// everything else known. When OPA reduces the decision to a constant, no
// value of the unknown fields can change it, and the engine remembers the
// constant for that known part. Anything else — a residual that tests
// input.args.force for a write, a rule on input.user, a construct partial
// evaluation does not handle — is evaluated in full on every call.
//
// The memory belongs to one Embedded engine: one compiled policy with one
// copy of its data. A policy or data change means a new engine, so nothing
// remembered survives it.

// varying lists the input fields that may differ between calls with the
// same known part, by their JSON names. Every field of Input is either
// here or in knownItems (a test holds both lists to the struct).
var varying = []string{"user", "args", "ticket", "time", "preview"}

// resultVar is the variable the partial query binds the decision to.
const resultVar = "toolgate_decision"

// maxKnownDecisions bounds the memory: clients × tools × {list, call} of a
// home lab stay far below; past it the memory starts afresh.
const maxKnownDecisions = 4096

// knownKey is an input's known part. Groups are joined with a byte no group
// name contains; nil groups (JSON null) differ from none.
type knownKey struct {
	action, client, groups, userRole, service, tool, transport string
	write                                                      bool
	ann                                                        Annotations
	// fixed: the call has no arguments, no ticket and no preview, so those
	// are part of the known input too (tools/list asks this way, and so does a
	// call without arguments).
	fixed bool
}

func (in Input) knownKey() (knownKey, bool) {
	groups := "\x01" // nil
	if in.Client.Groups != nil {
		for _, g := range in.Client.Groups {
			if strings.ContainsAny(g, "\x00\x01") {
				return knownKey{}, false
			}
		}
		groups = strings.Join(in.Client.Groups, "\x00")
	}
	return knownKey{
		action: in.Action, client: in.Client.Name, groups: groups, userRole: in.UserRole, service: in.Service,
		tool: in.Tool, transport: in.Transport, write: in.Write, ann: in.Annotations,
		fixed: in.Args != nil && len(in.Args) == 0 && in.Ticket == Ticket{State: "none"} && in.Preview == nil,
	}, true
}

type known struct {
	decision Decision
	constant bool
	// residual, when not constant: what partial evaluation left of the
	// policy for this known part (residual.go); nil means full evaluation.
	// checked counts the calls of this known part on which the full
	// evaluation confirmed it.
	residual *residual
	checked  *atomic.Int32
}

// knownDecisions is the embedded engine's memory.
type knownDecisions = memory[knownKey, known]

func newKnownDecisions(max int) *knownDecisions { return newMemory[knownKey, known](max) }

// memory is a map that starts afresh when it reaches max entries.
type memory[K comparable, V any] struct {
	mu  sync.RWMutex
	m   map[K]V
	max int
}

func newMemory[K comparable, V any](max int) *memory[K, V] {
	return &memory[K, V]{m: map[K]V{}, max: max}
}

func (k *memory[K, V]) get(key K) (V, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	v, ok := k.m[key]
	return v, ok
}

func (k *memory[K, V]) put(key K, v V) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) >= k.max {
		clear(k.m)
	}
	k.m[key] = v
}

// unknownFields are the varying fields a partial evaluation of in's known
// part leaves unknown: all of them, but with fixed the arguments ({}),
// the ticket (none) and the preview (absent) are known too.
func unknownFields(fixed bool) []string {
	if !fixed {
		return varying
	}
	var out []string
	for _, f := range varying {
		if f != "args" && f != "ticket" && f != "preview" {
			out = append(out, f)
		}
	}
	return out
}

// constant partially evaluates the decision for in's known part and
// reports whether it is one constant decision, and which; when it is not,
// it returns the residual to evaluate instead of the whole policy (nil when
// there is none that can be used).
func (e *Embedded) constant(ctx context.Context, in Input, fixed bool) (Decision, bool, *residual) {
	e.partialMu.Lock()
	defer e.partialMu.Unlock()
	e.partials.Add(1)
	items := in.knownItems()
	var unknowns []*ast.Term
	for _, f := range unknownFields(fixed) {
		unknowns = append(unknowns, ast.RefTerm(ast.InputRootDocument, ast.StringTerm(f)))
	}
	if fixed {
		// No arguments, no ticket and no preview: all three are known.
		items = append(items, item("args", ast.ObjectTerm()), item("ticket", Ticket{State: "none"}.term()))
	}
	pq, err := e.partial.Partial(ctx, rego.EvalParsedInput(ast.NewObject(items...)), rego.EvalParsedUnknowns(unknowns))
	if err != nil {
		return Decision{}, false, nil
	}
	if len(pq.Support) != 0 {
		return Decision{}, false, e.newResidual(ctx, pq)
	}
	if d, ok := constantOf(ctx, pq.Queries); ok {
		return d, true, nil
	}
	return Decision{}, false, e.newResidual(ctx, pq)
}

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
