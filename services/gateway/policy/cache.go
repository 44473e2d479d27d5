package policy

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
)

// evaluator is what an engine asks OPA: the embedded engine its own
// compiled policy, the sidecar engine the sidecar's.
type evaluator interface {
	// evaluate decides in by the whole policy.
	evaluate(ctx context.Context, in Input) (Decision, error)
	// partial partially evaluates the decision for in's static part with
	// the per-call fields unknown (unknownFields) and returns what is left.
	partial(ctx context.Context, in Input, noArgs bool) (*rego.PartialQueries, error)
}

// decisionCache decides with an evaluator and spares it the questions it
// has answered before. Most calls ask again whether a client may call a
// tool, and what differs between them is only the per-call fields
// (perCallFields). For each static part the first call is evaluated in
// full and partially evaluated with those fields unknown, which gives the
// plan for its later calls:
//   - one constant decision (every read, with the shipped policy): answered
//     from memory, as no per-call value can change it;
//   - a residual (for a write, "is input.args.force true?"): it decides
//     alone once it agreed with the full evaluation on residualChecks
//     calls (residual.go); a residual that disagrees once is never used
//     again;
//   - anything else: full evaluation.
//
// The plan must match the full evaluation of the very call that taught it;
// any fault means full evaluation, never a weaker answer.
type decisionCache struct {
	evaluator evaluator
	cacheOptions
	plans *boundedMap[staticKey, plan]
	// programs shares compiled residuals between static parts that leave
	// the same program (every client of a group calling one tool), keyed
	// by its source; compileMu makes each one compile once.
	compileMu sync.Mutex
	programs  *boundedMap[string, *residual]
	// residualChecks: tests lower it.
	residualChecks int32
	// Evaluations run, for tests.
	fullEvals, partialEvals, residualEvals atomic.Int64
}

// cacheOptions are what differs between the engines' caches.
type cacheOptions struct {
	// residualData is the data a residual is evaluated with (nil: none),
	// residualRoots where its references may point.
	residualData  storage.Store
	residualRoots []ast.Ref
	// For a policy that can change under the engine (the sidecar's): a
	// plan is used only while changes reads as it did when the plan was
	// learnt, and for at most rememberFor by now. Nil for a policy that
	// cannot.
	changes     *atomic.Uint64
	rememberFor time.Duration
	now         func() time.Time
}

// maxPlans bounds the plans: clients × tools × {list, call} of a home lab
// stay far below.
const maxPlans = 4096

// residualChecks is how many calls of a static part are decided both ways
// before its residual alone decides.
const residualChecks = 16

func newDecisionCache(e evaluator, o cacheOptions) *decisionCache {
	return &decisionCache{
		evaluator: e, cacheOptions: o, residualChecks: residualChecks,
		plans: newBoundedMap[staticKey, plan](maxPlans), programs: newBoundedMap[string, *residual](maxPlans),
	}
}

// plan is how calls with one static part are decided.
type plan struct {
	// decision, when constant.
	decision Decision
	constant bool
	// residual, when not constant; agreements counts the calls on which
	// the full evaluation confirmed it. Neither: full evaluation.
	residual   *residual
	agreements *atomic.Int32
	// epoch is decisionCache.changes when it was learnt; until is when it
	// expires. Both unused for a policy that cannot change.
	epoch uint64
	until time.Time
}

// Decide follows the plan for in's static part, learning it on its first
// call.
func (c *decisionCache) Decide(ctx context.Context, in Input) (Decision, error) {
	key, ok := in.staticKey()
	if !ok {
		return c.evaluate(ctx, in)
	}
	var epoch uint64
	var now time.Time
	if c.changes != nil {
		epoch, now = c.changes.Load(), c.now()
	}
	if p, found := c.plans.get(key); found && (c.changes == nil || (p.epoch == epoch && now.Before(p.until))) {
		switch {
		case p.constant:
			return p.decision, nil
		case p.residual != nil:
			return c.decideByResidual(ctx, key, p, in)
		}
		return c.evaluate(ctx, in)
	}
	d, err := c.evaluate(ctx, in)
	if err != nil {
		return d, err
	}
	p := c.learn(ctx, in, key.noArgs, d)
	p.epoch, p.until = epoch, now.Add(c.rememberFor)
	// Learnt over connections that changed meanwhile, it may describe
	// another policy.
	if c.changes == nil || c.changes.Load() == epoch {
		c.plans.put(key, p)
	}
	return d, nil
}

// learn partially evaluates the decision for in's static part and returns
// the plan for it; d is the full evaluation's decision for in.
func (c *decisionCache) learn(ctx context.Context, in Input, noArgs bool, d Decision) plan {
	c.partialEvals.Add(1)
	pq, err := c.evaluator.partial(ctx, in, noArgs)
	if err != nil {
		return plan{}
	}
	// Support rules are conditions on the unknowns: not a constant.
	if len(pq.Support) == 0 {
		if constant, ok := constantOf(ctx, pq.Queries); ok {
			if constant != d {
				return plan{} // a partial evaluation fault
			}
			return plan{decision: d, constant: true}
		}
	}
	r := c.compile(ctx, pq.Queries, pq.Support)
	if r == nil || r.disagreed.Load() {
		return plan{}
	}
	if rd, err := c.evalResidual(ctx, r, in); err != nil || rd != d {
		return plan{}
	}
	return plan{residual: r, agreements: new(atomic.Int32)}
}

// decideByResidual decides in by p's residual; during its first
// residualChecks calls the full evaluation decides too and must agree.
// When it does not, the full evaluation decides this static part from then
// on, and the residual decides nothing again: relearnt (after eviction or
// expiry), partial evaluation would hand out the same program.
func (c *decisionCache) decideByResidual(ctx context.Context, key staticKey, p plan, in Input) (Decision, error) {
	if p.agreements.Load() >= c.residualChecks {
		return c.evalResidual(ctx, p.residual, in)
	}
	d, err := c.evaluate(ctx, in)
	rd, rerr := c.evalResidual(ctx, p.residual, in)
	if (err == nil) != (rerr == nil) || rd != d {
		p.residual.disagreed.Store(true)
		c.plans.put(key, plan{epoch: p.epoch, until: p.until})
		return d, err
	}
	p.agreements.Add(1)
	return d, err
}

func (c *decisionCache) evaluate(ctx context.Context, in Input) (Decision, error) {
	c.fullEvals.Add(1)
	return c.evaluator.evaluate(ctx, in)
}

func (c *decisionCache) evalResidual(ctx context.Context, r *residual, in Input) (Decision, error) {
	c.residualEvals.Add(1)
	return r.eval(ctx, in)
}

// compile returns the residual of queries and support, or nil when it
// cannot be used; a program compiled before is shared.
func (c *decisionCache) compile(ctx context.Context, queries []ast.Body, support []*ast.Module) *residual {
	if len(queries) == 0 {
		return nil
	}
	src := residualSource(queries)
	key := src
	for _, m := range support {
		key += "\n" + m.String()
	}
	c.compileMu.Lock()
	defer c.compileMu.Unlock()
	if r, ok := c.programs.get(key); ok {
		return r
	}
	r := compileResidual(ctx, src, support, c.residualData, c.residualRoots)
	c.programs.put(key, r) // nil too: it will not compile next time either
	return r
}
