package router

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
)

// The direct path: a plain tools/call (mcpwire's PlainCall) on a live
// session of a 2025 revision is served here instead of by mcp-go, through
// the same admission and run, with a read's result passed on as the
// service wrote it (forward.go). Anything else goes to mcp-go; both
// ways answer alike (direct_test.go, app/direct_test.go).

// callDirectly answers req when it is a plain tools/call it can serve, and
// reports whether it did.
func (r *Router) callDirectly(w http.ResponseWriter, req *http.Request, endpoint string, m *mcpwire.Message) bool {
	if req.Method != http.MethodPost {
		return false
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return false
	}
	if v := req.Header.Get(mcp.HeaderProtocolVersion); v != "" && (!mcp.IsValidProtocolVersion(v) || mcp.IsModernProtocol(v)) {
		return false
	}
	id, ok := auth.IdentityFrom(req.Context())
	if !ok || !r.deps.Sessions.Direct(id.Client.Name, endpoint, req.Header.Get("Mcp-Session-Id")) {
		return false
	}
	msg, ok := m.PlainCall()
	if !ok {
		return false
	}
	a, ok := admitted(req.Context(), msg.Name)
	if !ok {
		return false
	}
	if errors.Is(a.err, ErrNoSuchTool) {
		// mcp-go's words for a tool it does not have or the filter hides.
		mcpwire.WriteResponse(w, msg.ID, nil, &mcpwire.ResponseError{Code: mcp.INVALID_PARAMS, Msg: fmt.Sprintf("tool '%s' not found: tool not found", msg.Name)})
		return true
	}
	var result json.RawMessage
	res := refusal(a.err)
	if c := a.c; c != nil {
		c.direct = true
		var outcome string
		res, outcome = r.serveRecovered(c, func() (*mcp.CallToolResult, string) {
			treq := mcp.CallToolRequest{}
			treq.Params.Name = msg.Name
			treq.Params.RawArguments = msg.Args
			return r.serve(req.Context(), c, treq)
		})
		r.finish(c, res, outcome)
		result = c.passed.Body
	}
	if res != nil {
		var err error
		if result, err = json.Marshal(res); err != nil {
			r.log.Error("could not encode a result", "tool", msg.Name, "error", err)
			mcpwire.WriteResponse(w, msg.ID, nil, &mcpwire.ResponseError{Code: mcp.INTERNAL_ERROR, Msg: "could not encode the result"})
			return true
		}
	}
	mcpwire.WriteResponse(w, msg.ID, result, nil)
	return true
}

// serveRecovered runs serve and turns a panic into an internal error
// result; the panic's value (which may quote arguments) stays in the log.
func (r *Router) serveRecovered(c *call, serve func() (*mcp.CallToolResult, string)) (res *mcp.CallToolResult, outcome string) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("tool call panicked", "tool", c.e.Offered.Name, "panic", fmt.Sprint(p))
			c.passed = mcpwire.Passed{}
			res, outcome = errorResult(toolerr.New(toolerr.Internal, "internal error")), string(toolerr.Internal)
		}
	}()
	return serve()
}
