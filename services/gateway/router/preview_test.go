package router

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// writeBackend offers one write tool and answers every call with result,
// on the raw way (CallRaw) or decoded as mcp-go's client would (Call).
type writeBackend struct {
	mu      sync.Mutex
	result  string
	raw     int
	decoded int
	onCall  func() // when set, runs as the service is asked (either way)
}

func (b *writeBackend) Name() string { return "demo" }

func (b *writeBackend) ListTools(context.Context) ([]mcp.Tool, error) {
	t := mcp.NewToolWithRawSchema("demo_counter_add", "Add to the counter.", json.RawMessage(`{"type":"object"}`))
	ro, destructive := false, false
	t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint = &ro, &destructive
	return []mcp.Tool{t}, nil
}

func (b *writeBackend) Call(context.Context, string, any, map[string]any, bool) (*mcp.CallToolResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.decoded++
	if b.onCall != nil {
		b.onCall()
	}
	var res mcp.CallToolResult
	return &res, json.Unmarshal([]byte(b.result), &res)
}

func (b *writeBackend) CallRaw(context.Context, string, json.RawMessage, bool) (json.RawMessage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.raw++
	if b.onCall != nil {
		b.onCall()
	}
	return json.RawMessage(b.result), nil
}

// decodedOnly hides CallRaw: the way through mcp-go's client.
type decodedOnly struct{ b *writeBackend }

func (d decodedOnly) Name() string { return d.b.Name() }
func (d decodedOnly) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	return d.b.ListTools(ctx)
}
func (d decodedOnly) Call(ctx context.Context, tool string, args any, meta map[string]any, retry bool) (*mcp.CallToolResult, error) {
	return d.b.Call(ctx, tool, args, meta, retry)
}

func writeRouter(t testing.TB, b Backend, store *tickets.Store) *Router {
	t.Helper()
	ctx := context.Background()
	engine, err := policy.NewEmbedded(ctx, policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := approval.NewSigner([]byte("preview-test-approval-key-0123456789abcd"))
	pinStore, _ := pins.Load("")
	r, err := New(Config{MaxResultBytes: 4 << 10}, Deps{Policy: engine, Tickets: store, Pins: pinStore, Signer: signer, Backends: []Backend{b}})
	if err != nil {
		t.Fatal(err)
	}
	r.RefreshAll(ctx)
	return r
}

// TestPreviewIsCheckedBeforeATicket: what a service answers to a preview
// is checked before a ticket is issued: only the preview digest and facts
// of the service's _meta are used and none of it leaves, a preview cut by
// the service or by the gateway's cap gets no ticket, a preview without a
// digest or with malformed facts is refused.
func TestPreviewIsCheckedBeforeATicket(t *testing.T) {
	const digest = `"io.toolgate/preview-digest":"sha256:abc"`
	big := strings.Repeat("x", 8<<10)
	cases := []struct {
		name, result string
		ticket       bool
		code         string // the error code when refused
	}{
		{"preview with a digest",
			`{"_meta":{` + digest + `,"secret":"s3cret"},"content":[{"type":"text","text":"{\"preview\":{\"from\":1,\"to\":2}}"}],"structuredContent":{"preview":{"from":1,"to":2}}}`,
			true, ""},
		{"cut by the service",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"{}"}],"structuredContent":{"truncated":true,"preview":{}}}`,
			false, "too_large"},
		{"over the gateway's cap",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"` + big + `"}],"structuredContent":{"preview":{"n":1}}}`,
			false, "too_large"},
		{"no digest",
			`{"content":[{"type":"text","text":"{}"}],"structuredContent":{"preview":{}}}`,
			false, "upstream_unavailable"},
		{"HTML characters, line separators and spaces in the preview",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"x"}],"structuredContent":{ "preview" : {"name":"<b>Tom & Jerry</b>\u2028", "n" : 1.50 } }}`,
			true, ""},
		{"no preview member",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"x"}],"structuredContent":{"from":1}}`,
			true, ""},
		{"a null preview member",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"x"}],"structuredContent":{"preview":null}}`,
			true, ""},
		{"no structured content",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"x"}]}`,
			true, ""},
		{"facts",
			`{"_meta":{` + digest + `,"io.toolgate/preview-facts":{"domains":["lock","light","lock"],"unresolved":false}},"content":[{"type":"text","text":"x"}],"structuredContent":{"preview":{"n":1}}}`,
			true, ""},
		{"malformed facts",
			`{"_meta":{` + digest + `,"io.toolgate/preview-facts":{"domains":[7]}},"content":[{"type":"text","text":"x"}],"structuredContent":{"preview":{"n":1}}}`,
			false, "upstream_unavailable"},
		{"a digest that is not a string",
			`{"_meta":{"io.toolgate/preview-digest":7},"content":[{"type":"text","text":"x"}],"structuredContent":{"preview":{"n":1}}}`,
			false, "upstream_unavailable"},
		{"a null _meta",
			`{"_meta":null,"content":[{"type":"text","text":"x"}],"structuredContent":{"preview":{"n":1}}}`,
			false, "upstream_unavailable"},
		{"the digest given twice",
			`{"_meta":{"io.toolgate/preview-digest":"sha256:old",` + digest + `},"content":[{"type":"text","text":"x"}],"structuredContent":{"preview":{"n":1}}}`,
			true, ""},
		{"a failure",
			`{"_meta":{` + digest + `},"content":[{"type":"text","text":"{\"error\":{\"code\":\"not_found\"}}"}],"structuredContent":{"error":{"code":"not_found","message":"no such counter"}},"isError":true}`,
			false, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store := tickets.NewStore(nil, 100, 10)
			r := writeRouter(t, &writeBackend{result: tc.result}, store)
			res, err := r.CallTool(auth.WithIdentity(context.Background(), auth.Identity{Client: auth.Client{Name: "c", Groups: []string{"users"}}}), "demo", "demo_counter_add", json.RawMessage(`{"amount":1}`))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(res)
			if strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "sha256:abc") {
				t.Errorf("the service's _meta left: %s", out)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &body); err != nil {
				t.Fatal(err)
			}
			open := store.List("")
			switch {
			case tc.ticket && (res.IsError || body["status"] != "confirmation_required" || len(open) != 1):
				t.Fatalf("no ticket: %s", out)
			case tc.ticket && open[0].PreviewDigest != "sha256:abc":
				t.Errorf("ticket %+v", open[0])
			case !tc.ticket && (!res.IsError || len(open) != 0):
				t.Fatalf("want a refusal without a ticket: %s (%d tickets)", out, len(open))
			case !tc.ticket && body["error"].(map[string]any)["code"] != tc.code:
				t.Errorf("code %v, want %s", body["error"], tc.code)
			}
		})
	}
}

