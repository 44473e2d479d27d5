// Package toolkittest runs a tool service in tests, the way httptest runs
// an HTTP server: over real loopback HTTP, reached by a real MCP client with
// the service token. It also checks a service's documented tool table
// against what tools/list really returns.
package toolkittest

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// Test credentials; real deployments read theirs from secret files.
const (
	ServiceToken = "toolkittest-service-token-0123456789"
	ApprovalKey  = "toolkittest-approval-key-0123456789abcdef"
)

// Service is a running tool service.
type Service struct {
	URL    string // the /mcp endpoint
	Client *client.Client
}

// Start serves tools with writes allowed and returns a connected client;
// edits change the service's options (its Limits, say).
func Start(t testing.TB, name string, tools []toolkit.Tool, edits ...func(*toolkit.Options)) *Service {
	t.Helper()
	opts := toolkit.Options{
		Name: name, ServiceToken: []byte(ServiceToken), ApprovalKey: []byte(ApprovalKey),
		AllowWrites: true, Redactor: redact.New([]byte(ServiceToken), []byte(ApprovalKey)),
	}
	for _, edit := range edits {
		edit(&opts)
	}
	svc, err := toolkit.New(opts, tools...)
	if err != nil {
		t.Fatal(err)
	}
	return Serve(t, svc)
}

// Serve serves an existing service (one whose tools change at runtime, a
// relay's) and returns a connected client. The service must accept
// ServiceToken.
func Serve(t testing.TB, svc *toolkit.Service) *Service {
	t.Helper()
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + ServiceToken}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &Service{URL: srv.URL + "/mcp", Client: c}
}

// Call runs a tool; approvalToken empty means a read or a preview.
func (s *Service) Call(t testing.TB, tool string, args map[string]any, approvalToken string) (map[string]any, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if approvalToken != "" {
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{approval.MetaApproval: approvalToken}}
	}
	res, err := s.Client.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	raw := res.RawStructuredContent
	if len(raw) == 0 {
		raw, _ = json.Marshal(res.StructuredContent)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("call %s: structured content is not an object: %s", tool, raw)
	}
	if res.Meta != nil {
		if d, ok := res.Meta.AdditionalFields[approval.MetaPreviewDigest]; ok {
			out["_preview_digest"] = d
		}
	}
	return out, res.IsError
}

// Approve previews a write and signs the approval the gateway would send.
func (s *Service) Approve(t testing.TB, service, tool string, args map[string]any, ticket string) string {
	t.Helper()
	prev, isErr := s.Call(t, tool, args, "")
	if isErr {
		t.Fatalf("preview %s failed: %v", tool, prev)
	}
	digest, _ := prev["_preview_digest"].(string)
	argsDigest, err := approval.Digest(args)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := approval.NewSigner([]byte(ApprovalKey))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signer.Sign(approval.Approval{Service: service, Tool: tool, ArgsDigest: argsDigest, PreviewDigest: digest, TicketID: ticket, Expires: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// ToolTable renders tools as the Markdown table each docs/services page
// carries: | tool | kind | annotations | description |, sorted by name.
func ToolTable(tools []mcp.Tool) string {
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	var b strings.Builder
	b.WriteString("| tool | kind | annotations | description |\n|---|---|---|---|\n")
	for _, t := range tools {
		kind := "read"
		if t.Meta != nil {
			if w, _ := t.Meta.AdditionalFields[approval.MetaWrite].(bool); w {
				kind = "write"
			}
		}
		var hints []string
		for _, h := range []struct {
			name string
			v    *bool
		}{{"readOnly", t.Annotations.ReadOnlyHint}, {"destructive", t.Annotations.DestructiveHint}, {"idempotent", t.Annotations.IdempotentHint}, {"openWorld", t.Annotations.OpenWorldHint}} {
			if h.v != nil && *h.v {
				hints = append(hints, h.name)
			}
		}
		ann := strings.Join(hints, ", ")
		if ann == "" {
			ann = "none"
		}
		b.WriteString("| `" + t.Name + "` | " + kind + " | " + ann + " | " + strings.ReplaceAll(t.Description, "|", `\|`) + " |\n")
	}
	return b.String()
}

// CheckDocTable fails unless the Markdown file at path holds the table that
// ToolTable renders for what the service's tools/list returns.
func (s *Service) CheckDocTable(t testing.TB, path string) {
	t.Helper()
	res, err := s.Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := ToolTable(res.Tools)
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if !strings.Contains(normalize(string(doc)), normalize(want)) {
		t.Fatalf("%s does not hold the tool table tools/list returns; expected:\n%s", path, want)
	}
}

// normalize makes table formatting (cell padding, separator style) not
// matter; the cells themselves must match.
func normalize(s string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "|") {
			cells := strings.Split(strings.Trim(l, "|"), "|")
			for i, c := range cells {
				c = strings.Join(strings.Fields(c), " ")
				if strings.Trim(c, "-: ") == "" && c != "" {
					c = "---"
				}
				cells[i] = c
			}
			l = "|" + strings.Join(cells, "|") + "|"
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}
