package mcpwire

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// Call is a tools/call the direct path serves.
type Call struct {
	ID   json.RawMessage // as the client sent it
	Name string
	Args json.RawMessage
}

// PlainCall reads a JSON-RPC tools/call whose params are a name, arguments
// and at most a _meta that only asks for progress, and nothing else (no
// other _meta, no task, no multi round-trip state: those are mcp-go's to
// handle). m is the request as Read parsed it, nil for a batch.
func (m *Message) PlainCall() (Call, bool) {
	if !m.Is(string(mcp.MethodToolsCall)) || len(m.ID) == 0 || string(m.ID) == "null" {
		return Call{}, false
	}
	// A member twice (or twice but for case, which encoding/json folds)
	// is read as its last by the Message and otherwise by mcp-go: such a
	// message is mcp-go's to answer.
	if m.body != nil && !distinctKeys(m.body) {
		return Call{}, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(m.Params, &params) != nil || params == nil {
		return Call{}, false
	}
	var p Call
	for k, v := range params {
		switch k {
		case "name":
			if json.Unmarshal(v, &p.Name) != nil {
				return Call{}, false
			}
		case "arguments":
			p.Args = v
		case "_meta":
			// A map keeps the last of two _meta; mcp-go decodes each, and
			// fails on one it cannot read.
			if !progressOnly(v) || !distinctKeys(m.Params) {
				return Call{}, false
			}
		default:
			return Call{}, false
		}
	}
	if p.Name == "" {
		return Call{}, false
	}
	p.ID = m.ID
	return p, true
}

// progressOnly reports whether a call's _meta is an object of exactly one
// member, progressToken, whose value is a string or an integer of at most
// tokenMaxLen bytes: what MCP clients that want progress send (the
// TypeScript and Python SDKs, MCP Inspector), and the one _meta the direct
// path serves. mcp-go's streamable HTTP server sends no progress of its
// own, and the gateway's tool handler never reads a request's _meta, so
// mcp-go answers such a call exactly as it answers the call without it
// (router/direct_test.go and the app's direct_test.go hold the two ways to
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

// Tool returns the tool a single tools/call request names, or "".
func (msg *Message) Tool() string {
	if !msg.Is(string(mcp.MethodToolsCall)) {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return ""
	}
	return p.Name
}
