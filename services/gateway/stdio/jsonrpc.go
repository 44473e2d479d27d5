package stdio

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
)

// JSON-RPC error codes the bridge itself produces.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

// inbound is one message read from stdin, decoded only as far as routing
// needs; body is forwarded unchanged.
type inbound struct {
	body        []byte
	method      string          // single messages only
	id          json.RawMessage // single messages only; nil for notifications
	params      json.RawMessage // single messages only
	metaVersion string          // params._meta protocol version (2026-07-28 clients)
	batch       bool
	// requests holds the ids of the requests in this message: each one is
	// owed exactly one response line on stdout.
	requests []json.RawMessage
}

func (in inbound) isInitialize() bool { return in.method == string(mcp.MethodInitialize) }

// rpcError is a JSON-RPC error the bridge answers on the client's behalf.
type rpcError struct {
	id      json.RawMessage
	code    int
	message string
}

// single is the part of a JSON-RPC message the bridge looks at.
type single struct {
	ID     json.RawMessage `json:"id"`
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
}

// parseInbound classifies one stdin line. It returns an rpcError for lines
// that are not JSON or not JSON-RPC shaped; everything else is forwarded
// as is and left for the gateway to judge.
func parseInbound(line []byte) (inbound, *rpcError) {
	if !json.Valid(line) {
		return inbound{}, &rpcError{code: codeParseError, message: "Parse error: stdin line is not valid JSON"}
	}
	in := inbound{body: line}
	switch line[0] {
	case '{':
		var s single
		if err := json.Unmarshal(line, &s); err != nil {
			return inbound{}, &rpcError{code: codeInvalidRequest, message: "Invalid Request"}
		}
		method, ok := methodOf(s.Method)
		if !ok {
			return inbound{}, &rpcError{id: s.ID, code: codeInvalidRequest, message: "Invalid Request: method must be a string"}
		}
		in.method, in.params = method, s.Params
		if hasID(s.ID) {
			in.id = s.ID
			if method != "" {
				in.requests = []json.RawMessage{s.ID}
			}
		}
		in.metaVersion = metaProtocolVersion(s.Params)
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(line, &elems); err != nil || len(elems) == 0 {
			return inbound{}, &rpcError{code: codeInvalidRequest, message: "Invalid Request: empty or malformed batch"}
		}
		in.batch = true
		for _, e := range elems {
			var s single
			if json.Unmarshal(e, &s) != nil {
				continue
			}
			if m, ok := methodOf(s.Method); ok && m != "" && hasID(s.ID) {
				in.requests = append(in.requests, s.ID)
			}
		}
	default:
		return inbound{}, &rpcError{code: codeInvalidRequest, message: "Invalid Request: a message must be a JSON object"}
	}
	return in, nil
}

func methodOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var m string
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", false
	}
	return m, true
}

func hasID(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// metaProtocolVersion returns params._meta["io.modelcontextprotocol/protocolVersion"],
// which 2026-07-28 clients put on every request instead of negotiating a
// session.
func metaProtocolVersion(params json.RawMessage) string {
	if len(params) == 0 {
		return ""
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// idKey normalises a JSON-RPC id so that a response can be matched with its
// request whatever whitespace or number spelling either side used.
func idKey(raw json.RawMessage) string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return "s:" + x
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return "n:" + strconv.FormatFloat(f, 'g', -1, 64)
		}
		return "n:" + x.String()
	case nil:
		return ""
	default:
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil {
			return ""
		}
		return "o:" + buf.String()
	}
}

// errorResponse encodes a JSON-RPC error response; a nil id becomes null.
func errorResponse(id json.RawMessage, code int, message string) []byte {
	if !hasID(id) {
		id = json.RawMessage("null")
	}
	type errBody struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   errBody         `json:"error"`
	}{"2.0", id, errBody{code, message}})
	if err != nil {
		// Only a malformed id can fail, and ids come from valid JSON.
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return b
}

// envelope is the part of a message from the gateway the bridge looks at.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// isResponse reports whether the message answers a client request (as
// opposed to a server request or notification, which carry a method).
func (e envelope) isResponse() bool { return e.Method == "" && hasID(e.ID) }

// pendingSet tracks the requests of one forwarded message that still owe a
// response. It is used by one goroutine only.
type pendingSet struct {
	ids  map[string]json.RawMessage
	keys []string // request order, for deterministic error output
}

func newPendingSet(ids []json.RawMessage) *pendingSet {
	p := &pendingSet{ids: make(map[string]json.RawMessage, len(ids))}
	for _, id := range ids {
		k := idKey(id)
		if _, dup := p.ids[k]; dup {
			continue
		}
		p.ids[k] = id
		p.keys = append(p.keys, k)
	}
	return p
}

func (p *pendingSet) has(key string) bool { _, ok := p.ids[key]; return ok }
func (p *pendingSet) done(key string)     { delete(p.ids, key) }
func (p *pendingSet) empty() bool         { return len(p.ids) == 0 }

// remaining returns the ids still owed a response, in request order.
func (p *pendingSet) remaining() []json.RawMessage {
	var out []json.RawMessage
	for _, k := range p.keys {
		if id, ok := p.ids[k]; ok {
			out = append(out, id)
		}
	}
	return out
}
