package toolkit

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Handler is a tool's typed body, built by ReadFor or WriteFor, in the
// spirit of the official Go SDK's ToolHandlerFor[In, Out]: the toolkit
// derives the arguments' schema from In, validates every call against it
// and hands the handler a decoded In.
type Handler struct {
	input json.RawMessage // the schema InputSchema derives from In
	err   error           // a schema that could not be derived; New reports it
	write bool
	body  body
}

// NoArgs is the input of a tool that takes no arguments.
type NoArgs struct{}

// ReadFor is the handler of a read-only tool: fn gets the validated
// arguments as an In and returns a result that marshals to a JSON object
// (or an Image). Out may be any type, `any` included.
func ReadFor[In, Out any](fn func(ctx context.Context, in In) (Out, error)) *Handler {
	h := newHandler[In]()
	h.body.read = func(ctx context.Context, args Args) (any, error) {
		in, err := decode[In](args)
		if err != nil {
			return nil, err
		}
		return fn(ctx, in)
	}
	return h
}

// WriteFor is the handler of a write tool. preview has no side effects: it
// re-reads the upstream, narrows the scope and returns exactly what apply
// would do, deterministically for an unchanged upstream. On confirm the
// toolkit verifies the gateway's approval, recomputes the preview, refuses
// when its digest differs from the approved one, and hands that same
// Preview value to apply.
func WriteFor[In, Preview, Out any](
	preview func(ctx context.Context, in In) (Preview, error),
	apply func(ctx context.Context, in In, p Preview) (Out, error),
) *Handler {
	h := newHandler[In]()
	h.write = true
	h.body.preview = func(ctx context.Context, args Args) (any, error) {
		in, err := decode[In](args)
		if err != nil {
			return nil, err
		}
		return preview(ctx, in)
	}
	h.body.apply = func(ctx context.Context, args Args, approve func(any) error) (any, error) {
		in, err := decode[In](args)
		if err != nil {
			return nil, err
		}
		p, err := preview(ctx, in)
		if err != nil {
			return nil, err
		}
		if err := approve(p); err != nil {
			return nil, err
		}
		return apply(ctx, in, p)
	}
	return h
}

func newHandler[In any]() *Handler {
	schema, err := inputSchema(reflect.TypeFor[In]())
	return &Handler{input: schema, err: err}
}

// decode unmarshals arguments the schema already accepted. It can still
// fail where JSON Schema and Go disagree (1.0 is an integer to the one,
// not to an int field), which is the caller's to fix.
func decode[In any](args Args) (In, error) {
	var in In
	if err := json.Unmarshal(args.Raw(), &in); err != nil {
		return in, toolerr.Wrap(toolerr.InvalidArgument, err, "arguments do not match the tool's parameters")
	}
	return in, nil
}
