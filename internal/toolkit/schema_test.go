package toolkit_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// nestedSchema exercises nested objects, arrays, patterns and formats.
const nestedSchema = `{
	"type": "object",
	"additionalProperties": false,
	"properties": {
		"text":   {"type": "string", "minLength": 1, "maxLength": 64},
		"count":  {"type": "integer", "minimum": 1, "maximum": 10},
		"mode":   {"type": "string", "enum": ["short", "long"]},
		"ids":    {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 5, "uniqueItems": true},
		"filter": {
			"type": "object",
			"additionalProperties": false,
			"properties": {
				"name": {"type": "string", "pattern": "^[a-z0-9 ]+$"},
				"since": {"type": "string", "format": "date"}
			}
		}
	},
	"required": ["text"]
}`

func mustValidator(t testing.TB, schema string) *toolkit.Validator {
	t.Helper()
	v, err := toolkit.CompileSchema("test_tool", json.RawMessage(schema))
	if err != nil {
		t.Fatalf("CompileSchema: %v", err)
	}
	return v
}

func TestValidate(t *testing.T) {
	t.Parallel()
	v := mustValidator(t, nestedSchema)
	cases := []struct {
		name string
		args string
		code toolerr.Code // "" means valid
		// mention is a text the message must contain.
		mention string
	}{
		{name: "minimal", args: `{"text":"a"}`},
		{name: "full", args: `{"text":"a","count":10,"mode":"long","ids":[1,2],"filter":{"name":"dune 2","since":"2024-01-31"}}`},
		{name: "whitespace around", args: " \n{\"text\":\"a\"}\t"},
		{name: "integer written as float", args: `{"text":"a","count":2.0}`},
		{name: "empty means {}", args: ``, code: toolerr.InvalidArgument, mention: "text"},
		{name: "missing required", args: `{}`, code: toolerr.InvalidArgument, mention: "text"},
		{name: "wrong type", args: `{"text":1}`, code: toolerr.InvalidArgument, mention: "/text"},
		{name: "not in enum", args: `{"text":"a","mode":"medium"}`, code: toolerr.InvalidArgument, mention: "/mode"},
		{name: "above maximum", args: `{"text":"a","count":11}`, code: toolerr.InvalidArgument, mention: "/count"},
		{name: "below minimum", args: `{"text":"a","count":0}`, code: toolerr.InvalidArgument, mention: "/count"},
		{name: "fraction for integer", args: `{"text":"a","count":1.5}`, code: toolerr.InvalidArgument, mention: "/count"},
		{name: "too long", args: `{"text":"` + strings.Repeat("x", 65) + `"}`, code: toolerr.InvalidArgument, mention: "/text"},
		{name: "unknown argument", args: `{"text":"a","force":true}`, code: toolerr.InvalidArgument, mention: "force"},
		{name: "unknown nested argument", args: `{"text":"a","filter":{"x":1}}`, code: toolerr.InvalidArgument, mention: "/filter"},
		{name: "pattern", args: `{"text":"a","filter":{"name":"../etc"}}`, code: toolerr.InvalidArgument, mention: "/filter/name"},
		{name: "format", args: `{"text":"a","filter":{"since":"yesterday"}}`, code: toolerr.InvalidArgument, mention: "/filter/since"},
		{name: "array item", args: `{"text":"a","ids":[1,-1]}`, code: toolerr.InvalidArgument, mention: "/ids/1"},
		{name: "duplicate items", args: `{"text":"a","ids":[1,1]}`, code: toolerr.InvalidArgument, mention: "/ids"},
		{name: "null", args: `null`, code: toolerr.InvalidArgument, mention: "object"},
		{name: "array", args: `[{"text":"a"}]`, code: toolerr.InvalidArgument, mention: "object"},
		{name: "string", args: `"text"`, code: toolerr.InvalidArgument, mention: "object"},
		{name: "invalid JSON", args: `{"text":`, code: toolerr.InvalidArgument, mention: "JSON"},
		{name: "trailing data", args: `{"text":"a"} {"text":"b"}`, code: toolerr.InvalidArgument, mention: "JSON"},
		{name: "too large", args: `{"text":"` + strings.Repeat("x", toolkit.MaxArgsBytes) + `"}`, code: toolerr.TooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := v.Validate(json.RawMessage(tc.args))
			if tc.code == "" {
				if err != nil {
					t.Fatalf("valid arguments refused: %v", err)
				}
				return
			}
			var te *toolerr.Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *toolerr.Error", err)
			}
			if te.Code != tc.code {
				t.Errorf("code %q, want %q (%s)", te.Code, tc.code, te.Message)
			}
			if !strings.Contains(te.Message, tc.mention) {
				t.Errorf("message %q does not mention %q", te.Message, tc.mention)
			}
			if len(te.Message) > 1200 {
				t.Errorf("message is %d bytes long", len(te.Message))
			}
		})
	}
}

// Many violations are summarised, not listed without bound.
func TestValidateManyErrors(t *testing.T) {
	t.Parallel()
	props := map[string]any{}
	args := map[string]any{}
	for i := range 20 {
		name := "p" + strings.Repeat("x", i)
		props[name] = map[string]any{"type": "integer"}
		args[name] = "not a number"
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "additionalProperties": false, "properties": props})
	v := mustValidator(t, string(schema))
	raw, _ := json.Marshal(args)
	err := v.Validate(raw)
	if toolerr.CodeOf(err) != toolerr.InvalidArgument {
		t.Fatalf("err = %v", err)
	}
	msg := toolerr.MessageOf(err)
	if !strings.Contains(msg, "and 12 more") {
		t.Errorf("message %q does not summarise the rest", msg)
	}
}

func FuzzValidate(f *testing.F) {
	v := mustValidator(f, nestedSchema)
	for _, seed := range []string{
		`{"text":"a"}`,
		`{"text":"a","count":10,"mode":"long","ids":[1,2],"filter":{"name":"dune 2","since":"2024-01-31"}}`,
		`{"text":"a","count":1e400}`,
		`{"text":"a","count":-0}`,
		`{"text":"\ud800"}`,
		`{"text":"a","text":5}`,
		`{"filter":{"filter":{"filter":{}}}}`,
		`[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]`,
		`{"text":"a"} x`,
		``,
		`null`,
		"\xff\xfe",
		`{"ids":[1,1,1,1,1,1,1]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		err := v.Validate(data)
		if err == nil {
			// Whatever passed is one JSON object with a string "text".
			var obj map[string]any
			if jerr := json.Unmarshal(data, &obj); jerr != nil {
				t.Fatalf("accepted %q which is not a JSON object: %v", data, jerr)
			}
			if _, ok := obj["text"].(string); !ok {
				t.Fatalf("accepted %q without a string text", data)
			}
			return
		}
		var te *toolerr.Error
		if !errors.As(err, &te) {
			t.Fatalf("error %v is not a *toolerr.Error", err)
		}
		if te.Code != toolerr.InvalidArgument && te.Code != toolerr.TooLarge {
			t.Fatalf("code %q", te.Code)
		}
		if te.Message == "" {
			t.Fatal("empty message")
		}
	})
}
