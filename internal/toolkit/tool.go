// Package toolkit is the scaffold every toolgate tool service is built on:
// strict tool registration, argument validation before any upstream request,
// structured results with stable error codes, redaction, a response byte cap,
// the preview/apply split for writes with verification of the gateway's
// signed approvals, and the HTTP server with /mcp, /healthz and /readyz.
// A service supplies its domain code as Tools; the toolkit does the rest.
package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Annotations are the MCP behaviour hints of a tool. Every tool states all
// four explicitly; mcp-go's defaults (destructive, open-world) are never used.
type Annotations struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Args are a call's arguments as the client sent them, already validated
// against the tool's schema.
type Args struct{ raw json.RawMessage }

// NewArgs wraps raw JSON arguments; an empty value means {}.
func NewArgs(raw json.RawMessage) Args {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	return Args{raw: raw}
}

// Raw returns the arguments as JSON.
func (a Args) Raw() json.RawMessage { return a.raw }

// Decode unmarshals the arguments into v (typically a struct with json tags).
func (a Args) Decode(v any) error {
	if err := json.Unmarshal(a.raw, v); err != nil {
		return toolerr.Wrap(toolerr.InvalidArgument, err, "arguments do not match the tool's parameters")
	}
	return nil
}

// ReadFunc answers a read-only tool call. Its result must marshal to JSON.
type ReadFunc func(ctx context.Context, args Args) (any, error)

// Write is the two halves of a write tool.
type Write struct {
	// Preview has no side effects: it re-reads the upstream, narrows the
	// scope and returns exactly what Apply would do. Its result must be
	// deterministic for an unchanged upstream, because Apply recomputes it
	// and refuses when it differs from what the user approved.
	Preview func(ctx context.Context, args Args) (any, error)
	// Apply performs the write described by preview (freshly recomputed and
	// checked against the approved digest).
	Apply func(ctx context.Context, args Args, preview any) (any, error)
}

// Tool is one MCP tool of a service.
type Tool struct {
	// Name starts with the service's prefix (sonarr_, ha_, …).
	Name        string
	Title       string
	Description string
	Annotations Annotations
	// Timeout overrides the service's per-call deadline (e.g. for slow
	// indexer searches). Zero means the default.
	Timeout time.Duration
	// MaxConcurrent bounds this tool's calls in flight (e.g. searches
	// that load an application's indexers); one more answers busy at once.
	// Zero means only the service's bound.
	MaxConcurrent int
	// Handler is the tool's body, typed: ReadFor or WriteFor. The
	// arguments' schema is derived from its input type (see InputSchema).
	Handler *Handler

	// Schema, Read and Write are the untyped form, for a tool whose
	// schema comes from elsewhere (a relay mirroring another MCP server's
	// tools); every other tool uses Handler. Schema is the strict JSON
	// Schema of the arguments (an object with additionalProperties false),
	// and exactly one of Read and Write is set.
	Schema json.RawMessage
	Read   ReadFunc
	Write  *Write
}

// IsWrite reports whether the tool changes anything upstream.
func (t Tool) IsWrite() bool {
	if t.Handler != nil {
		return t.Handler.write
	}
	return t.Write != nil
}

func (t Tool) check() error {
	if t.Handler != nil {
		switch {
		case t.Read != nil || t.Write != nil:
			return fmt.Errorf("tool %s sets Handler and Read or Write", t.Name)
		case len(t.Schema) > 0:
			return fmt.Errorf("tool %s sets Handler and Schema; the schema comes from the handler's input type", t.Name)
		case t.Handler.err != nil:
			return fmt.Errorf("tool %s: %w", t.Name, t.Handler.err)
		}
	}
	kinds := 0
	for _, set := range []bool{t.Read != nil, t.Write != nil, t.Handler != nil} {
		if set {
			kinds++
		}
	}
	switch {
	case t.Name == "":
		return errors.New("tool has no name")
	case t.Description == "":
		return fmt.Errorf("tool %s has no description", t.Name)
	case kinds != 1:
		return fmt.Errorf("tool %s must set exactly one of Handler, Read and Write", t.Name)
	case t.Write != nil && (t.Write.Preview == nil || t.Write.Apply == nil):
		return fmt.Errorf("write tool %s needs Preview and Apply", t.Name)
	case t.IsWrite() && t.Annotations.ReadOnly:
		return fmt.Errorf("write tool %s is annotated read-only", t.Name)
	case !t.IsWrite() && !t.Annotations.ReadOnly:
		return fmt.Errorf("read tool %s must be annotated read-only", t.Name)
	case t.MaxConcurrent < 0:
		return fmt.Errorf("tool %s has a negative MaxConcurrent", t.Name)
	}
	return nil
}

// body is a tool's handler in the one form the call path runs.
type body struct {
	read    func(ctx context.Context, args Args) (any, error)
	preview func(ctx context.Context, args Args) (any, error)
	// apply recomputes the preview, lets approve check it against the
	// approved digest, and applies that same preview.
	apply func(ctx context.Context, args Args, approve func(preview any) error) (any, error)
}

func (t Tool) body() body {
	switch {
	case t.Handler != nil:
		return t.Handler.body
	case t.Read != nil:
		return body{read: t.Read}
	}
	w := t.Write
	return body{
		preview: w.Preview,
		apply: func(ctx context.Context, args Args, approve func(any) error) (any, error) {
			p, err := w.Preview(ctx, args)
			if err != nil {
				return nil, err
			}
			if err := approve(p); err != nil {
				return nil, err
			}
			return w.Apply(ctx, args, p)
		},
	}
}
