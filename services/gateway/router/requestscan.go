package router

import (
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// A one-pass reader of a request body.
//
// Every POST passes checkEnvelope, and a tools/call then plainCall: two
// reflective decodings of the same bytes, most of what the gateway itself
// spends reading a call. scanRequest reads the common case in one pass —
// a single object whose members are "jsonrpc" (exactly "2.0"), "method" (a
// non-empty string without escapes or non-ASCII bytes), "id" (a string,
// an integer checkEnvelope accepts (exactID), or null) and "params", each
// at most once, spelt so, in a body of valid UTF-8 — validating the whole body as
// encoding/json does (resultScanner's grammar), and gives what
// checkEnvelope and plainCall give for it: the same fields, the same call.
// In a call's params it reads "name", "arguments" and "_meta" (a lone
// progressToken, or any other value plainCall refuses) by exact spelling,
// as plainCall's map does: a call with a progress token read in one pass
// costs what a plain call does (0.5–0.9 µs, 2 allocations), where leaving
// it to the reference costs 15–21 µs and 85 (BenchmarkReadRequest).
//
// It answers no error itself: whatever it is not sure to read exactly as
// encoding/json would — another member or spelling (encoding/json matches
// struct fields ignoring case), a member twice (encoding/json keeps the
// last), an escape or a non-ASCII byte in a key, the method or the tool's
// name, a batch, deep nesting, anything checkEnvelope refuses — goes to
// checkEnvelope and plainCall, which stay the reference.

// The members of a request the scanner reads, as bits of a "seen" set;
// fieldOther (0) is any other.
const (
	reqJSONRPC = 1 << iota
	reqID
	reqMethod
	reqParams
)

// The members of tools/call params, and of their _meta.
const (
	paramName = 1 << iota
	paramArgs
	paramMeta
)

const metaProgress = 1

// scanEnvelope is checkEnvelope, in one pass when it can be: readEnvelope's
// way to read a body. A message it scanned carries its call for directCall.
func scanEnvelope(body []byte) (*envelope, error) {
	if m, ok := scanRequest(body); ok {
		return m, nil
	}
	return checkEnvelope(body)
}

// directCall is plainCall: from what scanRequest read, or else plainCall.
func directCall(m *envelope) (plain, bool) {
	if m != nil && m.scanned {
		return m.call, m.callOK
	}
	return plainCall(m)
}

// scanRequest reads body as checkEnvelope and then plainCall would,
// reporting false when it is not sure (the body may still be valid).
func scanRequest(body []byte) (*envelope, bool) {
	if !utf8.Valid(body) {
		return nil, false
	}
	s := resultScanner{data: body}
	s.ws()
	if !s.at('{') {
		return nil, false
	}
	s.i++
	s.depth = 1
	var (
		seen           uint8
		id, params     span
		method         []byte
		call           callScan
		paramsIsObject bool
	)
	v := s.members(func(f int) verdict {
		if f == fieldOther || seen&uint8(f) != 0 {
			return scanUnsure
		}
		seen |= uint8(f)
		start := s.i
		switch f {
		case reqJSONRPC:
			if s.literal(`"2.0"`) != scanOK {
				return scanUnsure
			}
		case reqID:
			switch {
			case s.at('"'):
				if v := s.str(); v != scanOK {
					return v
				}
			case s.at('n'):
				if v := s.literal("null"); v != scanOK {
					return v
				}
			default:
				if v := s.number(); v != scanOK || !exactID(s.data[start:s.i]) {
					// checkEnvelope refuses it, saying why.
					return scanUnsure
				}
			}
			id = span{start, s.i}
		case reqMethod:
			if !s.at('"') {
				return scanUnsure
			}
			flags, v := s.key()
			if v != scanOK || flags != 0 || s.i-start == 2 {
				return scanUnsure
			}
			method = body[start+1 : s.i-1]
		default: // reqParams
			if s.at('{') {
				paramsIsObject = true
				if v := s.params(&call); v != scanOK {
					return v
				}
			} else if v := s.value(); v != scanOK {
				return v
			}
			params = span{start, s.i}
		}
		return scanOK
	}, requestField)
	if v != scanOK {
		return nil, false
	}
	s.ws()
	if s.i != len(body) || seen&(reqJSONRPC|reqMethod) != reqJSONRPC|reqMethod {
		return nil, false
	}
	m := &envelope{JSONRPC: "2.0", method: methodName(method), scanned: true}
	m.Method = &m.method
	if id.end > 0 {
		m.ID = body[id.start:id.end:id.end]
	}
	if params.end > 0 {
		m.Params = body[params.start:params.end:params.end]
	}
	// What plainCall makes of it: a tools/call with an id, params an
	// object of a non-empty name string, arguments and a _meta of a
	// progress token (progressOnly), nothing else.
	if m.method != string(mcp.MethodToolsCall) || len(m.ID) == 0 || string(m.ID) == "null" ||
		!paramsIsObject || call.other || call.name.end == 0 || call.name.end-call.name.start == 2 {
		return m, true
	}
	m.callOK = true
	m.call = plain{id: m.ID, name: string(body[call.name.start+1 : call.name.end-1])}
	if call.args.end > 0 {
		m.call.args = body[call.args.start:call.args.end:call.args.end]
	}
	return m, true
}

// callScan is what params (an object) say of a plain call.
type callScan struct {
	name  span // the name string, quotes included; end 0 when absent or null
	args  span // the arguments value; end 0 when absent
	other bool // a member plainCall refuses, or a name or _meta it cannot read
}

// params reads an object of params at its '{', noting its name and
// arguments as plainCall reads them (a map: keys are exact).
func (s *resultScanner) params(c *callScan) verdict {
	if v := s.open(); v != scanOK {
		return v
	}
	var seen uint8
	return s.members(func(f int) verdict {
		if f == fieldOther {
			c.other = true
			return s.value()
		}
		if seen&uint8(f) != 0 {
			return scanUnsure // twice: the map keeps the last one
		}
		seen |= uint8(f)
		start := s.i
		if f == paramMeta {
			return s.meta(c)
		}
		if f == paramArgs {
			if v := s.value(); v != scanOK {
				return v
			}
			c.args = span{start, s.i}
			return scanOK
		}
		switch {
		case s.at('"'):
			flags, v := s.key()
			if v != scanOK || flags != 0 {
				return scanUnsure // an escape is encoding/json's to decode
			}
			c.name = span{start, s.i}
			return scanOK
		case s.at('n'):
			return s.literal("null") // the name stays empty
		default:
			c.other = true // not a string: plainCall fails to read it
			return s.value()
		}
	}, paramField)
}

// meta reads a call's _meta at its value as progressOnly does: an object
// of one member, progressToken, a string or an integer of at most
// tokenMaxLen bytes. Any other valid value is c.other, mcp-go's to serve.
func (s *resultScanner) meta(c *callScan) verdict {
	if !s.at('{') {
		c.other = true
		return s.value()
	}
	if v := s.open(); v != scanOK {
		return v
	}
	members := 0
	v := s.members(func(f int) verdict {
		members++
		if f != metaProgress || members > 1 {
			c.other = true
			return s.value()
		}
		start := s.i
		switch {
		case s.at('"'):
			return s.str()
		case s.i < len(s.data) && (s.data[s.i] == '-' || '0' <= s.data[s.i] && s.data[s.i] <= '9'):
			if v := s.number(); v != scanOK {
				return v
			}
			if n := s.data[start:s.i]; len(n) > tokenMaxLen || !isInteger(string(n)) {
				c.other = true
			}
			return scanOK
		default: // null, a bool, an object or an array
			c.other = true
			return s.value()
		}
	}, metaField)
	if members == 0 {
		c.other = true
	}
	return v
}

// requestField, paramField and metaField name the member a plain key
// (ASCII, no escapes) is for: spelt exactly so, or fieldOther.
func requestField(key []byte) int {
	switch string(key) {
	case "jsonrpc":
		return reqJSONRPC
	case "id":
		return reqID
	case "method":
		return reqMethod
	case "params":
		return reqParams
	}
	return fieldOther
}

func paramField(key []byte) int {
	switch string(key) {
	case "name":
		return paramName
	case "arguments":
		return paramArgs
	case "_meta":
		return paramMeta
	}
	return fieldOther
}

func metaField(key []byte) int {
	if string(key) == "progressToken" {
		return metaProgress
	}
	return fieldOther
}

// methodName is the method as a string, without allocating for the
// methods a session sends most.
func methodName(b []byte) string {
	switch string(b) {
	case string(mcp.MethodToolsCall):
		return string(mcp.MethodToolsCall)
	case string(mcp.MethodToolsList):
		return string(mcp.MethodToolsList)
	case string(mcp.MethodInitialize):
		return string(mcp.MethodInitialize)
	case string(mcp.MethodPing):
		return string(mcp.MethodPing)
	case string(mcp.MethodNotificationInitialized):
		return string(mcp.MethodNotificationInitialized)
	}
	return string(b)
}
