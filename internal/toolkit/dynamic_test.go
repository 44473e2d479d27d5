package toolkit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// dynamicService serves static and returns the service and a client.
func dynamicService(t *testing.T, allowWrites bool, routes map[string]http.Handler, static ...toolkit.Tool) (*toolkit.Service, *client.Client, string) {
	t.Helper()
	svc, err := toolkit.New(toolkit.Options{
		Name: "test", ServiceToken: serviceToken, ApprovalKey: approvalKey, AllowWrites: allowWrites,
		Redactor: redact.New(serviceToken, approvalKey), Routes: routes,
	}, static...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + string(serviceToken)}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return svc, c, srv.URL
}

func listNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

type noteArgs struct {
	Text string `json:"text"`
}

func mirrorRead(name, answer string) toolkit.Tool {
	return toolkit.Tool{
		Name: name, Description: "Mirrored read " + name + ".", Annotations: readAnn,
		Handler: toolkit.ReadFor(func(context.Context, toolkit.NoArgs) (map[string]any, error) {
			return map[string]any{"answer": answer}, nil
		}),
	}
}

func mirrorWrite(name string) toolkit.Tool {
	return toolkit.Tool{
		Name: name, Description: "Mirrored write " + name + ".",
		Handler: toolkit.WriteFor(
			func(_ context.Context, in noteArgs) (map[string]any, error) {
				return map[string]any{"text": in.Text}, nil
			},
			func(_ context.Context, in noteArgs, _ map[string]any) (any, error) {
				return map[string]any{"ok": true}, nil
			}),
	}
}

// A relay's mirror of another server's tools changes at runtime: the new
// set replaces the old one, calls reach the new handlers, a name that a
// static tool or another group already uses is refused without changing
// anything, and write tools stay away without the write switch.
func TestReplaceToolsChangesWhatIsListedAndCalled(t *testing.T) {
	t.Parallel()
	svc, c, _ := dynamicService(t, false, nil, readTool("test_static", func(context.Context, toolkit.Args) (any, error) {
		return map[string]any{}, nil
	}))
	if err := svc.ReplaceTools("relay", []toolkit.Tool{mirrorRead("test_a", "first"), mirrorRead("test_b", "b"), mirrorWrite("test_w")}); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, c); !slices.Equal(got, []string{"test_a", "test_b", "test_static"}) {
		t.Fatalf("after the first set (writes off): %v", got)
	}
	if err := svc.ReplaceTools("relay", []toolkit.Tool{mirrorRead("test_a", "second")}); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, c); !slices.Equal(got, []string{"test_a", "test_static"}) {
		t.Fatalf("after the second set: %v", got)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "test_a"
	res, err := c.CallTool(t.Context(), req)
	if err != nil || res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "second") {
		t.Fatalf("call after replace: %+v %v", res, err)
	}
	req.Params.Name = "test_b"
	if res, err := c.CallTool(t.Context(), req); err == nil && !res.IsError {
		t.Fatal("a dropped tool still answers")
	}

	for _, clash := range []toolkit.Tool{mirrorRead("test_static", "x"), mirrorRead("test_other", "x")} {
		if clash.Name == "test_other" {
			if err := svc.ReplaceTools("other", []toolkit.Tool{mirrorRead("test_other", "o")}); err != nil {
				t.Fatal(err)
			}
			clash.Name = "test_other"
		}
		err := svc.ReplaceTools("relay", []toolkit.Tool{mirrorRead("test_a", "third"), clash})
		if err == nil || !strings.Contains(err.Error(), "twice") {
			t.Errorf("clash with %s: %v", clash.Name, err)
		}
	}
	if got := listNames(t, c); !slices.Equal(got, []string{"test_a", "test_other", "test_static"}) {
		t.Fatalf("a refused set changed the tools: %v", got)
	}
	bad := mirrorRead("test_bad", "x")
	bad.Annotations.ReadOnly = false
	if err := svc.ReplaceTools("relay", []toolkit.Tool{bad}); err == nil {
		t.Error("a read tool not annotated read-only was accepted")
	}
	if err := svc.ReplaceTools("relay", nil); err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, c); !slices.Equal(got, []string{"test_other", "test_static"}) {
		t.Fatalf("an empty set left tools behind: %v", got)
	}
}

