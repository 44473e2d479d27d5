package toolkit

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// InputSchema returns the strict JSON Schema of a tool whose arguments
// decode into In, as ReadFor and WriteFor publish it. In must be a struct;
// google/jsonschema-go derives the schema from it:
//
//   - each exported field is a property named by its json tag; a field
//     without omitempty (or omitzero) is required;
//   - every object, nested ones included, allows no other properties;
//   - the jsonschema tag is the property's description;
//   - the schema tag adds JSON Schema keywords, by their own names,
//     separated by commas: minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum, minLength, maxLength, minItems, maxItems, format,
//     default, enum (values separated by |), uniqueItems (no value) and
//     pattern, which takes the rest of the tag (a pattern may hold commas)
//     and so comes last. An "items." prefix applies a keyword to the items
//     of an array: `schema:"maxItems=32,uniqueItems,items.pattern=^[a-z]+$"`.
//
// Neither null nor a JSON value of another type is accepted where a field
// is a pointer or a slice: the pointer only tells "absent" from zero.
func InputSchema[In any]() (json.RawMessage, error) {
	return inputSchema(reflect.TypeFor[In]())
}

func inputSchema(t reflect.Type) (json.RawMessage, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("arguments must be a struct type, not %s", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s); err != nil {
		return nil, err
	}
	noNull(s)
	return json.Marshal(s)
}

// applyTags adds the keywords of t's schema tags to s, the schema
// jsonschema-go derived from t, following nested structs and slices.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyTags(t.Elem(), s.Items)
		}
		return nil
	case reflect.Map:
		if s.AdditionalProperties != nil {
			return applyTags(t.Elem(), s.AdditionalProperties)
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name := jsonName(f)
		if name == "" {
			continue
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("schema"); ok {
			if err := keywords(ps, tag); err != nil {
				return fmt.Errorf("%s.%s: schema tag: %w", t, f.Name, err)
			}
		}
		if err := applyTags(f.Type, ps); err != nil {
			return err
		}
	}
	return nil
}

// jsonName is the property name encoding/json gives f, "" when omitted.
func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return f.Name
	}
	return name
}

// keywords applies one schema tag to s.
func keywords(s *jsonschema.Schema, tag string) error {
	for tag != "" {
		var item string
		if strings.HasPrefix(tag, "pattern=") || strings.HasPrefix(tag, "items.pattern=") {
			item, tag = tag, ""
		} else {
			item, tag, _ = strings.Cut(tag, ",")
		}
		key, value, hasValue := strings.Cut(strings.TrimSpace(item), "=")
		target := s
		if rest, ok := strings.CutPrefix(key, "items."); ok {
			if s.Items == nil {
				return fmt.Errorf("%s applies to an array's items, but the field is no array", key)
			}
			key, target = rest, s.Items
		}
		if !hasValue && key != "uniqueItems" {
			return fmt.Errorf("%s needs a value (%s=…)", key, key)
		}
		if err := keyword(target, key, value); err != nil {
			return err
		}
	}
	return nil
}

func keyword(s *jsonschema.Schema, key, value string) error {
	kind := s.Type
	if kind == "" && len(s.Types) > 0 {
		kind = s.Types[len(s.Types)-1]
	}
	need := func(kinds ...string) error {
		for _, k := range kinds {
			if k == kind {
				return nil
			}
		}
		return fmt.Errorf("%s does not apply to a %s", key, kind)
	}
	number := func(dst **float64) error {
		if err := need("integer", "number"); err != nil {
			return err
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("%s=%q is not a number", key, value)
		}
		*dst = &f
		return nil
	}
	count := func(dst **int, kinds ...string) error {
		if err := need(kinds...); err != nil {
			return err
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 0 {
			return fmt.Errorf("%s=%q is not a count", key, value)
		}
		*dst = &n
		return nil
	}
	switch key {
	case "minimum":
		return number(&s.Minimum)
	case "maximum":
		return number(&s.Maximum)
	case "exclusiveMinimum":
		return number(&s.ExclusiveMinimum)
	case "exclusiveMaximum":
		return number(&s.ExclusiveMaximum)
	case "minLength":
		return count(&s.MinLength, "string")
	case "maxLength":
		return count(&s.MaxLength, "string")
	case "minItems":
		return count(&s.MinItems, "array")
	case "maxItems":
		return count(&s.MaxItems, "array")
	case "uniqueItems":
		s.UniqueItems = true
		return need("array")
	case "pattern":
		s.Pattern = value
		return need("string")
	case "format":
		s.Format = value
		return need("string")
	case "enum":
		for _, v := range strings.Split(value, "|") {
			e, err := literal(kind, v)
			if err != nil {
				return fmt.Errorf("enum: %w", err)
			}
			s.Enum = append(s.Enum, e)
		}
		return nil
	case "default":
		d, err := literal(kind, value)
		if err != nil {
			return fmt.Errorf("default: %w", err)
		}
		s.Default, err = json.Marshal(d)
		return err
	}
	return fmt.Errorf("unknown keyword %q", key)
}

// literal reads v as a value of the JSON type kind.
func literal(kind, v string) (any, error) {
	switch kind {
	case "string":
		return v, nil
	case "integer", "number", "boolean":
		var out any
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil, fmt.Errorf("%q is not a %s", v, kind)
		}
		return out, nil
	}
	return nil, fmt.Errorf("values of a %s cannot be written in a tag", kind)
}

// noNull removes the "null" jsonschema-go allows for pointers and slices:
// arguments are absent or have their type, never null.
func noNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		noNull(p)
	}
	noNull(s.Items)
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not == nil {
		noNull(s.AdditionalProperties)
	}
}
