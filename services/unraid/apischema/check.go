package apischema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/vektah/gqlparser/v2/ast"
)

// CheckData fails unless data (a response's "data" member, decoded with
// UseNumber) has exactly the shape op's selection set asks for under the
// schema: every selected field present and no other, null only where the
// type allows it, lists where lists are declared, enum values the enum
// knows, and scalars of their JSON kind. Fakes prove their answers with it.
func CheckData(op *ast.OperationDefinition, data any) error {
	return CheckDataAt(Version, op, data)
}

// CheckDataAt is CheckData under release's schema (op parsed with ParseAt
// for the same release).
func CheckDataAt(release string, op *ast.OperationDefinition, data any) error {
	s, err := SchemaOf(release)
	if err != nil {
		return err
	}
	return checkSelection(s, "data", op.SelectionSet, data)
}

func checkSelection(s *ast.Schema, path string, set ast.SelectionSet, v any) error {
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want an object, got %T", path, v)
	}
	want := map[string]bool{}
	for _, sel := range set {
		f, ok := sel.(*ast.Field)
		if !ok {
			return fmt.Errorf("%s: fragments are not supported by the checker", path)
		}
		key := f.Alias
		if key == "" {
			key = f.Name
		}
		want[key] = true
		val, present := obj[key]
		if !present {
			return fmt.Errorf("%s.%s: missing", path, key)
		}
		if f.Name == "__typename" {
			continue
		}
		if err := checkValue(s, path+"."+key, f.Definition.Type, f.SelectionSet, val); err != nil {
			return err
		}
	}
	for k := range obj {
		if !want[k] {
			return fmt.Errorf("%s.%s: not selected", path, k)
		}
	}
	return nil
}

func checkValue(s *ast.Schema, path string, t *ast.Type, set ast.SelectionSet, v any) error {
	if v == nil {
		if t.NonNull {
			return fmt.Errorf("%s: null for non-null %s", path, t)
		}
		return nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: want a list for %s, got %T", path, t, v)
		}
		for i, e := range list {
			if err := checkValue(s, fmt.Sprintf("%s[%d]", path, i), t.Elem, set, e); err != nil {
				return err
			}
		}
		return nil
	}
	def := s.Types[t.NamedType]
	if def == nil {
		return fmt.Errorf("%s: unknown type %s", path, t.NamedType)
	}
	switch def.Kind {
	case ast.Object, ast.Interface:
		return checkSelection(s, path, set, v)
	case ast.Enum:
		str, ok := v.(string)
		if !ok || !slices.ContainsFunc(def.EnumValues, func(e *ast.EnumValueDefinition) bool { return e.Name == str }) {
			return fmt.Errorf("%s: %v is not a value of enum %s", path, v, def.Name)
		}
		return nil
	case ast.Scalar:
		return checkScalar(path, def.Name, v)
	}
	return fmt.Errorf("%s: unexpected kind %s", path, def.Kind)
}

func checkScalar(path, name string, v any) error {
	isString := func() bool { _, ok := v.(string); return ok }
	number := func() (float64, bool) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, false
		}
		f, err := n.Float64()
		return f, err == nil
	}
	integral := func() bool {
		f, ok := number()
		return ok && f == math.Trunc(f)
	}
	ok := true
	switch name {
	case "String", "ID", "PrefixedID", "DateTime", "URL":
		ok = isString()
	case "Int":
		f, _ := number()
		ok = integral() && f >= math.MinInt32 && f <= math.MaxInt32
	case "Port":
		f, _ := number()
		ok = integral() && f >= 0 && f <= 65535
	case "Float":
		_, ok = number()
	case "Boolean":
		_, ok = v.(bool)
	case "BigInt":
		if str, isStr := v.(string); isStr {
			_, err := json.Number(str).Int64()
			ok = err == nil
		} else {
			ok = integral()
		}
	case "JSON":
	default:
		return fmt.Errorf("%s: scalar %s is not known to the checker", path, name)
	}
	if !ok {
		return fmt.Errorf("%s: %v (%T) is not a %s", path, v, v, name)
	}
	return nil
}
