package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// protocolVersion is the MCP revision the relay asks Home Assistant for;
// HA's SDK answers with the one it speaks.
const protocolVersion = "2025-06-18"

// maxPages bounds tools/list paging.
const maxPages = 10

// MCP is a client of a stateless Streamable HTTP MCP server inside Home
// Assistant (the built-in mcp_server at /api/mcp, or a HACS integration at
// its own path). Every message is one POST through the bounded upstream
// client, with the long-lived access token; the answer is one JSON
// document (or a single SSE event carrying it).
type MCP struct {
	up   *upstream.Client
	path string
	id   atomic.Int64

	mu      sync.Mutex
	version string // negotiated at the last initialize
	server  string
}

// NewMCP returns a client posting to path (e.g. /api/mcp) on up.
func NewMCP(up *upstream.Client, path string) *MCP { return &MCP{up: up, path: path} }

// UpstreamTool is one tool as the MCP server lists it.
type UpstreamTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations map[string]any  `json:"annotations"`
}

// Content is one content item of a tool result.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// Result is a tool call's result.
type Result struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

// post sends one JSON-RPC message; for a request it decodes the result
// into out.
func (m *MCP) post(ctx context.Context, method string, params any, notification, idempotent bool, out any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	var id int64
	if !notification {
		id = m.id.Add(1)
		msg["id"] = id
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return toolerr.Wrap(toolerr.Internal, err, "cannot encode an MCP request")
	}
	hdr := http.Header{"Accept": {"application/json, text/event-stream"}}
	m.mu.Lock()
	if m.version != "" {
		hdr.Set("MCP-Protocol-Version", m.version)
	}
	m.mu.Unlock()
	resp, err := m.up.Do(ctx, upstream.Request{Method: http.MethodPost, Path: m.path, Body: body, Header: hdr, Idempotent: idempotent, NoRetry: !idempotent})
	if err != nil {
		return err
	}
	if err := resp.Err(); err != nil {
		if resp.Status == http.StatusUnauthorized && m.restAcceptsToken(ctx) {
			return upstream.Explain(toolerr.Wrap(toolerr.AuthFailed, err, "Home Assistant's MCP server at %s refuses this token although its REST API accepts it: "+
				"the server's option \"Require an administrator account\" (require_admin, Home Assistant 2026.10+) is on, or it serves an LLM API other than Assist, "+
				"and the token's user is not an administrator. Use an administrator's long-lived access token, or turn the option off "+
				"(Settings → Devices & services → Model Context Protocol Server → Configure)", m.path))
		}
		return upstream.Explain(mcpStatus(err, resp.Status, m.path))
	}
	if notification {
		return nil
	}
	if resp.Status == http.StatusAccepted {
		return toolerr.New(toolerr.UpstreamUnavailable, "Home Assistant's MCP server answered a request with 202 and no result")
	}
	raw := resp.Body
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
		raw = sseData(raw)
	}
	var r rpcResponse
	if err := json.Unmarshal(raw, &r); err != nil || r.JSONRPC != "2.0" {
		return toolerr.New(toolerr.UpstreamUnavailable, "Home Assistant's MCP server answered with something that is not JSON-RPC")
	}
	if got, err := strconv.ParseInt(string(bytes.TrimSpace(r.ID)), 10, 64); err != nil || got != id {
		return toolerr.New(toolerr.UpstreamUnavailable, "Home Assistant's MCP server answered another request")
	}
	if r.Error != nil {
		code := toolerr.UpstreamUnavailable
		if r.Error.Code == -32602 {
			code = toolerr.InvalidArgument
		}
		// The server's message, framed as its words, lets the model fix
		// its arguments.
		msg := fmt.Sprintf("Home Assistant's MCP server refused %s (JSON-RPC error %d)", method, r.Error.Code)
		if said := m.up.Said(http.StatusBadRequest, r.Error.Message); said != "" {
			msg += ". " + said
		}
		return toolerr.New(code, "%s", msg)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Home Assistant's MCP server answered %s in an unexpected form", method)
		}
	}
	return nil
}

// restAcceptsToken reports whether HA's REST API takes the token (GET
// /api/ answers 200 to any valid token): a 401 of the MCP endpoint then
// means the endpoint wants an administrator, not another token
// (mcp_server's require_admin; HomeAssistantView turns Unauthorized into
// 401 as it does for a bad token).
func (m *MCP) restAcceptsToken(ctx context.Context) bool {
	var out struct {
		Message string `json:"message"`
	}
	return m.up.GetJSON(ctx, "/api/", nil, &out) == nil
}

// mcpStatus explains an HTTP failure of the MCP endpoint.
func mcpStatus(err error, status int, path string) error {
	switch status {
	case http.StatusNotFound:
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Home Assistant has no MCP server at %s: set up the Model Context Protocol Server integration (or the HACS one and HA_MCP_PATH)", path)
	case http.StatusBadRequest:
		return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Home Assistant's MCP server refused the request (HTTP 400)")
	}
	return err
}

// sseData returns the data of the first event of an SSE body.
func sseData(b []byte) []byte {
	var data [][]byte
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 && len(data) > 0 {
			break
		}
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(rest, []byte(" ")))
		}
	}
	return bytes.Join(data, []byte("\n"))
}

// Initialize opens a (stateless) session: initialize, then the initialized
// notification. It returns the server's name.
func (m *MCP) Initialize(ctx context.Context) (string, error) {
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	}
	params := map[string]any{
		"protocolVersion": protocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "toolgate-homeassistant", "version": "1"},
	}
	if err := m.post(ctx, "initialize", params, false, true, &res); err != nil {
		return "", err
	}
	m.mu.Lock()
	m.version, m.server = res.ProtocolVersion, res.ServerInfo.Name
	m.mu.Unlock()
	if err := m.post(ctx, "notifications/initialized", nil, true, true, nil); err != nil {
		return "", err
	}
	return res.ServerInfo.Name, nil
}

// ListTools lists every tool, following nextCursor a bounded number of
// times.
func (m *MCP) ListTools(ctx context.Context) ([]UpstreamTool, error) {
	var all []UpstreamTool
	cursor := ""
	for range maxPages {
		var params map[string]any
		if cursor != "" {
			params = map[string]any{"cursor": cursor}
		}
		var page struct {
			Tools      []UpstreamTool `json:"tools"`
			NextCursor string         `json:"nextCursor"`
		}
		if err := m.post(ctx, "tools/list", params, false, true, &page); err != nil {
			return nil, err
		}
		all = append(all, page.Tools...)
		if page.NextCursor == "" {
			return all, nil
		}
		cursor = page.NextCursor
	}
	return nil, toolerr.New(toolerr.TooLarge, "Home Assistant's MCP server lists more than %d pages of tools", maxPages)
}

// CallTool calls one tool, once.
func (m *MCP) CallTool(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	var res Result
	err := m.post(ctx, "tools/call", map[string]any{"name": name, "arguments": args}, false, false, &res)
	return res, err
}

// Server is the server's name from the last initialize.
func (m *MCP) Server() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.server
}

func (m *MCP) String() string { return fmt.Sprintf("MCP server at %s", m.path) }
