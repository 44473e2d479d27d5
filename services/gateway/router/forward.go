package router

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/truncate"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
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
	if p, ok := mcpwire.Pass(raw, r.cfg.MaxResultBytes); ok {
		c.passed = p
		outcome := "ok"
		if p.IsError {
			outcome = mcpwire.ErrorCode(p.Structured)
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

// forward sends the call to the service and returns a clean result: only
// content, structured content and isError leave (upstream _meta, result
// types and server info stay behind), capped in size.
func (r *Router) forward(ctx context.Context, c *call, meta map[string]any, retry bool) (*mcp.CallToolResult, string) {
	b := r.backends[c.e.Service]
	ctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
	defer cancel()
	res, err := b.Call(ctx, c.e.Upstream.Name, c.args, meta, retry)
	if err != nil {
		r.cat.NoticeFailure(c.e.Service, err)
		return errorResult(err), string(toolerr.CodeOf(err))
	}
	if res == nil {
		return errorResult(toolerr.New(toolerr.UpstreamUnavailable, "service %s returned no result", c.e.Service)), string(toolerr.UpstreamUnavailable)
	}
	return r.clean(res)
}

// clean keeps what may leave of a service's result and caps it.
func (r *Router) clean(res *mcp.CallToolResult) (*mcp.CallToolResult, string) {
	out := &mcp.CallToolResult{Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}
	if len(res.RawStructuredContent) > 0 {
		out.StructuredContent = res.RawStructuredContent
	}
	if res.Meta != nil {
		// Only the preview digest and facts are kept, for the gateway itself.
		keep := map[string]any{}
		for _, k := range []string{approval.MetaPreviewDigest, approval.MetaPreviewFacts} {
			if v, ok := res.Meta.AdditionalFields[k]; ok {
				keep[k] = v
			}
		}
		if len(keep) > 0 {
			out.Meta = &mcp.Meta{AdditionalFields: keep}
		}
	}
	out = capResult(out, r.cfg.MaxResultBytes)
	outcome := "ok"
	if out.IsError {
		outcome = errorCode(out)
	}
	return out, outcome
}

// errorCode is a failure's code, read from its structured content.
func errorCode(res *mcp.CallToolResult) string {
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return "error"
	}
	return mcpwire.ErrorCode(raw)
}

// capResult enforces the gateway's byte cap on a result. Text is cut on a
// UTF-8 boundary with an explicit marker; structured content that does not
// fit is replaced by a note, never cut into invalid JSON.
func capResult(res *mcp.CallToolResult, max int) *mcp.CallToolResult {
	size := 0
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			size += len(t.Text)
		} else if b, err := json.Marshal(c); err == nil {
			size += len(b)
		}
	}
	var structured []byte
	if res.StructuredContent != nil {
		structured, _ = json.Marshal(res.StructuredContent)
		size += len(structured)
	}
	if size <= max {
		return res
	}
	budget := max
	// The preview digest stays behind: a cut preview gets no ticket.
	out := &mcp.CallToolResult{IsError: res.IsError}
	note := fmt.Sprintf("[toolgate: truncated: the result had %d bytes, over the gateway's cap of %d; narrow the request]", size, max)
	for _, c := range res.Content {
		t, ok := c.(mcp.TextContent)
		if !ok {
			continue
		}
		keep := budget / 2
		if len(t.Text) > keep {
			t.Text = truncate.String(t.Text, keep) + "\n" + note
		}
		budget -= len(t.Text)
		out.Content = append(out.Content, t)
		if budget <= 0 {
			break
		}
	}
	if len(out.Content) == 0 {
		out.Content = []mcp.Content{mcp.NewTextContent(note)}
	}
	if structured != nil {
		out.StructuredContent = map[string]any{"truncated": true, "total_bytes": size, "note": note}
	}
	return out
}