// BenchmarkPreview: the gateway's own work for one preview of a write (two
// policy decisions, the service's preview read and checked, a ticket, the
// answer), with a service that answers at once. The ticket store is sized
// so it never fills.
func BenchmarkPreview(b *testing.B) {
	const result = `{"_meta":{"io.toolgate/preview-digest":"sha256:abc"},"content":[{"type":"text","text":"{\"preview\":{\"counter\":\"demo\",\"from\":1,\"to\":2}}"}],"structuredContent":{"preview":{"counter":"demo","from":1,"to":2}}}`
	r := writeRouter(b, &writeBackend{result: result}, tickets.NewStore(nil, 1<<30, 0))
	ctx := auth.WithIdentity(context.Background(), auth.Identity{Client: auth.Client{Name: "c", Groups: []string{"users"}}})
	args := json.RawMessage(`{"amount":1}`)
	b.ReportAllocs()
	for b.Loop() {
		res, err := r.CallTool(ctx, "demo", "demo_counter_add", args)
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
	}
}

// writes records each Write call.
type writes struct {
	mu sync.Mutex
	w  []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.w = append(w.w, string(p))
	return len(p), nil
}

func (w *writes) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.w)
}

// TestPreviewAuditLines: with a buffered audit log, a preview (which
// changes nothing) writes its decision, ticket and outcome lines in one
// write before the answer leaves, none while the service is asked; the
// confirm that applies it has its decision on record before the service is
// asked.
func TestPreviewAuditLines(t *testing.T) {
	const result = `{"_meta":{"io.toolgate/preview-digest":"sha256:abc"},"content":[{"type":"text","text":"{}"}],"structuredContent":{"preview":{"from":1,"to":2}}}`
	sink := &writes{}
	wb := &writeBackend{result: result}
	store := tickets.NewStore(nil, 100, 10)
	r := writeRouter(t, wb, store)
	r.deps.Audit = audit.NewBuffered(sink, time.Hour)
	var atService []string
	asked := 0
	wb.onCall = func() { atService, asked = sink.all(), asked+1 }
	ctx := auth.WithIdentity(context.Background(), auth.Identity{Client: auth.Client{Name: "c", Groups: []string{"users"}}})
	res, err := r.CallTool(ctx, "demo", "demo_counter_add", json.RawMessage(`{"amount":1}`))
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if asked != 1 || len(atService) != 0 {
		t.Fatalf("written when the service was asked for the preview: %q", atService)
	}
	got := sink.all()
	if len(got) != 1 {
		t.Fatalf("%d writes, want decision, ticket and outcome together: %q", len(got), got)
	}
	lines := strings.Split(strings.TrimSpace(got[0]), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"event":"decision"`) || !strings.Contains(lines[1], `"event":"ticket"`) || !strings.Contains(lines[2], `"event":"outcome"`) {
		t.Fatalf("the preview's write: %q", got[0])
	}
	open := store.List("")
	if len(open) != 1 {
		t.Fatalf("tickets: %+v", open)
	}
	_, err = r.CallTool(ctx, "demo", "demo_counter_add", json.RawMessage(`{"amount":1,"confirm":true,"ticket":"`+open[0].ID+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if asked != 2 || len(atService) != 2 || !strings.Contains(atService[1], `"event":"decision"`) || !strings.Contains(atService[1], `"ticket_id":"`+open[0].ID+`"`) || strings.Contains(atService[1], `"event":"outcome"`) {
		t.Fatalf("when the service was asked to apply, the confirm's decision was not on record: %q", atService)
	}
}

// readBackend offers its one tool as a read.
type readBackend struct{ *writeBackend }

func (b readBackend) ListTools(context.Context) ([]mcp.Tool, error) {
	t := mcp.NewToolWithRawSchema("demo_counter_get", "Read the counter.", json.RawMessage(`{"type":"object"}`))
	ro, destructive := true, false
	t.Annotations.ReadOnlyHint, t.Annotations.DestructiveHint = &ro, &destructive
	return []mcp.Tool{t}, nil
}

// TestNoServiceMetaLeaves: the preview digest and facts a service puts in
// its _meta are the gateway's to read; they leave with no result, on
// either way a result takes (a read decoded because it is over the cap, a
// read through mcp-go's client, a failed preview).
func TestNoServiceMetaLeaves(t *testing.T) {
	const meta = `"_meta":{"io.toolgate/preview-digest":"sha256:abc","io.toolgate/preview-facts":{"note":"s3cret"}}`
	big := strings.Repeat("x", 8<<10)
	cases := []struct {
		name, tool, result string
		decodedOnly        bool
	}{
		{"read over the cap", "demo_counter_get", `{` + meta + `,"content":[{"type":"text","text":"` + big + `"}]}`, false},
		{"read through mcp-go's client", "demo_counter_get", `{` + meta + `,"content":[{"type":"text","text":"1"}]}`, true},
		{"failed preview", "demo_counter_add", `{` + meta + `,"content":[{"type":"text","text":"no"}],"isError":true}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wb := &writeBackend{result: tc.result}
			var b Backend = wb
			if tc.tool == "demo_counter_get" {
				b = readBackend{wb}
			}
			if tc.decodedOnly {
				b = decodedOnly{wb}
				if tc.tool == "demo_counter_get" {
					b = readOnlyDecoded{readBackend{wb}}
				}
			}
			r := writeRouter(t, b, tickets.NewStore(nil, 100, 10))
			ctx := auth.WithIdentity(context.Background(), auth.Identity{Client: auth.Client{Name: "c", Groups: []string{"users"}}})
			res, err := r.CallTool(ctx, "demo", tc.tool, json.RawMessage(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			out, _ := json.Marshal(res)
			if res.Meta != nil || strings.Contains(string(out), "s3cret") || strings.Contains(string(out), "sha256:abc") {
				t.Errorf("the service's _meta left: %.300s", out)
			}
		})
	}
}

// readOnlyDecoded hides CallRaw of a read backend.
type readOnlyDecoded struct{ b readBackend }

func (d readOnlyDecoded) Name() string { return d.b.Name() }
func (d readOnlyDecoded) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	return d.b.ListTools(ctx)
}
func (d readOnlyDecoded) Call(ctx context.Context, tool string, args any, meta map[string]any, retry bool) (*mcp.CallToolResult, error) {
	return d.b.Call(ctx, tool, args, meta, retry)
}
