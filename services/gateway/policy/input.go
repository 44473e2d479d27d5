package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/open-policy-agent/opa/v1/ast"
)

// astValue builds the same value that JSON-encoding in and parsing it would
// give, without the JSON round trip (EvalParsedInput is the cheapest way
// into OPA).
func (in Input) astValue() (ast.Value, error) {
	perCall, err := in.perCallItems()
	if err != nil {
		return nil, err
	}
	return ast.NewObject(append(in.staticItems(), perCall...)...), nil
}

// staticItems are the input's static part (staticKey).
func (in Input) staticItems() [][2]*ast.Term {
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
		// about services read on every call: static, so part of the key.
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

// perCallItems are the input's perCallFields.
func (in Input) perCallItems() ([][2]*ast.Term, error) {
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
