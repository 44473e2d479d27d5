package router

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// The preview of a write, as the service answers it and as the gateway
// checks it before issuing a ticket.

// previewResult is a checked preview from a service.
type previewResult struct {
	body   json.RawMessage
	digest string
	facts  approval.Facts
}

// previewed forwards the call without an approval, so the service runs
// its Preview, and checks what comes back: not cut by a cap, with a
// digest, and with facts of the allowed shape if it reports any.
func (r *Router) previewed(ctx context.Context, c *call) (previewResult, *mcp.CallToolResult, string) {
	res, outcome := r.forward(ctx, c, nil, false)
	if res.IsError {
		return previewResult{}, res, outcome
	}
	if toolkit.Truncated(res) {
		return previewResult{}, errTruncatedPreview(), string(toolerr.TooLarge)
	}
	digest := previewDigest(res)
	if digest == "" {
		return previewResult{}, errorResult(toolerr.New(toolerr.UpstreamUnavailable, "service %s returned a preview without a digest; refusing to issue a ticket", c.e.Service)), string(toolerr.UpstreamUnavailable)
	}
	facts, err := previewFacts(res)
	if err != nil {
		r.log.Warn("preview facts refused", "service", c.e.Service, "tool", c.e.Upstream.Name, "error", err)
		return previewResult{}, errorResult(toolerr.Wrap(toolerr.UpstreamUnavailable, err, "service %s reported malformed preview facts; nothing was changed and no ticket was issued", c.e.Service)), string(toolerr.UpstreamUnavailable)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		raw = nil
	}
	return previewResult{body: previewBody(raw), digest: digest, facts: facts}, nil, ""
}

// previewFacts takes the preview's facts out of its _meta and checks their
// shape; none is nil.
func previewFacts(res *mcp.CallToolResult) (approval.Facts, error) {
	if res.Meta == nil {
		return nil, nil
	}
	v, ok := res.Meta.AdditionalFields[approval.MetaPreviewFacts]
	if !ok || v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", approval.ErrFacts, err)
	}
	return approval.ParseFacts(raw)
}

// previewBody takes the service's preview out of its structured content
// (as json.Marshal wrote it): its "preview" member, else all of it.
func previewBody(structured []byte) json.RawMessage {
	if structured == nil {
		return nil
	}
	var wrapper struct {
		Preview json.RawMessage `json:"preview"`
	}
	if json.Unmarshal(structured, &wrapper) == nil && len(wrapper.Preview) > 0 {
		return wrapper.Preview
	}
	return structured
}

// errTruncatedPreview answers a preview cut by a result cap (the service's
// or the gateway's): nobody saw all of it, so nobody can consent to it.
// Whatever digest came with it is ignored.
func errTruncatedPreview() *mcp.CallToolResult {
	return errorResult(toolerr.New(toolerr.TooLarge,
		"the preview is too large to show; narrow the request (fewer items, filters) — nothing was changed and no ticket was issued"))
}

func previewDigest(res *mcp.CallToolResult) string {
	if res.Meta == nil {
		return ""
	}
	d, _ := res.Meta.AdditionalFields[approval.MetaPreviewDigest].(string)
	return d
}
