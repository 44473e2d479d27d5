package openapi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/toolgate/toolgate/services/catalogtest"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// validate checks a document with kin-openapi as an OpenAPI 3.1 document.
func validate(t *testing.T, raw []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != "3.1.0" {
		t.Fatalf("document is OpenAPI %q, want 3.1.0", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi rejects the document: %v", err)
	}
	return doc
}

// Every service in the repo, with writes on where it has any, yields a
// document kin-openapi accepts as OpenAPI 3.1 with one POST per tool,
// operationId = tool name, the tool's own input schema (plus confirm and
// ticket for writes), bearer security and a server URL; OpenWebUI's
// conversion of it finds every tool with its arguments.
func TestEveryServiceDocumentIsValidOpenAPI31(t *testing.T) {
	for _, svc := range catalogtest.All() {
		t.Run(svc.Name, func(t *testing.T) {
			tools, _ := catalogtest.Tools(t, svc)
			if len(tools) == 0 {
				t.Fatal("the service has no tools")
			}
			tc := struct{ service, write string }{service: svc.Name}
			for _, tl := range tools {
				if tl.IsWrite() && tc.write == "" {
					tc.write = tl.Name // a write tool the document must have
				}
			}
			g := gatewaytest.Start(t, gatewaytest.Options{Service: tc.service, Tools: tools, AllowWrites: true})
			// The admin sees every service (users may not use unraid).
			ts := g.ToolServer("admin", "", tc.service)
			status, raw := ts.Load()
			if status != 200 {
				t.Fatalf("GET openapi.json: %d %s", status, raw)
			}
			doc := validate(t, raw)

			if len(doc.Servers) != 1 || doc.Servers[0].URL != "/openapi/"+tc.service {
				t.Errorf("servers = %+v, want the relative URL /openapi/%s", doc.Servers, tc.service)
			}
			if s := doc.Components.SecuritySchemes["bearer"]; s == nil || s.Value.Type != "http" || s.Value.Scheme != "bearer" {
				t.Error("no bearer security scheme")
			}
			if len(doc.Security) != 1 {
				t.Error("the document does not require the bearer scheme")
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			ops := map[string]*openapi3.Operation{}
			for path, item := range doc.Paths.Map() {
				if len(item.Operations()) != 1 || item.Post == nil {
					t.Errorf("%s: want exactly one POST", path)
					continue
				}
				if path != "/"+item.Post.OperationID {
					t.Errorf("%s: operationId %s", path, item.Post.OperationID)
				}
				ops[item.Post.OperationID] = item.Post
			}
			for _, name := range names {
				op := ops[name]
				if op == nil {
					t.Errorf("tool %s has no operation", name)
					continue
				}
				if op.Description == "" || op.Summary == "" || len(op.Summary) > 125 {
					t.Errorf("%s: summary %q / description missing", name, op.Summary)
				}
				body := op.RequestBody.Value.Content.Get("application/json")
				if body == nil || body.Schema == nil || body.Schema.Value.Type.Is("object") == false {
					t.Errorf("%s: the request body is not a JSON object schema", name)
					continue
				}
				if op.Responses.Status(200) == nil || op.Responses.Default() == nil {
					t.Errorf("%s: no 200 or default response", name)
				}
			}
			if len(ops) != len(names) {
				t.Errorf("document has %d operations for %d tools", len(ops), len(names))
			}
			if tc.write != "" {
				op := ops[tc.write]
				if op == nil {
					t.Fatalf("write tool %s missing", tc.write)
				}
				props := op.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties
				if props["confirm"] == nil || props["ticket"] == nil {
					t.Errorf("%s: the write's schema lacks the gateway's confirm/ticket arguments", tc.write)
				}
				if ok := op.Responses.Status(200).Value.Content.Get("application/json").Schema.Value; len(ok.OneOf) != 3 {
					t.Errorf("%s: the 200 answer is not preview | pending | applied", tc.write)
				}
			}

			// OpenWebUI's conversion sees the same tools with their arguments.
			var specNames []string
			for _, s := range ts.Tools() {
				specNames = append(specNames, s.Name)
				if s.Description == "" {
					t.Errorf("OpenWebUI would show %s without a description", s.Name)
				}
			}
			slices.Sort(specNames)
			slices.Sort(names)
			if !slices.Equal(specNames, names) {
				t.Errorf("OpenWebUI sees %v, want %v", specNames, names)
			}
			if strings.Contains(string(raw), gatewaytest.ServiceToken) || strings.Contains(string(raw), "_meta") {
				t.Error("the document carries a service token or the service's _meta")
			}
		})
	}
}
