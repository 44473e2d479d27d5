package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/auth"
)

// The direct tools/call path.
//
// A tools/call on a live session is the gateway's hot path. mcp-go would
// decode the message, run the tool filter, call the tool handler, and
// encode the result the handler decoded from the service a moment before.
// callDirectly does what that amounts to for the common case (a session of
// a 2025 protocol revision, a plain call) itself: the same endpoint
// membership and visibility check, the same tool handler logic (serve:
// arguments, policy, tickets, caps, audit, metrics), and for a read the
// service's result bytes passed on as they are (passthrough.go). A call
// whose _meta only asks for progress is plain too (progressOnly). Anything
// else — another method, a batch, the 2026-07-28 revision, any other _meta,
// task parameters, a session mcp-go has not seen for a while — goes to
// mcp-go as before. Both ways answer the same.

// callDirectly answers req when it is a plain tools/call it can serve, and
// reports whether it did.
func (r *Router) callDirectly(w http.ResponseWriter, req *http.Request, endpoint string, m *envelope) bool {
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
	msg, ok := plainCall(m)
	if !ok {
		return false
	}
	a, ok := admitted(req.Context(), msg.name)
	if !ok {
		return false
	}
	if errors.Is(a.err, ErrNoSuchTool) {
		// mcp-go's words for a tool it does not have or the filter hides.
		writeRPC(w, msg.id, nil, &rpcError{Code: mcp.INVALID_PARAMS, Message: fmt.Sprintf("tool '%s' not found: tool not found", msg.name)})
		return true
	}
	var result json.RawMessage
	res := refusal(a.err)
	if c := a.c; c != nil {
		c.direct = true
		var outcome string
		res, outcome = r.serveRecovered(c, func() (*mcp.CallToolResult, string) {
			treq := mcp.CallToolRequest{}
			treq.Params.Name = msg.name
			treq.Params.RawArguments = msg.args
			return r.serve(req.Context(), c, treq)
		})
		r.finish(c, res, outcome)
		result = c.passthrough
	}
	if res != nil {
		var err error
		if result, err = json.Marshal(res); err != nil {
			r.log.Error("could not encode a result", "tool", msg.name, "error", err)
			writeRPC(w, msg.id, nil, &rpcError{Code: mcp.INTERNAL_ERROR, Message: "could not encode the result"})
			return true
		}
	}
	writeRPC(w, msg.id, result, nil)
	return true
}

// serveRecovered runs serve and turns a panic into an internal error
// result; the panic's value (which may quote arguments) stays in the log.
func (r *Router) serveRecovered(c *call, serve func() (*mcp.CallToolResult, string)) (res *mcp.CallToolResult, outcome string) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("tool call panicked", "tool", c.e.Offered.Name, "panic", fmt.Sprint(p))
			c.passthrough = nil
			res, outcome = errorResult(toolerr.New(toolerr.Internal, "internal error")), string(toolerr.Internal)
		}
	}()
	return serve()
}

// plain is a tools/call the direct path serves.
type plain struct {
	id   json.RawMessage
	name string
	args json.RawMessage
}

// plainCall reads a JSON-RPC tools/call whose params are a name, arguments
// and at most a _meta that only asks for progress, and nothing else (no
// other _meta, no task, no multi round-trip state: those are mcp-go's to
// handle). m is the request as checkEnvelope parsed it, nil for a batch.
func plainCall(m *envelope) (plain, bool) {
	if !m.is(string(mcp.MethodToolsCall)) || len(m.ID) == 0 || string(m.ID) == "null" {
		return plain{}, false
	}
	// A member twice (or twice but for case, which encoding/json folds)
	// is read as its last by the envelope and otherwise by mcp-go: such a
	// message is mcp-go's to answer.
	if m.body != nil && !distinctKeys(m.body) {
		return plain{}, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m.Params, &params) != nil || params == nil {
		return plain{}, false
	}
	var p plain
	for k, v := range params {
		switch k {
		case "name":
			if json.Unmarshal(v, &p.name) != nil {
				return plain{}, false
			}
		case "arguments":
			p.args = v
		case "_meta":
			// A map keeps the last of two _meta; mcp-go decodes each, and
			// fails on one it cannot read.
			if !progressOnly(v) || !distinctKeys(m.Params) {
				return plain{}, false
			}
		default:
			return plain{}, false
		}
	}
	if p.name == "" {
		return plain{}, false
	}
	p.id = m.ID
	return p, true
}

// progressOnly reports whether a call's _meta is an object of exactly one
// member, progressToken, whose value is a string or an integer of at most
// tokenMaxLen bytes: what MCP clients that want progress send (the
// TypeScript and Python SDKs, MCP Inspector), and the one _meta the direct
// path serves. mcp-go's streamable HTTP server sends no progress of its
// own, and the gateway's tool handler never reads a request's _meta, so
// mcp-go answers such a call exactly as it answers the call without it
// (fastcall_test.go and the app's direct_test.go hold the two ways to
// that). A longer number could be one mcp-go fails to decode (it reads
// the token as a float64), so it is left to mcp-go, as is any other key
// (the 2026-07-28 revision's protocolVersion, trace context) or a second
// member.
func progressOnly(raw json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	if k, err := dec.Token(); err != nil || k != "progressToken" {
		return false
	}
	v, err := dec.Token()
	if err != nil {
		return false
	}
	switch v := v.(type) {
	case string:
	case json.Number:
		if !isInteger(string(v)) || len(v) > tokenMaxLen {
			return false
		}
	default: // null, a bool, an object or an array
		return false
	}
	t, err := dec.Token()
	return err == nil && t == json.Delim('}')
}

// distinctKeys reports whether no key of the object obj (valid JSON)
// appears twice, not even in another case: decoding into a struct,
// encoding/json folds case, so "params" and "Params" are one member.
func distinctKeys(obj json.RawMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	var seen []string
	for dec.More() {
		k, err := dec.Token()
		key, isKey := k.(string)
		if err != nil || !isKey || slices.ContainsFunc(seen, func(s string) bool { return strings.EqualFold(s, key) }) {
			return false
		}
		seen = append(seen, key)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return true
}

// tokenMaxLen bounds an integer progress token the direct path serves.
const tokenMaxLen = 20

// isInteger reports whether n (a JSON number) is an integer as JSON writes
// one: -?(0|[1-9][0-9]*), no fraction, no exponent.
func isInteger(n string) bool {
	n = strings.TrimPrefix(n, "-")
	if n == "" || (n[0] == '0' && len(n) > 1) {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// writeRPC writes a JSON-RPC response with the request's id as it came.
func writeRPC(w http.ResponseWriter, id json.RawMessage, result json.RawMessage, rerr *rpcError) {
	out := make([]byte, 0, len(result)+64)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, id...)
	if rerr != nil {
		b, _ := json.Marshal(rerr)
		out = append(out, `,"error":`...)
		out = append(out, b...)
	} else {
		out = append(out, `,"result":`...)
		out = append(out, result...)
	}
	out = append(out, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}
