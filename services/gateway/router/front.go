package router

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
	"github.com/toolgate/toolgate/services/gateway/sessions"
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
	var srv *server.StreamableHTTPServer
	// A session the store drops (to make room, or idle) is ended in the
	// MCP server too, the way a client's DELETE ends it: that is the only
	// way mcp-go lets go of a session's state.
	closer := func(id string) {
		req, err := http.NewRequestWithContext(sessions.System(context.Background()), http.MethodDelete, "/mcp", nil)
		if err != nil {
			return
		}
		req.Header.Set("Mcp-Session-Id", id)
		srv.ServeHTTP(discard{header: http.Header{}}, req)
	}
	srv = server.NewStreamableHTTPServer(s,
		// Sessions for clients that use them (older revisions): opened for
		// the authenticated client only, bounded per client and overall,
		// forged or foreign ids refused, and idle sessions swept because
		// clients rarely send DELETE. The store also tells the direct
		// tools/call path which sessions mcp-go still counts as active.
		server.WithSessionIdManagerResolver(r.deps.Sessions.Resolver(endpoint, closer)),
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
	return srv
}

// discard is the response writer of the gateway's own session ends.
type discard struct{ header http.Header }

func (d discard) Header() http.Header { return d.header }

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func (discard) WriteHeader(int) {}

const (
	sessionIdleTTL  = sessions.DefaultIdleTTL
	streamHeartbeat = 25 * time.Second
)

// Handler serves /mcp and /mcp/<service>. The caller's identity must be in
// the request context (the auth middleware runs first).
func (r *Router) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		name := strings.Trim(strings.TrimPrefix(req.URL.Path, "/mcp"), "/")
		h, ok := r.handlers[name]
		if !ok || (name != "" && !strings.HasPrefix(req.URL.Path, "/mcp/")) {
			mcpwire.WriteError(w, http.StatusNotFound, -32601, "no such service endpoint; use /mcp or /mcp/<service>")
			return
		}
		if err := r.cat.AwaitLoaded(req.Context()); err != nil {
			w.Header().Set("Retry-After", "5")
			mcpwire.WriteError(w, http.StatusServiceUnavailable, -32603, err.Error())
			return
		}
		switch req.Method {
		case http.MethodPost, http.MethodDelete:
		case http.MethodGet:
			// A GET without a session has no stream to resume: answer 405
			// (allowed by the spec) so clients fall back to POST instead of
			// reconnecting in a loop.
			session := req.Header.Get("Mcp-Session-Id")
			if session == "" {
				w.Header().Set("Allow", "POST, DELETE")
				mcpwire.WriteError(w, http.StatusMethodNotAllowed, -32600, "GET needs an MCP session; send requests with POST")
				return
			}
			// mcp-go opens a stream for any id on GET; only the caller's
			// own session gets one.
			if id, ok := auth.IdentityFrom(req.Context()); !ok || !r.deps.Sessions.Owns(id.Client.Name, name, session) {
				mcpwire.WriteError(w, http.StatusNotFound, -32600, "unknown or expired session; initialize again")
				return
			}
		default:
			w.Header().Set("Allow", "GET, POST, DELETE")
			mcpwire.WriteError(w, http.StatusMethodNotAllowed, -32600, "method not allowed")
			return
		}
		if req.ContentLength > mcpwire.MaxRequestBytes {
			mcpwire.WriteError(w, http.StatusRequestEntityTooLarge, -32600, fmt.Sprintf("request body is larger than %d bytes", mcpwire.MaxRequestBytes))
			return
		}
		req.Body = http.MaxBytesReader(w, req.Body, mcpwire.MaxRequestBytes)
		if req.Method == http.MethodPost {
			if _, msg, ok := mcpwire.ReadRequest(w, req); ok {
				r.post(w, req, name, h, msg, true)
			}
			return
		}
		h.ServeHTTP(w, req)
	})
}

