package toolkit_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit"
)

func TestNewRejects(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, toolkit.Args) (any, error) { return nil, nil }
	read := func(name, schema string) toolkit.Tool {
		return toolkit.Tool{Name: name, Description: "d", Schema: json.RawMessage(schema), Annotations: readAnn, Read: noop}
	}
	write := func(name, schema string) toolkit.Tool {
		return toolkit.Tool{Name: name, Description: "d", Schema: json.RawMessage(schema), Write: &toolkit.Write{
			Preview: noop,
			Apply:   func(context.Context, toolkit.Args, any) (any, error) { return nil, nil },
		}}
	}
	cases := []struct {
		name  string
		edit  func(*toolkit.Options)
		tools []toolkit.Tool
		want  string
	}{
		{name: "empty service name", edit: func(o *toolkit.Options) { o.Name = "" }, want: "name"},
		{name: "short service token", edit: func(o *toolkit.Options) { o.ServiceToken = []byte("fifteen-bytes!!") }, want: "token"},
		{name: "no redactor", edit: func(o *toolkit.Options) { o.Redactor = nil }, want: "redactor"},
		{name: "writes without approval key", edit: func(o *toolkit.Options) { o.ApprovalKey = nil }, want: "writes are allowed"},
		{name: "writes with a 31-byte approval key", edit: func(o *toolkit.Options) { o.ApprovalKey = approvalKey[:31] }, want: "too short"},
		{name: "schema without additionalProperties", tools: []toolkit.Tool{read("t_a", `{"type":"object","properties":{}}`)}, want: "additionalProperties"},
		{name: "schema allowing additionalProperties", tools: []toolkit.Tool{read("t_a", `{"type":"object","additionalProperties":true}`)}, want: "additionalProperties"},
		{name: "schema with additionalProperties schema", tools: []toolkit.Tool{read("t_a", `{"type":"object","additionalProperties":{"type":"string"}}`)}, want: "additionalProperties"},
		{name: "schema of another type", tools: []toolkit.Tool{read("t_a", `{"type":"array","additionalProperties":false}`)}, want: "object"},
		{name: "schema not JSON", tools: []toolkit.Tool{read("t_a", `{"type":`)}, want: "schema"},
		{name: "no schema", tools: []toolkit.Tool{read("t_a", ``)}, want: "schema"},
		{name: "schema that does not compile", tools: []toolkit.Tool{read("t_a", `{"type":"object","additionalProperties":false,"properties":{"x":{"type":"nonsense"}}}`)}, want: "compile"},
		{name: "read tool not annotated read-only", tools: []toolkit.Tool{func() toolkit.Tool {
			tl := read("t_a", emptySchema)
			tl.Annotations.ReadOnly = false
			return tl
		}()}, want: "read-only"},
		{name: "write tool annotated read-only", tools: []toolkit.Tool{func() toolkit.Tool {
			tl := write("t_w", emptySchema)
			tl.Annotations.ReadOnly = true
			return tl
		}()}, want: "read-only"},
		{name: "write tool without apply", tools: []toolkit.Tool{func() toolkit.Tool {
			tl := write("t_w", emptySchema)
			tl.Write.Apply = nil
			return tl
		}()}, want: "Preview and Apply"},
		{name: "both read and write", tools: []toolkit.Tool{func() toolkit.Tool {
			tl := write("t_w", emptySchema)
			tl.Read = noop
			return tl
		}()}, want: "exactly one"},
		{name: "neither read nor write", tools: []toolkit.Tool{{Name: "t_n", Description: "d", Schema: json.RawMessage(emptySchema), Annotations: readAnn}}, want: "exactly one"},
		{name: "no name", tools: []toolkit.Tool{read("", emptySchema)}, want: "no name"},
		{name: "no description", tools: []toolkit.Tool{func() toolkit.Tool {
			tl := read("t_a", emptySchema)
			tl.Description = ""
			return tl
		}()}, want: "description"},
		{name: "duplicate read tools", tools: []toolkit.Tool{read("t_a", emptySchema), read("t_a", emptySchema)}, want: "twice"},
		{name: "duplicate of a dropped write tool", edit: func(o *toolkit.Options) { o.AllowWrites, o.ApprovalKey = false, nil },
			tools: []toolkit.Tool{write("t_a", emptySchema), read("t_a", emptySchema)}, want: "twice"},
		{name: "broken schema of a dropped write tool", edit: func(o *toolkit.Options) { o.AllowWrites, o.ApprovalKey = false, nil },
			tools: []toolkit.Tool{write("t_w", `{"type":"object"}`)}, want: "additionalProperties"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := baseOptions(nil)
			if tc.edit != nil {
				tc.edit(&opts)
			}
			svc, err := toolkit.New(opts, tc.tools...)
			if err == nil {
				t.Fatalf("New accepted it (tools %v)", svc.ToolNames())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			for _, secret := range [][]byte{serviceToken, approvalKey} {
				if strings.Contains(err.Error(), string(secret)) {
					t.Errorf("error quotes a secret: %q", err)
				}
			}
		})
	}
}

func TestNewAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*toolkit.Options)
		want []string
	}{
		{
			name: "read-only service needs no approval key",
			edit: func(o *toolkit.Options) { o.AllowWrites, o.ApprovalKey = false, nil },
			want: []string{"test_echo"},
		},
		{
			name: "writes allowed",
			want: []string{"test_echo", "test_set_light"},
		},
		{
			name: "exactly 16-byte token and 32-byte key",
			edit: func(o *toolkit.Options) { o.ServiceToken, o.ApprovalKey = serviceToken[:16], approvalKey[:32] },
			want: []string{"test_echo", "test_set_light"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := baseOptions(nil)
			if tc.edit != nil {
				tc.edit(&opts)
			}
			svc, err := toolkit.New(opts, echoTool(nil, nil), lightTool(&lightState{}))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got := svc.ToolNames()
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tools = %v, want %v", got, tc.want)
			}
		})
	}
}
