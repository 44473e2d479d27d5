package router

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/truncate"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/catalog"
)

// The discovery endpoint (/mcp/discover) serves clients that want every
// service without putting every schema into every prompt: three small
// tools find a tool by words, show one tool's definition, and call a tool
// by name. It shows only what the caller may see (the tool filter's
// policy answer), and a call through it is the tool's own call — the
// same handler, so the same policy decision, tickets, approvals, caps,
// audit lines and metrics as on /mcp.
const (
	toolFind     = "toolgate_find_tools"
	toolDescribe = "toolgate_describe_tool"
	toolCall     = "toolgate_call_tool"
)

// maxFound bounds one answer of toolgate_find_tools.
const maxFound = 50

func (r *Router) newDiscovery() (*server.MCPServer, error) {
	hooks := &server.Hooks{}
	instructions := func(ctx context.Context) string {
		return r.instructionsFor(ctx, r.cat.Services()) + "\n\n" + discoveryInstructions
	}
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		res.Instructions = instructions(ctx)
	})
	hooks.AddAfterDiscover(func(ctx context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		res.Instructions = instructions(ctx)
	})
	s := server.NewMCPServer("toolgate-discover", "1",
		server.WithToolCapabilities(false),
		server.WithInstructions(r.gatewayInstructions()+"\n\n"+discoveryInstructions),
		server.WithHooks(hooks),
		server.WithRecovery(),
	)
	read := mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	find := mcp.NewToolWithRawSchema(toolFind,
		"Find tools by words in their names and descriptions, optionally in one service. Returns names and one-line summaries.",
		json.RawMessage(`{"type":"object","properties":{"words":{"type":"string","maxLength":200,"description":"Words to look for; empty lists every tool."},"service":{"type":"string","maxLength":32,"description":"Only this service (e.g. sonarr, frigate)."},"limit":{"type":"integer","minimum":1,"maximum":50,"description":"At most this many (default 20)."}},"additionalProperties":false}`))
	find.Annotations = read
	describe := mcp.NewToolWithRawSchema(toolDescribe,
		"Show one tool's description and input schema, before calling it.",
		json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","maxLength":64}},"required":["name"],"additionalProperties":false}`))
	describe.Annotations = read
	call := mcp.NewToolWithRawSchema(toolCall,
		"Call a tool by name with its arguments. Writes answer with a preview and a ticket first.",
		json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","maxLength":64},"arguments":{"type":"object","description":"The tool's arguments, as its schema says."}},"required":["name"],"additionalProperties":false}`))
	// It may call anything the caller may call, writes included.
	call.Annotations = mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(false), DestructiveHint: mcp.ToBoolPtr(true),
		IdempotentHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(true)}
	for _, t := range []server.ServerTool{
		{Tool: find, Handler: r.findTools},
		{Tool: describe, Handler: r.describeTool},
		{Tool: call, Handler: r.callTool},
	} {
		v, err := toolkit.CompileSchema(t.Tool.Name, t.Tool.RawInputSchema)
		if err != nil {
			return nil, err
		}
		s.AddTool(t.Tool, validated(v, t.Handler))
	}
	return s, nil
}

// validated runs h only with arguments its tool's schema accepts, as every
// service's tools do: an unknown argument ({"query": …} for "words") is an
// error the model can correct, not a silent "list everything".
func validated(v *toolkit.Validator, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		raw := req.Params.RawArguments
		if len(raw) == 0 && req.Params.Arguments != nil {
			b, err := json.Marshal(req.Params.Arguments)
			if err != nil {
				return errorResult(toolerr.Wrap(toolerr.InvalidArgument, err, "arguments are not a JSON object")), nil
			}
			raw = b
		}
		if err := v.Validate(raw); err != nil {
			return errorResult(err), nil
		}
		return h(ctx, req)
	}
}

const discoveryInstructions = "This endpoint holds every service's tools without listing them: " +
	toolFind + " finds tools by words, " + toolDescribe + " shows one tool's arguments, and " +
	toolCall + " calls it by name."

// visibleEntry returns the tool called name if the caller in ctx may see
// it; an unknown and a hidden tool are the same answer.
func (r *Router) visibleEntry(ctx context.Context, name string) (*catalog.Tool, bool) {
	e := r.cat.Lookup(name)
	if e == nil || len(r.cat.Visible(ctx, []mcp.Tool{e.Offered}, "")) == 0 {
		return nil, false
	}
	return e, true
}

func noSuchTool(name string) *mcp.CallToolResult {
	return errorResult(toolerr.New(toolerr.NotFound, "there is no tool %q you may use; find tools with %s", name, toolFind))
}