// ReplaceTools while calls run: no data race, and every call answers.
func TestReplaceToolsUnderConcurrentCalls(t *testing.T) {
	t.Parallel()
	svc, c, _ := dynamicService(t, false, nil)
	if err := svc.ReplaceTools("relay", []toolkit.Tool{mirrorRead("test_a", "0")}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = svc.ReplaceTools("relay", []toolkit.Tool{mirrorRead("test_a", string(rune('a'+i%26)))})
			_ = svc.ToolNames()
		}
	})
	for range 50 {
		req := mcp.CallToolRequest{}
		req.Params.Name = "test_a"
		if _, err := c.CallTool(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// A route beside /mcp answers only the gateway's token, and only under
// /internal/.
func TestRoutesNeedTheServiceToken(t *testing.T) {
	t.Parallel()
	hits := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++; w.WriteHeader(http.StatusNoContent) })
	_, _, base := dynamicService(t, false, map[string]http.Handler{"POST /internal/ping": h})
	for _, c := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"wrong-token-0123456789", http.StatusUnauthorized}, {string(serviceToken), http.StatusNoContent}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/internal/ping", strings.NewReader("{}"))
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("token %q: HTTP %d, want %d", c.token, res.StatusCode, c.want)
		}
	}
	if hits != 1 {
		t.Errorf("handler ran %d times, want 1", hits)
	}
	for _, pattern := range []string{"/mcp", "GET /healthz", "POST /other"} {
		_, err := toolkit.New(toolkit.Options{Name: "test", ServiceToken: serviceToken, Redactor: redact.New(),
			Routes: map[string]http.Handler{pattern: h}})
		if err == nil {
			t.Errorf("route %q outside /internal/ was accepted", pattern)
		}
	}
}

// factsPreview is a preview that reports facts about what it touches.
type factsPreview struct {
	Target string         `json:"target"`
	Facts  approval.Facts `json:"-"`
}

func (p factsPreview) PreviewFacts() approval.Facts { return p.Facts }

// A preview's facts travel in _meta beside its digest, normalized; the
// digest covers them, so an apply whose recomputed facts differ from the
// approved ones is refused with nothing applied; malformed facts fail the
// preview instead of reaching the gateway.
func TestPreviewFactsAreReportedAndBoundIntoTheDigest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	domains := []any{"lock", "light", "lock"}
	applied := 0
	tool := toolkit.Tool{
		Name: "test_switch", Description: "Switch something.",
		Handler: toolkit.WriteFor(
			func(_ context.Context, in noteArgs) (factsPreview, error) {
				mu.Lock()
				defer mu.Unlock()
				if in.Text == "bad" {
					return factsPreview{Target: in.Text, Facts: approval.Facts{"Domains": "x"}}, nil
				}
				return factsPreview{Target: in.Text, Facts: approval.Facts{"domains": slices.Clone(domains), "opaque": false}}, nil
			},
			func(context.Context, noteArgs, factsPreview) (any, error) {
				mu.Lock()
				defer mu.Unlock()
				applied++
				return map[string]any{"ok": true}, nil
			}),
	}
	_, c, _ := dynamicService(t, true, nil, tool)
	call := func(args map[string]any, token string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "test_switch", args
		if token != "" {
			req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{approval.MetaApproval: token}}
		}
		res, err := c.CallTool(t.Context(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	args := map[string]any{"text": "door"}
	res := call(args, "")
	if res.IsError || res.Meta == nil {
		t.Fatalf("preview: %+v", res)
	}
	facts, _ := res.Meta.AdditionalFields[approval.MetaPreviewFacts].(map[string]any)
	if got, _ := facts["domains"].([]any); len(got) != 2 || got[0] != "light" || got[1] != "lock" {
		t.Fatalf("facts in _meta = %v, want sorted domains without duplicates", facts)
	}
	digest, _ := res.Meta.AdditionalFields[approval.MetaPreviewDigest].(string)
	plain, _ := approval.Digest(factsPreview{Target: "door"})
	if digest == "" || digest == plain {
		t.Fatalf("the digest does not cover the facts: %q", digest)
	}

	ad, _ := approval.Digest(args)
	approve := func(ticket string) string {
		return sign(t, approvalKey, approval.Approval{Service: "test", Tool: "test_switch", ArgsDigest: ad,
			PreviewDigest: digest, TicketID: ticket, Expires: time.Now().Add(time.Minute).Unix()})
	}
	// Only the facts change between preview and apply.
	mu.Lock()
	domains = []any{"light"}
	mu.Unlock()
	res = call(args, approve("t1"))
	if !res.IsError || !strings.Contains(res.Content[0].(mcp.TextContent).Text, "scope changed") || applied != 0 {
		t.Fatalf("apply with changed facts: %+v (applied %d)", res, applied)
	}
	mu.Lock()
	domains = []any{"lock", "light"}
	mu.Unlock()
	res = call(args, approve("t2"))
	if res.IsError || applied != 1 {
		t.Fatalf("apply with the approved facts: %+v (applied %d)", res, applied)
	}

	res = call(map[string]any{"text": "bad"}, "")
	if !res.IsError || (res.Meta != nil && res.Meta.AdditionalFields[approval.MetaPreviewDigest] != nil) {
		t.Fatalf("malformed facts: %+v", res)
	}
	if strings.Contains(res.Content[0].(mcp.TextContent).Text, string(toolerr.Forbidden)) {
		t.Errorf("malformed facts answered %s", res.Content[0].(mcp.TextContent).Text)
	}
}
