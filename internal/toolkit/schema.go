package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/truncate"
)

// MaxArgsBytes bounds the size of one call's arguments.
const MaxArgsBytes = 256 << 10

// Validator checks arguments against one tool's compiled JSON Schema.
type Validator struct {
	tool   string
	schema *jsonschema.Schema
}

// CompileSchema compiles a tool's schema and insists that it is strict: the
// root is an object that allows no unknown properties.
func CompileSchema(tool string, schema json.RawMessage) (*Validator, error) {
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, fmt.Errorf("tool %s: schema is not a JSON object: %w", tool, err)
	}
	if root["type"] != "object" {
		return nil, fmt.Errorf("tool %s: schema type must be \"object\"", tool)
	}
	if ap, ok := root["additionalProperties"].(bool); !ok || ap {
		return nil, fmt.Errorf("tool %s: schema must set additionalProperties to false", tool)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", tool, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Draft 2020-12 treats "format" as an annotation only; a tool that
	// declares "format": "date" means it, so assert it before any upstream
	// request. Unknown formats stay annotations.
	c.AssertFormat()
	url := "toolgate:///" + tool + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", tool, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema does not compile: %w", tool, err)
	}
	return &Validator{tool: tool, schema: s}, nil
}

// Validate checks raw arguments. Failures are toolerr.InvalidArgument with a
// message naming each offending argument and the rule it broke.
func (v *Validator) Validate(raw json.RawMessage) error {
	if len(raw) > MaxArgsBytes {
		return toolerr.New(toolerr.TooLarge, "arguments are larger than %d bytes", MaxArgsBytes)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	// Before the validator parses numbers exactly (math/big).
	if err := CheckNumbers(raw); err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments are not valid JSON")
	}
	if _, ok := inst.(map[string]any); !ok {
		return toolerr.New(toolerr.InvalidArgument, "arguments must be a JSON object")
	}
	err = v.schema.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments are invalid")
	}
	return toolerr.Wrap(toolerr.InvalidArgument, err, "invalid arguments for %s: %s", v.tool, describe(ve))
}

// describe flattens a validation error into "at /x: problem; at /y: problem".
func describe(ve *jsonschema.ValidationError) string {
	out := ve.BasicOutput()
	seen := map[string]bool{}
	var parts []string
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		// Summary lines ("validation failed with …") say nothing useful.
		if strings.HasPrefix(msg, "validation failed") {
			continue
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		p := "at " + loc + ": " + msg
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "arguments do not match the schema"
	}
	sort.Strings(parts)
	if len(parts) > 8 {
		parts = append(parts[:8], fmt.Sprintf("and %d more", len(parts)-8))
	}
	s := strings.Join(parts, "; ")
	if len(s) > 1000 {
		s = truncate.String(s, 1000) + "…"
	}
	return s
}
