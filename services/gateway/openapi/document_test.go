package openapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/router"
)

func tool(name, desc, schema string, write bool) router.OfferedTool {
	return router.OfferedTool{Def: mcp.NewToolWithRawSchema(name, desc, json.RawMessage(schema)), Write: write}
}

func load(t *testing.T, raw []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v\n%s", err, raw)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi rejects the document: %v\n%s", err, raw)
	}
	return doc
}

// A document without tools (a client that may see nothing) is still a
// valid document, with no operation in it.
func TestEmptyDocumentIsValid(t *testing.T) {
	raw, omitted, err := Document(DocumentInput{Name: "demo", ServerURL: "/openapi/demo"})
	if err != nil || len(omitted) > 0 {
		t.Fatal(err, omitted)
	}
	doc := load(t, raw)
	if doc.Paths.Len() != 0 {
		t.Fatalf("want no paths, got %d", doc.Paths.Len())
	}
}

// Local $defs of a tool's schema move into components under the tool's
// name, so the references still resolve inside the OpenAPI document (and
// for OpenWebUI, which resolves only #/components/… references).
func TestLocalDefinitionsMoveIntoComponents(t *testing.T) {
	schema := `{"type":"object","properties":{"item":{"$ref":"#/$defs/Item"},"list":{"type":"array","items":{"$ref":"#/definitions/Item"}}},` +
		`"$defs":{"Item":{"type":"object","properties":{"id":{"type":"integer"},"child":{"$ref":"#/$defs/Item"}}}},` +
		`"definitions":{"Item":{"type":"string"}},"additionalProperties":false}`
	raw, omitted, err := Document(DocumentInput{Name: "x", ServerURL: "/openapi/x", Tools: []router.OfferedTool{tool("x_get", "Get.", schema, false)}})
	if err != nil || len(omitted) > 0 {
		t.Fatal(err, omitted)
	}
	doc := load(t, raw)
	body := doc.Paths.Value("/x_get").Post.RequestBody.Value.Content.Get("application/json").Schema.Value
	item := body.Properties["item"]
	if item.Ref != "#/components/schemas/x_get.Item" || item.Value == nil || item.Value.Properties["child"].Ref != "#/components/schemas/x_get.Item" {
		t.Fatalf("$defs reference not moved: %+v", item)
	}
	if got := body.Properties["list"].Value.Items; got.Ref != "#/components/schemas/x_get.definitions.Item" || !got.Value.Type.Is("string") {
		t.Fatalf("definitions reference not moved: %s", got.Ref)
	}
	if strings.Contains(string(raw), "$defs") || strings.Contains(string(raw), "#/definitions") {
		t.Fatal("a local definition stayed in the request schema")
	}
}

