package mcpwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Message is the part of a JSON-RPC message the gateway reads before the
// MCP server sees it. A single message is parsed once, by Read, and every
// later step (initialize, the direct tools/call path, the tool a call
// names) reads this instead of the body.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`

	// body is the message as Read read it, for PlainCall's
	// check that no member came twice.
	body []byte
}

// Is reports whether e is a message with the given method.
func (e *Message) Is(method string) bool {
	return e != nil && e.Method != nil && *e.Method == method
}

// Error is a message refused, with its JSON-RPC code.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Read validates a request body: valid JSON (-32700), and a
// JSON-RPC 2.0 request, notification or response (-32600). A batch is
// checked element by element. A single message comes back parsed; a batch
// as nil.
func Read(body []byte) (*Message, error) {
	body = bytes.TrimSpace(body)
	switch {
	case len(body) > 0 && body[0] == '{':
		// One parse both validates the JSON and reads the message.
		var e Message
		if err := json.Unmarshal(body, &e); err != nil {
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				return nil, &Error{-32700, "parse error: the body is not valid JSON"}
			}
			return nil, &Error{-32600, "invalid request: malformed JSON-RPC fields"}
		}
		e.body = body
		return &e, checkFields(&e)
	case !json.Valid(body):
		return nil, &Error{-32700, "parse error: the body is not valid JSON"}
	case body[0] == '[':
		var batch []json.RawMessage
		if err := json.Unmarshal(body, &batch); err != nil || len(batch) == 0 {
			return nil, &Error{-32600, "invalid request: empty batch"}
		}
		for _, m := range batch {
			if err := checkMessage(m); err != nil {
				return nil, err
			}
		}
		return nil, nil
	default:
		return nil, &Error{-32600, "invalid request: a JSON-RPC message must be an object"}
	}
}

// checkMessage checks one member of a batch.
func checkMessage(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return &Error{-32600, "invalid request: a JSON-RPC message must be an object"}
	}
	var e Message
	if err := json.Unmarshal(raw, &e); err != nil {
		return &Error{-32600, "invalid request: malformed JSON-RPC fields"}
	}
	return checkFields(&e)
}

func checkFields(e *Message) error {
	if e.JSONRPC != "2.0" {
		return &Error{-32600, `invalid request: "jsonrpc" must be "2.0"`}
	}
	if len(e.ID) > 0 {
		switch e.ID[0] {
		case '"', 'n':
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if !exactID(e.ID) {
				return &Error{-32600, "invalid request: a numeric id must be an integer from -(2^53-1) to 2^53-1 (other numbers come back altered from some JSON decoders); use a string id"}
			}
		default:
			return &Error{-32600, "invalid request: id must be a string or a number"}
		}
	}
	switch {
	case e.Method != nil:
		if *e.Method == "" {
			return &Error{-32600, "invalid request: empty method"}
		}
	case len(e.ID) > 0 && (len(e.Result) > 0 || len(e.Error) > 0):
		// A response to a server request (e.g. elicitation, ping).
	default:
		return &Error{-32600, "invalid request: missing method"}
	}
	return nil
}

// ReadRequest reads and checks a POST body, then restores it for the MCP
// server and returns it with its parsed message (nil for a batch). It
// answers the client itself and returns false when the body is unusable.
func ReadRequest(w http.ResponseWriter, req *http.Request) ([]byte, *Message, bool) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			WriteError(w, http.StatusRequestEntityTooLarge, -32600, "request body is too large")
			return nil, nil, false
		}
		WriteError(w, http.StatusBadRequest, -32700, "could not read the request body")
		return nil, nil, false
	}
	msg, err := Read(body)
	if err != nil {
		var ee *Error
		errors.As(err, &ee)
		WriteError(w, http.StatusBadRequest, ee.Code, ee.Msg)
		return nil, nil, false
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, msg, true
}

// exactID reports whether a numeric id (a valid JSON number) is an integer
// every JSON decoder reads exactly: mcp-go reads ids as float64, so a
// fraction, an exponent or an integer beyond 2^53 came back altered (or,
// like 1e400, not at all) from one path and as sent from another. One
// rule for every path: such an id is refused before anything runs.
func exactID(n []byte) bool {
	digits := bytes.TrimPrefix(n, []byte("-"))
	if !isInteger(string(n)) || len(digits) > len(maxExactID) {
		return false
	}
	return len(digits) < len(maxExactID) || string(digits) <= maxExactID
}

// maxExactID is 2^53-1, the largest integer a float64 holds with every
// integer below it.
const maxExactID = "9007199254740991"

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
