package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/internal/toolerr"
)

func (s *Service) handle(e *entry) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, mode, err := s.safeCall(ctx, e, req)
		code := "ok"
		if err != nil {
			code = string(toolerr.CodeOf(err))
			if code == string(toolerr.Internal) {
				// Causes stay in the log, never in the result; redact
				// them all the same.
				s.log.Error("tool failed", "tool", e.tool.Name, "mode", mode, "error", s.opts.Redactor.String(err.Error()))
			}
			res = s.failure(err)
		}
		s.log.Info("call", "tool", e.tool.Name, "mode", mode, "outcome", code, "duration_ms", time.Since(start).Milliseconds())
		return res, nil
	}
}

// safeCall runs call and turns a panic into an internal error. mcp-go's own
// recovery would put the panic value (which may quote upstream data or a
// secret) into the JSON-RPC error message.
func (s *Service) safeCall(ctx context.Context, e *entry, req mcp.CallToolRequest) (res *mcp.CallToolResult, mode string, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("tool %s panicked: %v", e.tool.Name, p)
			if mode == "" {
				mode = "panic"
			}
		}
	}()
	return s.call(ctx, e, req)
}

// failure is Failure with the client-safe message passed through the
// redactor too: it may quote an argument or an upstream name.
func (s *Service) failure(err error) *mcp.CallToolResult {
	return Failure(&toolerr.Error{Code: toolerr.CodeOf(err), Message: s.opts.Redactor.String(toolerr.MessageOf(err))})
}

func (s *Service) call(ctx context.Context, e *entry, req mcp.CallToolRequest) (*mcp.CallToolResult, string, error) {
	raw := req.Params.RawArguments
	if len(raw) == 0 && req.Params.Arguments != nil {
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return nil, "read", toolerr.Wrap(toolerr.InvalidArgument, err, "arguments are not a JSON object")
		}
		raw = b
	}
	if err := e.validator.Validate(raw); err != nil {
		return nil, "validate", err
	}
	args := NewArgs(raw)
	timeout := s.opts.CallTimeout
	if e.tool.Timeout > 0 {
		timeout = e.tool.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	release, err := s.acquire(e)
	if err != nil {
		return nil, "limit", err
	}
	defer release()

	var (
		out  any
		meta map[string]any
		mode = "read"
	)
	switch token := approvalToken(req); {
	case e.body.read != nil:
		out, err = e.body.read(ctx, args)
	case token == "":
		mode = "preview"
		out, meta, err = s.preview(ctx, e, args)
	default:
		mode = "apply"
		out, err = s.apply(ctx, e, args, token)
	}
	if err != nil {
		return nil, mode, timeoutAware(ctx, err)
	}
	img, isImage := out.(*Image)
	if v, ok := out.(Image); ok {
		img, isImage = &v, true
	}
	if isImage {
		out = img.Details
	}
	generic, size, err := toGeneric(out)
	if err != nil {
		return nil, mode, err
	}
	if !isImage {
		if err := s.checkSize(size); err != nil {
			return nil, mode, err
		}
	}
	res, err := Success(s.opts.Redactor.Value(generic), s.opts.MaxResultBytes)
	if err == nil && isImage {
		res, err = withImage(res, img, s.opts.MaxResultBytes)
	}
	if err != nil {
		return nil, mode, err
	}
	// A preview cut by the cap was seen by nobody in full: without its
	// digest the gateway issues no ticket for it and applies nothing.
	if meta != nil && !Truncated(res) {
		res.Meta = &mcp.Meta{AdditionalFields: meta}
	}
	return res, mode, nil
}

func timeoutAware(ctx context.Context, err error) error {
	var te *toolerr.Error
	if errors.As(err, &te) {
		return err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return toolerr.Wrap(toolerr.Timeout, err, "the call took longer than its deadline")
	}
	return err
}

// toGeneric turns a handler's result into plain JSON values so redaction
// sees every key, whatever Go type the handler returned.
// It also returns the JSON, whose size Limits.MaxResultBytes bounds.
func toGeneric(v any) (any, []byte, error) {
	data, err := marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("encode result: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, nil, fmt.Errorf("decode result: %w", err)
	}
	return out, data, nil
}