// A tool that cannot be shown faithfully is left out and reported, and the
// rest of the document stays valid.
func TestToolsThatCannotBeExpressedAreLeftOut(t *testing.T) {
	tools := []router.OfferedTool{
		tool("ok_tool", "Fine.", `{"type":"object"}`, false),
		tool("bad/name", "Slash.", `{"type":"object"}`, false),
		tool("{templ}", "Template.", `{"type":"object"}`, false),
		tool("remote_ref", "Remote.", `{"type":"object","properties":{"a":{"$ref":"https://evil.example/schema.json"}}}`, false),
		tool("root_ref", "Root.", `{"type":"object","properties":{"a":{"$ref":"#/components/schemas/Error"}}}`, false),
		tool("array_schema", "Array.", `[1]`, false),
		// a.b's definition c and a's definition b.c would share a name.
		tool("a", "A.", `{"type":"object","properties":{"p":{"$ref":"#/$defs/b.c"}},"$defs":{"b.c":{"type":"string"}}}`, false),
		tool("a.b", "AB.", `{"type":"object","properties":{"p":{"$ref":"#/$defs/c"}},"$defs":{"c":{"type":"string"}}}`, false),
	}
	raw, omitted, err := Document(DocumentInput{Name: "x", ServerURL: "/openapi/x", Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	doc := load(t, raw)
	if doc.Paths.Len() != 2 || doc.Paths.Value("/ok_tool") == nil || doc.Paths.Value("/a") == nil {
		t.Fatalf("want ok_tool and a, got %v", doc.Paths.InMatchingOrder())
	}
	got := map[string]bool{}
	for _, o := range omitted {
		got[o.Tool] = o.Reason != ""
	}
	for _, name := range []string{"bad/name", "{templ}", "remote_ref", "root_ref", "array_schema", "a.b"} {
		if !got[name] {
			t.Errorf("%s was not reported as left out", name)
		}
	}
	if strings.Contains(string(raw), "evil.example") {
		t.Fatal("the remote reference reached the document")
	}
}

// Summaries are the first sentence of a description, bounded, and cut on
// a UTF-8 boundary; the description stays whole.
func TestSummaryIsTheFirstSentence(t *testing.T) {
	cases := map[string]string{
		"Echo a text. Then more.":        "Echo a text.",
		"First line\nsecond line":        "First line",
		"v1.2 is out. Really":            "v1.2 is out.",
		strings.Repeat("ä", 100) + ". x": strings.Repeat("ä", 60) + "…",
	}
	for in, want := range cases {
		if got := summary(in); got != want {
			t.Errorf("summary(%.20q) = %q, want %q", in, got, want)
		}
	}
}

// Write tools answer preview | pending | applied, reads their result; both
// refer to the shared Error answer for failures.
func TestOperationsDescribeTheirAnswers(t *testing.T) {
	read := tool("demo_echo", "Echo a text back.", `{"type":"object","properties":{"text":{"type":"string"}}}`, false)
	read.Def.OutputSchema = mcp.ToolOutputSchema{Type: "object", Properties: map[string]any{"text": map[string]any{"type": "string"}}}
	write := tool("demo_counter_add", "Add.", `{"type":"object","properties":{"amount":{"type":"integer"},"confirm":{"type":"boolean"},"ticket":{"type":"string"}}}`, true)
	raw, _, err := Document(DocumentInput{Name: "demo", ServerURL: "https://lab.example/openapi/demo", Description: "Untrusted data.", Tools: []router.OfferedTool{write, read}})
	if err != nil {
		t.Fatal(err)
	}
	doc := load(t, raw)
	if doc.Info.Description != "Untrusted data." || doc.Servers[0].URL != "https://lab.example/openapi/demo" {
		t.Fatalf("info/servers: %+v %+v", doc.Info, doc.Servers)
	}
	ok := doc.Paths.Value("/demo_echo").Post.Responses.Status(200).Value.Content.Get("application/json").Schema.Value
	if ok.Properties["text"] == nil {
		t.Error("a read's declared output schema is not its 200 answer")
	}
	w := doc.Paths.Value("/demo_counter_add").Post.Responses
	if len(w.Status(200).Value.Content.Get("application/json").Schema.Value.OneOf) != 3 {
		t.Error("a write's 200 answer is not preview | pending | applied")
	}
	if w.Default().Ref != "#/components/responses/Error" {
		t.Error("failures do not use the shared Error answer")
	}
	preview := map[string]any{"status": "confirmation_required", "tool": "demo_counter_add", "ticket": "tkt_x", "expires_at": "2026-12-03T10:00:00Z",
		"approval": "model", "reason": "r", "preview": map[string]any{"new": 5}, "next": "ask"}
	if err := doc.Components.Schemas["ConfirmationRequired"].Value.VisitJSON(preview, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("a real preview answer does not match its schema: %v", err)
	}
	if err := doc.Components.Schemas["Applied"].Value.VisitJSON(preview, openapi3.EnableJSONSchema2020()); err == nil {
		t.Error("a preview passes as applied")
	}
}

func TestStatusOfEveryCode(t *testing.T) {
	cases := map[toolerr.Code]int{
		toolerr.NotFound: http.StatusNotFound, toolerr.Forbidden: http.StatusForbidden,
		toolerr.InvalidArgument: http.StatusUnprocessableEntity, toolerr.TooLarge: http.StatusUnprocessableEntity,
		toolerr.Busy: http.StatusTooManyRequests, toolerr.Timeout: http.StatusGatewayTimeout,
		toolerr.UpstreamUnavailable: http.StatusBadGateway, toolerr.AuthFailed: http.StatusBadGateway,
		toolerr.Internal: http.StatusInternalServerError, "made_up_by_a_service": http.StatusBadGateway,
	}
	for code, want := range cases {
		if got := StatusOf(code); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
	for _, c := range errorCodes {
		if _, ok := cases[c.(toolerr.Code)]; !ok {
			t.Errorf("code %s has no status test", c)
		}
	}
}
