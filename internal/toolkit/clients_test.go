package toolkit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
)

// toolView is what a client saw of one tool definition.
type toolView struct {
	Name                                    string
	ReadOnly, Destructive, Idempotent, Open *bool
	Meta                                    map[string]any
	Schema                                  map[string]any
}

// mcpClient is the common surface of the SDK clients under test.
type mcpClient interface {
	listTools(ctx context.Context) ([]toolView, error)
	call(ctx context.Context, name string, args any, meta map[string]any) (toolResult, error)
	// session is the MCP session id in use ("" in stateless mode).
	session() string
	version() string
}

// asWire re-encodes an SDK result into the wire shape the tests inspect.
func asWire(v any) (toolResult, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return toolResult{}, err
	}
	var r toolResult
	err = json.Unmarshal(data, &r)
	return r, err
}

func asMap(v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	err = json.Unmarshal(data, &m)
	return m, err
}

type mcpgoClient struct{ c *mcpgoclient.Client }

func (m mcpgoClient) listTools(ctx context.Context) ([]toolView, error) {
	res, err := m.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var out []toolView
	for _, t := range res.Tools {
		v := toolView{
			Name:        t.Name,
			ReadOnly:    t.Annotations.ReadOnlyHint,
			Destructive: t.Annotations.DestructiveHint,
			Idempotent:  t.Annotations.IdempotentHint,
			Open:        t.Annotations.OpenWorldHint,
		}
		if t.Meta != nil {
			v.Meta = t.Meta.AdditionalFields
		}
		var schema any = t.InputSchema
		if t.RawInputSchema != nil {
			schema = t.RawInputSchema
		}
		if v.Schema, err = asMap(schema); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (m mcpgoClient) call(ctx context.Context, name string, args any, meta map[string]any) (toolResult, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	if meta != nil {
		req.Params.Meta = &mcpgo.Meta{AdditionalFields: meta}
	}
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return toolResult{}, err
	}
	return asWire(res)
}

func (m mcpgoClient) session() string { return m.c.GetSessionId() }
func (m mcpgoClient) version() string { return m.c.ProtocolVersion() }

type sdkClient struct{ s *sdk.ClientSession }

func (c sdkClient) listTools(ctx context.Context) ([]toolView, error) {
	res, err := c.s.ListTools(ctx, &sdk.ListToolsParams{})
	if err != nil {
		return nil, err
	}
	var out []toolView
	for _, t := range res.Tools {
		v := toolView{Name: t.Name, Meta: t.Meta}
		if a := t.Annotations; a != nil {
			ro, idem := a.ReadOnlyHint, a.IdempotentHint
			v.ReadOnly, v.Idempotent = &ro, &idem
			v.Destructive, v.Open = a.DestructiveHint, a.OpenWorldHint
		}
		if v.Schema, err = asMap(t.InputSchema); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (c sdkClient) call(ctx context.Context, name string, args any, meta map[string]any) (toolResult, error) {
	res, err := c.s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		return toolResult{}, err
	}
	return asWire(res)
}

func (c sdkClient) session() string { return c.s.ID() }
func (c sdkClient) version() string {
	if r := c.s.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

// clientCase connects one SDK client configuration to url.
type clientCase struct {
	name string
	// wantVersion is the protocol revision the client should end up on.
	wantVersion string
	connect     func(t *testing.T, url string) mcpClient
}

func mcpgoCase(name, wantVersion string, opts ...mcpgoclient.ClientOption) clientCase {
	return clientCase{name: name, wantVersion: wantVersion, connect: func(t *testing.T, url string) mcpClient {
		t.Helper()
		tr, err := transport.NewStreamableHTTP(url,
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + string(serviceToken)}))
		if err != nil {
			t.Fatal(err)
		}
		c := mcpgoclient.NewClient(tr, opts...)
		ctx := t.Context()
		if err := c.Start(ctx); err != nil {
			t.Fatalf("Start: %v", err)
		}
		t.Cleanup(func() { _ = c.Close() })
		init := mcpgo.InitializeRequest{}
		init.Params.ClientInfo = mcpgo.Implementation{Name: "toolkit-test", Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatalf("Initialize: %v", err)
		}
		return mcpgoClient{c: c}
	}}
}

func sdkCase(name, pin, wantVersion string, standaloneSSE bool) clientCase {
	return clientCase{name: name, wantVersion: wantVersion, connect: func(t *testing.T, url string) mcpClient {
		t.Helper()
		hc := &http.Client{Transport: bearerTransport{token: string(serviceToken), base: http.DefaultTransport}}
		c := sdk.NewClient(&sdk.Implementation{Name: "toolkit-test", Version: "1"}, nil)
		var opts *sdk.ClientSessionOptions
		if pin != "" {
			opts = &sdk.ClientSessionOptions{ProtocolVersion: pin}
		}
		s, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{
			Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: !standaloneSSE,
		}, opts)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return sdkClient{s: s}
	}}
}

