package toolkit

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/truncate"
)

// DefaultMaxResultBytes bounds the JSON of one result.
const DefaultMaxResultBytes = 256 << 10

// TruncationMarker starts the note appended to a truncated text result.
const TruncationMarker = "\n[toolgate: truncated"

// Success builds a result: structuredContent holds v (wrapped as
// {"result": v} when v is not a JSON object, because MCP requires an object)
// and a text content mirrors it as JSON. When the JSON exceeds maxBytes the
// text is cut on a UTF-8 boundary with an explicit marker and the structured
// content says so instead of carrying a partial object.
func Success(v any, maxBytes int) (*mcp.CallToolResult, error) {
	obj, data, err := structured(v)
	if err != nil {
		return nil, err
	}
	if maxBytes > 0 && len(data) > maxBytes {
		return truncated(data, maxBytes), nil
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(data))},
		StructuredContent: obj,
	}, nil
}

func structured(v any) (any, []byte, error) {
	data, err := marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("encode result: %w", err)
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		v = map[string]any{"result": json.RawMessage(data)}
		if data, err = marshal(v); err != nil {
			return nil, nil, fmt.Errorf("encode result: %w", err)
		}
	}
	return json.RawMessage(data), data, nil
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func truncated(data []byte, maxBytes int) *mcp.CallToolResult {
	note := fmt.Sprintf("%s: showing %%d of %d bytes; narrow the request (filters, paging) to see the rest]", TruncationMarker, len(data))
	keep := maxBytes - len(note) - 8
	if keep < 0 {
		keep = 0
	}
	head := truncate.String(string(data), keep)
	text := head + fmt.Sprintf(note, len(head))
	return &mcp.CallToolResult{
		Content: []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: map[string]any{
			"truncated":   true,
			"total_bytes": len(data),
			"shown_bytes": len(head),
			"hint":        "the full result is larger than the response cap; narrow the request",
		},
	}
}

// Truncated reports whether res is the stand-in for a result that exceeded
// the byte cap: its structured content is {"truncated": true, …}.
func Truncated(res *mcp.CallToolResult) bool {
	if res == nil || res.StructuredContent == nil {
		return false
	}
	var body struct {
		Truncated bool `json:"truncated"`
	}
	switch v := res.StructuredContent.(type) {
	case map[string]any:
		t, _ := v["truncated"].(bool)
		return t
	case json.RawMessage:
		return json.Unmarshal(v, &body) == nil && body.Truncated
	}
	raw, err := json.Marshal(res.StructuredContent)
	return err == nil && json.Unmarshal(raw, &body) == nil && body.Truncated
}

// ErrorBody is the structured content of a failed call.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries the stable code and the client-safe message.
type ErrorDetail struct {
	Code    toolerr.Code `json:"code"`
	Message string       `json:"message"`
}

// Failure builds an isError result from err. Only the code and the
// client-safe message of a *toolerr.Error leave; other errors become
// "internal error" so no cause text (which may quote an upstream) escapes.
func Failure(err error) *mcp.CallToolResult {
	body := ErrorBody{Error: ErrorDetail{Code: toolerr.CodeOf(err), Message: toolerr.MessageOf(err)}}
	data, _ := marshal(body)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(string(data))},
		StructuredContent: body,
		IsError:           true,
	}
}

// Image is a Read result that carries a picture (a camera snapshot, say):
// the client gets it as MCP image content, and Details as structured
// content with its JSON text mirror. Details must be a JSON object and
// should describe the picture (source, time, size) without repeating it.
type Image struct {
	MIMEType string
	Data     []byte
	Details  any
}

// withImage appends img to res. The encoded picture counts against
// maxBytes: a service bounds its images before returning them, so an image
// over the cap is a bug to report, not a result to cut.
func withImage(res *mcp.CallToolResult, img *Image, maxBytes int) (*mcp.CallToolResult, error) {
	if img.MIMEType == "" || len(img.Data) == 0 {
		return nil, toolerr.New(toolerr.Internal, "the image result is empty")
	}
	encoded := base64.StdEncoding.EncodeToString(img.Data)
	if maxBytes > 0 && len(encoded) > maxBytes {
		return nil, toolerr.New(toolerr.TooLarge, "the image is %d bytes encoded, over the result cap of %d; ask for a smaller one", len(encoded), maxBytes)
	}
	res.Content = append(res.Content, mcp.NewImageContent(encoded, img.MIMEType))
	return res, nil
}