func (r *Router) findTools(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if _, ok := auth.IdentityFrom(ctx); !ok {
		return errorResult(toolerr.New(toolerr.AuthFailed, "no authenticated client")), nil
	}
	var in struct {
		Words   string `json:"words"`
		Service string `json:"service"`
		Limit   int    `json:"limit"`
	}
	if err := req.BindArguments(&in); err != nil {
		return errorResult(toolerr.Wrap(toolerr.InvalidArgument, err, "arguments: words (text), service (a name), limit (1-50)")), nil
	}
	if in.Limit <= 0 || in.Limit > maxFound {
		in.Limit = 20
	}
	services, member := r.cat.Services(), func(*catalog.Tool) bool { return true }
	if in.Service != "" {
		var ok bool
		if services, member, ok = r.cat.Endpoint(in.Service); !ok {
			services = nil
		}
	}
	candidates := r.cat.Tools(services, member)
	defs := make([]mcp.Tool, len(candidates))
	for i, e := range candidates {
		defs[i] = e.Offered
	}
	shown := r.cat.Visible(ctx, defs, "")
	words := splitWords(in.Words)
	type hit struct {
		score int
		tool  mcp.Tool
	}
	var hits []hit
	for _, t := range shown {
		score := matchScore(t, words)
		if len(words) > 0 && score == 0 {
			continue
		}
		hits = append(hits, hit{score, t})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].tool.Name < hits[j].tool.Name
	})
	found := make([]map[string]any, 0, min(len(hits), in.Limit))
	for _, h := range hits[:min(len(hits), in.Limit)] {
		e := r.cat.Lookup(h.tool.Name)
		if e == nil {
			continue
		}
		found = append(found, map[string]any{
			"name": h.tool.Name, "service": e.Service, "summary": summary(e.Upstream.Description), "write": e.Write,
		})
	}
	return success(map[string]any{"tools": found, "matches": len(hits),
		"next": "Show a tool's arguments with " + toolDescribe + ", then call it with " + toolCall + "."}), nil
}

func (r *Router) describeTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if _, ok := auth.IdentityFrom(ctx); !ok {
		return errorResult(toolerr.New(toolerr.AuthFailed, "no authenticated client")), nil
	}
	name := req.GetString("name", "")
	e, ok := r.visibleEntry(ctx, name)
	if !ok {
		return noSuchTool(name), nil
	}
	t := e.Offered
	schema := t.RawInputSchema
	if len(schema) == 0 {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return errorResult(toolerr.Wrap(toolerr.Internal, err, "could not encode the schema")), nil
		}
		schema = b
	}
	return success(map[string]any{
		"name": t.Name, "service": e.Service, "title": t.Title, "description": t.Description,
		"inputSchema": json.RawMessage(schema), "annotations": t.Annotations, "write": e.Write,
		"next": "Call it with " + toolCall + ` {"name": "` + t.Name + `", "arguments": {…}}.`,
	}), nil
}

func (r *Router) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if _, ok := auth.IdentityFrom(ctx); !ok {
		return errorResult(toolerr.New(toolerr.AuthFailed, "no authenticated client")), nil
	}
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := req.BindArguments(&in); err != nil {
		return errorResult(toolerr.Wrap(toolerr.InvalidArgument, err, "arguments: name (a tool's name) and arguments (an object)")), nil
	}
	a := r.admit(ctx, DiscoveryEndpoint, in.Name)
	switch {
	case errors.Is(a.err, ErrNoSuchTool):
		return noSuchTool(in.Name), nil
	case a.c == nil:
		return refusal(a.err), nil
	}
	a.c.via = toolCall
	inner := mcp.CallToolRequest{}
	inner.Params.Name = in.Name
	inner.Params.RawArguments = in.Arguments
	return r.run(ctx, a.c, inner), nil
}

// splitWords lower-cases text and splits it into words of letters and
// digits; "_" separates too, so "episode_search" matches tool names.
func splitWords(text string) []string {
	words := strings.FieldsFunc(strings.ToLower(text), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsDigit(c)
	})
	slices.Sort(words)
	return slices.Compact(words)
}

// matchScore counts the words found in a tool's name (twice) and in its
// title and description.
func matchScore(t mcp.Tool, words []string) int {
	name := strings.ToLower(t.Name)
	text := strings.ToLower(t.Title + " " + t.Description)
	score := 0
	for _, w := range words {
		if strings.Contains(name, w) {
			score += 2
		}
		if strings.Contains(text, w) {
			score++
		}
	}
	return score
}

// summary is a description's first sentence, at most 160 bytes.
func summary(description string) string {
	s := strings.TrimSpace(description)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate.String(s, 160)
}