// Every client must end up without an MCP session: the service is
// stateless (identity is the bearer token), so nothing is kept per client.
var clientCases = []clientCase{
	mcpgoCase("mcp-go default", modernVersion),
	mcpgoCase("mcp-go pinned 2025-11-25", "2025-11-25", mcpgoclient.WithProtocolVersion("2025-11-25")),
	mcpgoCase("mcp-go pinned 2025-03-26", "2025-03-26", mcpgoclient.WithProtocolVersion("2025-03-26")),
	//lint:ignore SA1019 legacy-only clients are still deployed; the service must serve them
	mcpgoCase("mcp-go legacy only", "2025-11-25", mcpgoclient.WithLegacyProtocolOnly()),
	sdkCase("go-sdk default", "", modernVersion, false),
	sdkCase("go-sdk pinned 2025-11-25", "2025-11-25", "2025-11-25", false),
	sdkCase("go-sdk pinned 2025-11-25 with standalone SSE", "2025-11-25", "2025-11-25", true),
	sdkCase("go-sdk pinned 2025-06-18", "2025-06-18", "2025-06-18", false),
}

func TestClientsListTools(t *testing.T) {
	t.Parallel()
	for _, tc := range clientCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			c := tc.connect(t, f.url)
			if got := c.version(); got != tc.wantVersion {
				t.Errorf("protocol version = %q, want %q", got, tc.wantVersion)
			}
			if id := c.session(); id != "" {
				t.Errorf("client holds session id %q; the service must be stateless", id)
			}
			tools, err := c.listTools(t.Context())
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			byName := map[string]toolView{}
			for _, tv := range tools {
				byName[tv.Name] = tv
			}
			var names []string
			for n := range byName {
				names = append(names, n)
			}
			slices.Sort(names)
			want := f.svc.ToolNames()
			slices.Sort(want)
			if !slices.Equal(names, want) {
				t.Fatalf("tools = %v, want %v", names, want)
			}

			hints := []struct {
				tool                                    string
				readOnly, destructive, idempotent, open bool
				write                                   bool
			}{
				{tool: "test_echo", readOnly: true, idempotent: true},
				{tool: "test_set_light", idempotent: true, write: true},
			}
			for _, h := range hints {
				tv := byName[h.tool]
				check := func(label string, got *bool, want bool) {
					if got == nil {
						t.Errorf("%s: %s hint missing", h.tool, label)
					} else if *got != want {
						t.Errorf("%s: %s = %v, want %v", h.tool, label, *got, want)
					}
				}
				check("readOnlyHint", tv.ReadOnly, h.readOnly)
				check("destructiveHint", tv.Destructive, h.destructive)
				check("idempotentHint", tv.Idempotent, h.idempotent)
				check("openWorldHint", tv.Open, h.open)
				if got, ok := tv.Meta[approval.MetaWrite].(bool); !ok || got != h.write {
					t.Errorf("%s: _meta[%s] = %v (present %v), want %v", h.tool, approval.MetaWrite, got, ok, h.write)
				}
			}

			var wantSchema map[string]any
			if err := json.Unmarshal([]byte(echoSchema), &wantSchema); err != nil {
				t.Fatal(err)
			}
			if got := byName["test_echo"].Schema; !reflect.DeepEqual(got, wantSchema) {
				t.Errorf("test_echo schema changed in transit:\n got %v\nwant %v", got, wantSchema)
			}
		})
	}
}

