package mcpwire

import (
	"encoding/json"
)

// Passed is a result ready to leave as it is.
type Passed struct {
	Body       []byte // the result object the client gets
	Structured json.RawMessage
	IsError    bool
	Text       int // bytes of text content, for the audit
}

// contentTypes are the content types mcp-go's client accepts; anything
// else is left to its decoder to refuse.
var contentTypes = map[string]bool{"text": true, "image": true, "audio": true, "resource": true, "resource_link": true}

// Pass checks a service's result object and builds what the client gets
// from its parts, measuring size as the router's result cap does: encoding/json
// reads the result object and then each content item. ok is false when
// the result must be decoded instead (over the cap, an unknown content
// type, an odd shape).
func Pass(raw json.RawMessage, max int) (Passed, bool) {
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return Passed{}, false
	}
	size, text := 0, 0
	for _, item := range res.Content {
		var it struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(item, &it) != nil || !contentTypes[it.Type] {
			return Passed{}, false
		}
		if it.Type == "text" {
			if it.Text == nil {
				return Passed{}, false
			}
			size += len(*it.Text)
			text += len(*it.Text)
			continue
		}
		size += len(item)
	}
	structured := res.StructuredContent
	if string(structured) == "null" {
		structured = nil
	}
	size += len(structured)
	if size > max {
		return Passed{}, false
	}
	body := make([]byte, 0, len(raw)+32)
	body = append(body, `{"content":[`...)
	for i, item := range res.Content {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, item...)
	}
	body = append(body, ']')
	if structured != nil {
		body = append(body, `,"structuredContent":`...)
		body = append(body, structured...)
	}
	if res.IsError {
		body = append(body, `,"isError":true`...)
	}
	body = append(body, '}')
	return Passed{Body: body, Structured: structured, IsError: res.IsError, Text: text}, true
}

// ErrorCode reads {"error":{"code":…}} from a failure's structured
// content, "error" when it names none.
func ErrorCode(structured json.RawMessage) string {
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(structured, &body) == nil && body.Error.Code != "" {
		return body.Error.Code
	}
	return "error"
}