// post answers a checked POST to endpoint, whose MCP server is h: a call
// passes the one admission step before the direct path (if direct) or
// mcp-go sees it; discovery's own tools admit the call they carry.
func (r *Router) post(w http.ResponseWriter, req *http.Request, endpoint string, h http.Handler, msg *mcpwire.Message, direct bool) {
	req = req.WithContext(withEndpoint(req.Context(), endpoint))
	if tool := msg.Tool(); tool != "" && endpoint != DiscoveryEndpoint {
		req = req.WithContext(withAdmission(req.Context(), r.admit(req.Context(), endpoint, tool)))
	}
	if direct && r.callDirectly(w, req, endpoint, msg) {
		return
	}
	r.viaMCPGo(w, req, endpoint, h, msg)
}

// viaMCPGo hands a checked POST that the direct path did not serve to the
// MCP server h of endpoint: an initialize within the client's session
// budget, a call with its admission.
func (r *Router) viaMCPGo(w http.ResponseWriter, req *http.Request, endpoint string, h http.Handler, msg *mcpwire.Message) {
	if msg.Is(string(mcp.MethodInitialize)) {
		if r.allowInitialize(w, req) {
			r.initialize(w, req, endpoint, h)
		}
		return
	}
	h.ServeHTTP(w, req)
}

// initialize opens a session in the store, sends the initialize with its
// id to the MCP server and tells the store whether the client got it
// (mcp-go puts the id in the response header only when the initialize
// succeeded). A client with as many initializes in flight as it may hold
// sessions gets 429 here: mcp-go, given no id, would answer 200 with no
// session, and every later request of that client would fail.
func (r *Router) initialize(w http.ResponseWriter, req *http.Request, endpoint string, h http.Handler) {
	var o sessions.Opening
	if id, ok := auth.IdentityFrom(req.Context()); ok {
		var opened bool
		if o.ID, opened = r.deps.Sessions.Open(id.Client.Name, endpoint); !opened {
			// The ones in flight finish in moments; one second is enough.
			r.log.Warn("initialize refused: too many initializes in flight", "client", id.Client.Name, "retry_after_s", 1)
			w.Header().Set("Retry-After", "1")
			mcpwire.WriteError(w, http.StatusTooManyRequests, -32000, fmt.Sprintf(
				"too many initializes in flight from this client (at most %d at once); retry after 1 s, or keep using the session you have",
				r.deps.Sessions.Config().PerClient))
			return
		}
	}
	h.ServeHTTP(w, req.WithContext(sessions.WithOpening(req.Context(), &o)))
	r.deps.Sessions.Opened(o.ID, o.ID != "" && w.Header().Get("Mcp-Session-Id") == o.ID)
}

// allowInitialize spends one of the caller's initializes (each opens a
// session that the gateway keeps); over the budget it answers 429 with
// Retry-After and the request goes no further.
func (r *Router) allowInitialize(w http.ResponseWriter, req *http.Request) bool {
	id, ok := auth.IdentityFrom(req.Context())
	if !ok {
		return true // no session is opened without a client
	}
	allowed, wait := r.deps.Sessions.AllowInitialize(id.Client.Name)
	if allowed {
		return true
	}
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	cfg := r.deps.Sessions.Config()
	r.log.Warn("initialize refused: too many new sessions", "client", id.Client.Name, "retry_after_s", secs)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	mcpwire.WriteError(w, http.StatusTooManyRequests, -32000, fmt.Sprintf(
		"too many new sessions from this client (at most %d per minute, %d at once); retry after %d s, or keep using the session you have",
		cfg.InitializesPerMinute, cfg.InitializeBurst, secs))
	return false
}

// install offers a service's tools (the catalog's Changed) on the
// aggregate, the service's own endpoint and its toolsets; mcp-go announces
// the change to connected sessions.
func (r *Router) install(service string, tools []*catalog.Tool, gone []string) {
	served := make([]server.ServerTool, 0, len(tools))
	for _, t := range tools {
		served = append(served, server.ServerTool{Tool: t.Offered, Handler: r.handleCall})
	}
	if len(gone) > 0 {
		r.aggregate.DeleteTools(gone...)
		r.single[service].DeleteTools(gone...)
	}
	r.aggregate.AddTools(served...)
	r.single[service].SetTools(served...)
	for _, ts := range r.cfg.Toolsets {
		if ts.Service != service {
			continue
		}
		var inSet []server.ServerTool
		for _, st := range served {
			if ts.Has(st.Tool.Name) {
				inSet = append(inSet, st)
			}
		}
		r.sets[ts.Name].SetTools(inSet...)
	}
}