func TestClientsCall(t *testing.T) {
	t.Parallel()
	for _, tc := range clientCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			c := tc.connect(t, f.url)
			ctx := t.Context()

			res, err := c.call(ctx, "test_echo", map[string]any{"text": "hällo", "count": 3}, nil)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if res.IsError {
				t.Fatalf("read call failed: %+v", res)
			}
			if res.StructuredContent["echo"] != "hällo" || res.StructuredContent["count"] != float64(3) {
				t.Errorf("structuredContent = %v", res.StructuredContent)
			}
			if len(res.Content) != 1 || res.Content[0].Type != "text" {
				t.Fatalf("content = %+v, want one text mirror", res.Content)
			}
			var mirror map[string]any
			if err := json.Unmarshal([]byte(res.Content[0].Text), &mirror); err != nil {
				t.Fatalf("text mirror is not JSON: %v", err)
			}
			if !reflect.DeepEqual(mirror, res.StructuredContent) {
				t.Errorf("text mirror %v differs from structuredContent %v", mirror, res.StructuredContent)
			}

			// Each validation failure is a result, not a protocol error, and
			// the handler never runs.
			bad := []map[string]any{
				{},                              // required missing
				{"text": 5},                     // wrong type
				{"text": "x", "mode": "medium"}, // not in enum
				{"text": "x", "count": 11},      // above maximum
				{"text": "x", "extra": true},    // unknown argument
				{"text": ""},                    // below minLength
				{"text": "x", "count": 1.5},     // not an integer
			}
			for _, args := range bad {
				res, err := c.call(ctx, "test_echo", args, nil)
				if err != nil {
					t.Fatalf("call %v: %v", args, err)
				}
				if code := errorCode(t, res); code != toolerr.InvalidArgument {
					t.Errorf("args %v: code %q, want invalid_argument", args, code)
				}
				if errorMessage(res) == "" {
					t.Errorf("args %v: empty message", args)
				}
			}
			if n := f.echoCalls(); n != 1 {
				t.Errorf("handler ran %d times, want 1 (only the valid call)", n)
			}

			// A preview through the client carries the digest in _meta.
			res, err = c.call(ctx, "test_set_light", map[string]any{"room": "hall", "level": 40}, nil)
			if err != nil {
				t.Fatalf("preview: %v", err)
			}
			if res.IsError || res.StructuredContent["status"] != "preview" {
				t.Fatalf("preview result = %+v", res)
			}
			digest, _ := res.Meta[approval.MetaPreviewDigest].(string)
			if len(digest) != 64 {
				t.Fatalf("preview digest = %q", digest)
			}
			if _, applies, _ := f.light.snapshot(); applies != 0 {
				t.Errorf("preview applied %d times", applies)
			}

			// The approval travels in the request _meta through both SDKs.
			args := map[string]any{"room": "hall", "level": 40}
			token := sign(t, approvalKey, f.approvalFor(args, digest, "ticket-client"))
			res, err = c.call(ctx, "test_set_light", args, applyMeta(token))
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if res.IsError || res.StructuredContent["status"] != "applied" {
				t.Fatalf("apply result = %+v", res)
			}
			if level, applies, _ := f.light.snapshot(); level != 40 || applies != 1 {
				t.Errorf("after apply: level=%d applies=%d, want 40/1", level, applies)
			}
		})
	}
}

// What reaches an SDK client on the wire carries no secret: the raw HTTP
// response bodies are recorded below the client.
func TestClientsSeeNoSecrets(t *testing.T) {
	t.Parallel()
	leaks := []string{upstreamSecret, "plain-key-value-abc", "hunter2-value", "secret-xyz"}
	connect := map[string]func(t *testing.T, url string, rec *recordingTransport) mcpClient{
		"mcp-go": func(t *testing.T, url string, rec *recordingTransport) mcpClient {
			tr, err := transport.NewStreamableHTTP(url,
				transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + string(serviceToken)}),
				transport.WithHTTPBasicClient(&http.Client{Transport: rec}))
			if err != nil {
				t.Fatal(err)
			}
			c := mcpgoclient.NewClient(tr)
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.Close() })
			if _, err := c.Initialize(t.Context(), mcpgo.InitializeRequest{}); err != nil {
				t.Fatal(err)
			}
			return mcpgoClient{c: c}
		},
		"go-sdk": func(t *testing.T, url string, rec *recordingTransport) mcpClient {
			hc := &http.Client{Transport: bearerTransport{token: string(serviceToken), base: rec}}
			c := sdk.NewClient(&sdk.Implementation{Name: "toolkit-test", Version: "1"}, nil)
			s, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return sdkClient{s: s}
		},
	}
	for name, conn := range connect {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			rec := &recordingTransport{base: http.DefaultTransport}
			c := conn(t, f.url, rec)
			res, err := c.call(t.Context(), "test_leak", map[string]any{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.StructuredContent["api_key"] != redacted {
				t.Errorf("result = %+v", res)
			}
			res, err = c.call(t.Context(), "test_fail", map[string]any{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if errorMessage(res) != "internal error" {
				t.Errorf("failure message = %q", errorMessage(res))
			}
			wire := rec.String()
			if !strings.Contains(wire, redacted) {
				t.Fatalf("recorded no redacted result; recorder saw %d bytes", len(wire))
			}
			for _, leak := range leaks {
				if strings.Contains(wire, leak) {
					t.Errorf("%q reached the client", leak)
				}
			}
		})
	}
}
