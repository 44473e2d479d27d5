package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/toolgate/toolgate/internal/approval"
)

// evalWith evaluates q for in and returns its value.
func evalWith(ctx context.Context, q rego.PreparedEvalQuery, in Input) (any, error) {
	v, err := in.astValue()
	if err != nil {
		return nil, fmt.Errorf("%w: build input: %w", ErrEvaluation, err)
	}
	rs, err := q.Eval(ctx, rego.EvalParsedInput(v))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return nil, ErrUndefined
	}
	return rs[0].Expressions[0].Value, nil
}

// decisionOf is the valid decision v holds, or failClosed.
func decisionOf(v any) (Decision, error) {
	d, err := decisionFromResult(v)
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
	for key, dst := range map[string]*string{"decision": &d.Decision, "reason": &d.Reason, "reason_id": &d.ReasonID, "approval": &kind} {
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
