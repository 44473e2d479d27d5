package router

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/services/gateway/auth"
)

func (r *Router) newServer(name string, services ...string) *server.MCPServer {
	// Each service's own guidance (web: when to search at all) follows
	// the gateway's: only pinned text, and only of services the caller may
	// list.
	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		res.Instructions = r.instructionsFor(ctx, services)
	})
	// Clients of the 2026-07-28 revision learn the instructions from
	// server/discover instead of initialize.
	hooks.AddAfterDiscover(func(ctx context.Context, _ any, _ *mcp.DiscoverRequest, res *mcp.DiscoverResult) {
		res.Instructions = r.instructionsFor(ctx, services)
	})
	return server.NewMCPServer(name, "1",
		server.WithToolCapabilities(true),
		server.WithInstructions(r.gatewayInstructions()),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithToolFilter(r.visible),
	)
}

func (r *Router) streamable(endpoint string, s *server.MCPServer) http.Handler {
	sess := newSessions(time.Now, sessionIdleTTL)
	r.sessions[endpoint] = sess
	return server.NewStreamableHTTPServer(s,
		// Sessions for clients that use them (older revisions); forged ids
		// are refused, and idle sessions are swept because clients rarely
		// send DELETE.
		server.WithSessionIdManager(sess),
		server.WithSessionIdleTTL(sessionIdleTTL),
		// Clients that open the GET event stream (OpenWebUI's Python SDK
		// does, right after initialize) get a keep-alive so idle proxies do
		// not cut it and send them reconnecting.
		server.WithHeartbeatInterval(streamHeartbeat),
		server.WithDisableLocalhostProtection(true),
		server.WithHTTPContextFunc(func(ctx context.Context, req *http.Request) context.Context {
			if id, ok := auth.IdentityFrom(req.Context()); ok {
				return auth.WithIdentity(ctx, id)
			}
			return ctx
		}),
	)
}

const (
	sessionIdleTTL  = 10 * time.Minute
	streamHeartbeat = 25 * time.Second
)

// Handler serves /mcp and /mcp/<service>. The caller's identity must be in
// the request context (the auth middleware runs first).
func (r *Router) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := strings.Trim(strings.TrimPrefix(req.URL.Path, "/mcp"), "/")
		h, ok := r.handlers[name]
		if !ok || (name != "" && !strings.HasPrefix(req.URL.Path, "/mcp/")) {
			writeRPCError(w, http.StatusNotFound, -32601, "no such service endpoint; use /mcp or /mcp/<service>")
			return
		}
		switch req.Method {
		case http.MethodPost, http.MethodDelete:
		case http.MethodGet:
			// A GET without a session has no stream to resume: answer 405
			// (allowed by the spec) so clients fall back to POST instead of
			// reconnecting in a loop.
			if req.Header.Get("Mcp-Session-Id") == "" {
				w.Header().Set("Allow", "POST, DELETE")
				writeRPCError(w, http.StatusMethodNotAllowed, -32600, "GET needs an MCP session; send requests with POST")
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			writeRPCError(w, http.StatusMethodNotAllowed, -32600, "method not allowed")
			return
		}
		if req.ContentLength > MaxRequestBytes {
			writeRPCError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("request body is larger than %d bytes", MaxRequestBytes))
			return
		}
		req.Body = http.MaxBytesReader(w, req.Body, MaxRequestBytes)
		if req.Method == http.MethodPost {
			body, ok := readEnvelope(w, req)
			if !ok || r.callDirectly(w, req, name, body) {
				return
			}
		}
		h.ServeHTTP(w, req)
	})
}

// MaxRequestBytes bounds one request body.
const MaxRequestBytes = 1 << 20

func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg},
	})
}
