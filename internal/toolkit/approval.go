package toolkit

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
)

func (s *Service) preview(ctx context.Context, e *entry, args Args) (any, map[string]any, error) {
	p, err := e.body.preview(ctx, args)
	if err != nil {
		return nil, nil, err
	}
	digest, facts, err := previewDigest(p)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]any{"status": "preview", "preview": p}
	meta := map[string]any{approval.MetaPreviewDigest: digest}
	if facts != nil {
		meta[approval.MetaPreviewFacts] = facts
	}
	return out, meta, nil
}

// previewDigest digests a preview and, when it reports facts, the facts
// with it: the gateway decides on the facts, so an apply whose recomputed
// facts differ must be refused exactly like a changed preview.
func previewDigest(p any) (string, approval.Facts, error) {
	var facts approval.Facts
	if r, ok := p.(approval.FactsReporter); ok {
		if f := r.PreviewFacts(); f != nil {
			if err := f.Validate(); err != nil {
				return "", nil, fmt.Errorf("preview facts: %w", err)
			}
			facts = f.Normalized()
		}
	}
	var v any = p
	if facts != nil {
		v = map[string]any{"preview": p, "facts": facts}
	}
	d, err := approval.Digest(v)
	if err != nil {
		return "", nil, fmt.Errorf("digest preview: %w", err)
	}
	return d, facts, nil
}

func (s *Service) apply(ctx context.Context, e *entry, args Args, token string) (any, error) {
	argsDigest, err := approval.Digest(args.Raw())
	if err != nil {
		return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "arguments cannot be digested")
	}
	a, err := s.verifier.Verify(token, s.opts.Name, e.tool.Name, argsDigest)
	if err != nil {
		return nil, approvalError(err)
	}
	out, err := e.body.apply(ctx, args, func(p any) error {
		// An approval without a preview digest binds no scope; refusing
		// it keeps "apply exactly what was previewed" true whatever the
		// signer sent.
		d, _, err := previewDigest(p)
		if err != nil {
			return err
		}
		if a.PreviewDigest == "" || d != a.PreviewDigest {
			return toolerr.New(toolerr.Forbidden,
				"the scope changed since the preview was approved; nothing was changed — request a new preview")
		}
		s.log.Info("apply", "tool", e.tool.Name, "ticket", a.TicketID)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"status": "applied", "result": out}, nil
}

func approvalError(err error) error {
	switch {
	case errors.Is(err, approval.ErrReplayed):
		return toolerr.Wrap(toolerr.Forbidden, err, "this approval was already used; nothing was changed")
	case errors.Is(err, approval.ErrExpired):
		return toolerr.Wrap(toolerr.Forbidden, err, "the approval has expired; nothing was changed — request a new preview")
	case errors.Is(err, approval.ErrMismatch):
		return toolerr.Wrap(toolerr.Forbidden, err, "the approval does not match this call; nothing was changed")
	case errors.Is(err, approval.ErrFull):
		return toolerr.Wrap(toolerr.Busy, err, "too many approvals in flight; try again shortly")
	default:
		return toolerr.Wrap(toolerr.Forbidden, err, "the approval is not valid; nothing was changed")
	}
}

func approvalToken(req mcp.CallToolRequest) string {
	if req.Params.Meta == nil {
		return ""
	}
	t, _ := req.Params.Meta.AdditionalFields[approval.MetaApproval].(string)
	return t
}
