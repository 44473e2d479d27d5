package router

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// rawCaller is a backend that passes a read through undecoded: it sends
// the arguments as given and returns the service's result object as it
// arrived (backend.Backend does).
type rawCaller interface {
	CallRaw(ctx context.Context, tool string, args json.RawMessage, retry bool) (json.RawMessage, error)
}

// forwardRaw runs an allowed read for the direct path. The service's
// result is passed on without decoding and re-encoding it when that keeps
// everything forward would do: only content, structuredContent and
// isError leave (its _meta, resultType and anything else stay behind), and
// the result is within the cap. Anything else takes the decoding way.
func (r *Router) forwardRaw(ctx context.Context, c *call, b rawCaller) (*mcp.CallToolResult, string) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	raw, err := b.CallRaw(ctx, c.e.Upstream.Name, c.canonical, true)
	if err != nil {
		r.cat.NoticeFailure(c.e.Service, err)
		return errorResult(err), string(toolerr.CodeOf(err))
	}
	if p, ok := passthrough(raw, r.cfg.MaxResultBytes); ok {
		c.passthrough, c.textBytes = p.body, p.text
		outcome := "ok"
		if p.isError {
			outcome = errorCodeOf(p.structured)
		}
		return nil, outcome
	}
	return r.decodeRaw(c, raw)
}

// decodeRaw decodes a service's result object and cleans it as forward
// does.
func (r *Router) decodeRaw(c *call, raw json.RawMessage) (*mcp.CallToolResult, string) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return errorResult(toolerr.Wrap(toolerr.UpstreamUnavailable, err, "service %s returned a result that is not MCP", c.e.Service)),
			string(toolerr.UpstreamUnavailable)
	}
	return r.clean(&res)
}

// passed is a result ready to leave as it is.
type passed struct {
	body       []byte // the result object the client gets
	structured json.RawMessage
	isError    bool
	text       int // bytes of text content, for the audit
}

// knownContent are the content types mcp-go's client accepts; anything
// else is left to its decoder to refuse.
var knownContent = map[string]bool{"text": true, "image": true, "audio": true, "resource": true, "resource_link": true}

// passthrough checks a service's result object and builds what the client
// gets from its parts, measuring size as capResult does: encoding/json
// reads the result object and then each content item. ok is false when
// the result must be decoded instead (over the cap, an unknown content
// type, an odd shape).
func passthrough(raw json.RawMessage, max int) (passed, bool) {
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return passed{}, false
	}
	size, text := 0, 0
	for _, item := range res.Content {
		var it struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(item, &it) != nil || !knownContent[it.Type] {
			return passed{}, false
		}
		if it.Type == "text" {
			if it.Text == nil {
				return passed{}, false
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
		return passed{}, false
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
	return passed{body: body, structured: structured, isError: res.IsError, text: text}, true
}

// errorCodeOf reads {"error":{"code":…}} from a failure's structured
// content, as errorCode does.
func errorCodeOf(structured json.RawMessage) string {
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
