package openapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// echoCatalog offers one tool, demo_echo, that answers its arguments.
type echoCatalog struct{ calls int }

func (c *echoCatalog) VisibleTools(context.Context, string) ([]router.OfferedTool, bool) {
	return []router.OfferedTool{tool("demo_echo", "Echo.", `{"type":"object"}`, false)}, true
}

func (c *echoCatalog) CallTool(_ context.Context, endpoint, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	if endpoint != "demo" || tool != "demo_echo" {
		return nil, router.ErrNoSuchTool
	}
	c.calls++
	var v map[string]json.RawMessage
	if err := json.Unmarshal(args, &v); err != nil || v == nil {
		panic("the handler passed arguments that are not a JSON object")
	}
	return toolkit.Success(v, 0)
}

func (c *echoCatalog) EndpointInstructions(context.Context, string) string { return "" }

// Whatever the body, the handler answers JSON with a status it documents,
// and passes only JSON objects on to the call. (A table, not a fuzz target:
// this package's test binary links every service, too slow to instrument.)
func TestAnyBodyGetsAJSONAnswer(t *testing.T) {
	bodies := []struct{ body, contentType string }{
		{`{"text":"x"}`, "application/json"}, {``, ""}, {` `, "application/json"}, {`[]`, "application/json"},
		{`{`, "application/json"}, {`"x"`, "application/json"}, {`null`, "application/json"}, {`{"a":1e999}`, "application/json"},
		{"\xff", "application/json"}, {`{} {}`, "application/json"}, {`{}`, "text/plain"}, {`{}`, "application/json; charset=utf-8"},
		{`{}`, "application/problem+json"}, {`{}`, ";;"}, {" \n{\"a\":[1,{\"b\":null}]}\n", "application/json"},
	}
	for _, b := range bodies {
		catalog := &echoCatalog{}
		h := New(Config{}, catalog, nil)
		req := httptest.NewRequest(http.MethodPost, "/openapi/demo/demo_echo", strings.NewReader(b.body))
		req.Header.Set("Content-Type", b.contentType)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge:
		default:
			t.Errorf("status %d for %q", rec.Code, b.body)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil || m == nil {
			t.Errorf("answer to %q is not a JSON object: %q", b.body, rec.Body.String())
		}
		if (rec.Code == http.StatusOK) != (catalog.calls == 1) || (rec.Code != http.StatusOK && m["error"] == nil) {
			t.Errorf("%q: status %d after %d calls: %s", b.body, rec.Code, catalog.calls, rec.Body)
		}
	}
}

// A picture in an MCP result is not part of the JSON answer; the answer
// says it was left out. A result without structured content answers its
// JSON text, or the text wrapped.
func TestResultBody(t *testing.T) {
	withImage := &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(`{"camera":"door"}`), mcp.NewImageContent("AAAA", "image/jpeg")},
		StructuredContent: json.RawMessage(`{"camera":"door"}`),
	}
	cases := []struct {
		name string
		res  *mcp.CallToolResult
		want string
		code string
	}{
		{"structured", &mcp.CallToolResult{StructuredContent: map[string]any{"a": 1}}, `{"a":1}`, ""},
		{"picture left out", withImage, `{"camera":"door","toolgate_note":"1 picture(s) left out: pictures are delivered over MCP only (/mcp/<service>)"}`, ""},
		{"JSON text only", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(`{"b":2}`)}}, `{"b":2}`, ""},
		{"plain text", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(`hi <there>`)}}, `{"result":"hi <there>"}`, ""},
		{"error", toolkit.Failure(errBusy), `{"error":{"code":"busy","message":"slow down"}}`, "busy"},
		{"error without a code", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent("boom")}}, `{"result":"boom"}`, "internal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, code := resultBody(tc.res)
			if string(b) != tc.want || string(code) != tc.code {
				t.Fatalf("got %s (%q), want %s (%q)", b, code, tc.want, tc.code)
			}
		})
	}
}

var errBusy = toolerr.New(toolerr.Busy, "slow down")

// badNameCatalog offers a tool whose name cannot be a path segment.
type badNameCatalog struct{ echoCatalog }

func (c *badNameCatalog) VisibleTools(context.Context, string) ([]router.OfferedTool, bool) {
	return []router.OfferedTool{tool("demo_echo", "Echo.", `{"type":"object"}`, false), tool("demo/odd", "Odd.", `{"type":"object"}`, false)}, true
}

// A tool left out of the document is logged once, not on every read of
// the document.
func TestLeftOutToolIsLoggedOnce(t *testing.T) {
	var logs strings.Builder
	h := New(Config{}, &badNameCatalog{}, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 3 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi/demo/openapi.json", nil))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "/demo_echo") || strings.Contains(rec.Body.String(), "demo/odd") {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	if n := strings.Count(logs.String(), "left out"); n != 1 {
		t.Fatalf("logged %d times:\n%s", n, logs.String())
	}
}

// The tool server's address, /openapi/<service> (what the README and
// docs/clients.md tell a person to give OpenWebUI, which appends
// /openapi.json itself), answers the same document as
// /openapi/<service>/openapi.json, with or without a trailing slash; its
// server URL stays the tool server's address, so calls go to
// /openapi/<service>/<tool>.
func TestTheToolServerAddressAnswersItsDocument(t *testing.T) {
	h := New(Config{}, &echoCatalog{}, nil)
	get := func(method, path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code, rec.Body.String()
	}
	code, want := get(http.MethodGet, "/openapi/demo/openapi.json")
	if code != http.StatusOK || !strings.Contains(want, `"operationId":"demo_echo"`) || !strings.Contains(want, `"url":"/openapi/demo"`) {
		t.Fatalf("the document: HTTP %d %s", code, want)
	}
	for _, path := range []string{"/openapi/demo", "/openapi/demo/"} {
		if code, got := get(http.MethodGet, path); code != http.StatusOK || got != want {
			t.Errorf("GET %s: HTTP %d, not the document:\n%s", path, code, got)
		}
	}
	if code, body := get(http.MethodPost, "/openapi/demo"); code != http.StatusMethodNotAllowed || !strings.Contains(body, "read with GET") {
		t.Errorf("POST /openapi/demo: HTTP %d %s", code, body)
	}
	if code, _ := get(http.MethodGet, "/openapi/"); code != http.StatusNotFound {
		t.Errorf("GET /openapi/: HTTP %d, want 404", code)
	}
}
