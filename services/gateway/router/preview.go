package router

import (
	"bytes"
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
	var res *mcp.CallToolResult
	var outcome string
	if rc, ok := r.backends[c.e.Service].(rawCaller); ok {
		// The canonical arguments in one plain POST on the session, as
		// for a read, instead of a round through mcp-go's client (which
		// hands the answer over between goroutines).
		ctx, cancel := context.WithTimeout(ctx, r.cfg.CallTimeout)
		defer cancel()
		raw, err := rc.CallRaw(ctx, c.e.Upstream.Name, c.canonical, false)
		if err != nil {
			r.cat.NoticeFailure(c.e.Service, err)
			return previewResult{}, errorResult(err), string(toolerr.CodeOf(err))
		}
		if p, ok := plainPreview(raw, r.cfg.MaxResultBytes); ok {
			return p, nil, ""
		}
		res, outcome = r.decodeRaw(c, raw)
	} else {
		res, outcome = r.forward(ctx, c, nil, false)
	}
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

// plainPreview reads the common preview — a success within the cap, not a
// truncation stand-in, with a digest and facts that check out — from the
// service's result object without decoding it into mcp-go's types. What
// it returns is what the decoding way makes of the same bytes; anything
// else (ok false) takes that way, which also words every refusal.
func plainPreview(raw json.RawMessage, max int) (previewResult, bool) {
	p, ok := passthrough(raw, max)
	if !ok || p.isError {
		return previewResult{}, false
	}
	var res struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return previewResult{}, false
	}
	var digest string
	if json.Unmarshal(res.Meta[approval.MetaPreviewDigest], &digest) != nil || digest == "" {
		return previewResult{}, false
	}
	var facts approval.Facts
	if f := res.Meta[approval.MetaPreviewFacts]; len(f) > 0 && string(f) != "null" {
		// As mcp-go decodes _meta (numbers as float64) and previewFacts
		// encodes it again.
		var v any
		if json.Unmarshal(f, &v) != nil {
			return previewResult{}, false
		}
		enc, err := json.Marshal(v)
		if err != nil {
			return previewResult{}, false
		}
		if facts, err = approval.ParseFacts(enc); err != nil {
			return previewResult{}, false
		}
	}
	// json.Marshal of the structured content as it came: compacted, HTML
	// characters escaped.
	var structured bytes.Buffer
	if p.structured == nil {
		structured.WriteString("null")
	} else if json.Compact(&structured, p.structured) != nil {
		return previewResult{}, false
	}
	var escaped bytes.Buffer
	json.HTMLEscape(&escaped, structured.Bytes())
	var trunc struct {
		Truncated bool `json:"truncated"`
	}
	if json.Unmarshal(escaped.Bytes(), &trunc) != nil || trunc.Truncated {
		return previewResult{}, false
	}
	return previewResult{body: previewBody(escaped.Bytes()), digest: digest, facts: facts}, true
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
