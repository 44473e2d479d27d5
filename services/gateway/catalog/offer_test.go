package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestWithConfirmArgs(t *testing.T) {
	tool := mcp.NewToolWithRawSchema("demo_x", "Do x.", json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`))
	got, err := withConfirmArgs(tool)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(got.RawInputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["confirm"]["type"] != "boolean" || schema.Properties["ticket"]["type"] != "string" ||
		schema.Properties["n"]["type"] != "integer" || schema.AdditionalProperties || len(schema.Required) != 1 {
		t.Fatalf("schema: %s", got.RawInputSchema)
	}
	// The flow, told briefly: a preview and a ticket first, confirm only
	// after the user agreed.
	if !strings.Contains(got.Description, "preview and a ticket") || !strings.Contains(schema.Properties["confirm"]["description"].(string), "user explicitly agreed") {
		t.Fatalf("the definition does not explain the flow: %s %s", got.Description, got.RawInputSchema)
	}
	clash := mcp.NewToolWithRawSchema("demo_y", "Y.", json.RawMessage(`{"type":"object","properties":{"ticket":{"type":"string"}},"additionalProperties":false}`))
	if _, err := withConfirmArgs(clash); err == nil {
		t.Fatal("a tool with its own ticket argument was accepted")
	}
}

func TestIsWriteIsConservative(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		tool mcp.Tool
		want bool
	}{
		{"read-only hint", mcp.Tool{Annotations: mcp.ToolAnnotation{ReadOnlyHint: &yes}}, false},
		{"no hints", mcp.Tool{}, true},
		{"read-only false", mcp.Tool{Annotations: mcp.ToolAnnotation{ReadOnlyHint: &no}}, true},
		{"declared write despite read-only hint", mcp.Tool{Annotations: mcp.ToolAnnotation{ReadOnlyHint: &yes},
			Meta: &mcp.Meta{AdditionalFields: map[string]any{"io.toolgate/write": true}}}, true},
	}
	for _, tc := range cases {
		if got := isWrite(tc.tool); got != tc.want {
			t.Errorf("%s: isWrite = %v", tc.name, got)
		}
	}
}
