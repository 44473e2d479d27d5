package policy

import (
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// A residual's answers are remembered by the values it reads. Rego reads
// the input only through references rooted at input, so when each such
// reference has a ground prefix naming one field other than time
// (input.args.force; input.args[x] reads the whole of input.args), the
// residual's answer is a function of the values at those prefixes, the
// data being fixed for the engine's life. Not when it reads the whole
// input or the time (which never repeats), replaces input values with
// `with`, or calls a builtin whose answer may change (time.now_ns,
// http.send, rand.intn).

// maxResidualAnswers bounds one residual's answers. Its keys are the
// values the residual reads, so a program that reads the arguments of a
// write has one entry per distinct value there.
const maxResidualAnswers = 1024

// inputReads returns the input paths the compiled modules read, each
// without its input head, in a fixed order; ok is false when the answers
// of the program must not be remembered.
func inputReads(modules map[string]*ast.Module) (reads []ast.Ref, ok bool) {
	ok = true
	seen := map[string]bool{}
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		if !ok {
			return true
		}
		switch x := x.(type) {
		case *ast.Expr:
			if len(x.With) > 0 {
				ok = false
			}
		case ast.Var:
			// input on its own (not the head of a reference, see below):
			// the whole input is read.
			if x.Equal(ast.InputRootDocument.Value) {
				ok = false
			}
		case ast.Ref:
			if b, isBuiltin := ast.BuiltinMap[x.String()]; isBuiltin && b.Nondeterministic {
				ok = false
				return true
			}
			if !x.HasPrefix(ast.InputRootRef) {
				return false
			}
			path := x.GroundPrefix()[1:]
			field, isString := "", false
			if len(path) > 0 {
				var s ast.String
				s, isString = path[0].Value.(ast.String)
				field = string(s)
			}
			if !isString || field == "time" {
				ok = false
				return true
			}
			if k := path.String(); !seen[k] {
				seen[k] = true
				reads = append(reads, path.Copy())
			}
			// The rest of the reference may read the input too
			// (input.args[input.user]); its head has been seen.
			for _, t := range x[1:] {
				vis.Walk(t)
			}
			return true
		}
		return false
	})
	names := make([]string, 0, len(modules))
	for name := range modules {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		vis.Walk(modules[name])
	}
	if !ok {
		return nil, false
	}
	return reads, true
}

// find is the value at path in the input as astValue builds it; present
// is false where there is none. The arguments and the preview's facts are
// walked as decoded JSON and only the value found is converted.
func (in Input) find(path ast.Ref) (v ast.Value, present bool, err error) {
	var doc any
	switch field := string(path[0].Value.(ast.String)); {
	case field == "args":
		doc = in.Args
	case field == "preview" && in.Preview != nil && len(path) > 1:
		if k, ok := path[1].Value.(ast.String); !ok || k != "facts" {
			return nil, false, nil
		}
		doc, path = in.Preview.Facts, path[1:]
	default:
		if v, present, err = in.field(field); err != nil || !present || len(path) == 1 {
			return v, present, err
		}
		v, err = v.Find(path[1:])
		return v, err == nil, nil
	}
	for i, t := range path[1:] {
		m, isMap := doc.(map[string]any)
		if !isMap || m == nil {
			// Not an object (an array, a scalar, null): the converted
			// value answers the rest of the path.
			if v, err = jsonValue(doc); err != nil {
				return nil, false, err
			}
			v, err = v.Find(path[1+i:])
			return v, err == nil, nil
		}
		k, isString := t.Value.(ast.String)
		if !isString {
			return nil, false, nil // object keys are strings
		}
		if doc, present = m[string(k)]; !present {
			return nil, false, nil
		}
	}
	v, err = jsonValue(doc)
	return v, err == nil, err
}

// field is the value of one top-level input field as astValue builds it;
// present is false for a field the input does not have (preview before the
// preview ran, or a name that is no field).
func (in Input) field(name string) (v ast.Value, present bool, err error) {
	switch name {
	case "user":
		return ast.String(in.User), true, nil
	case "args":
		v, err = jsonValue(in.Args)
		if err != nil {
			return nil, false, fmt.Errorf("args: %w", err)
		}
		return v, true, nil
	case "ticket":
		return in.Ticket.term().Value, true, nil
	case "preview":
		if in.Preview == nil {
			return nil, false, nil
		}
		facts, err := jsonValue(in.Preview.Facts)
		if err != nil {
			return nil, false, fmt.Errorf("preview: %w", err)
		}
		return ast.NewObject(item("facts", ast.NewTerm(facts))), true, nil
	case "time":
		return nil, false, fmt.Errorf("time is not remembered")
	}
	for _, it := range in.staticItems() {
		if it[0].Value.Compare(ast.String(name)) == 0 {
			return it[1].Value, true, nil
		}
	}
	return nil, false, nil
}
