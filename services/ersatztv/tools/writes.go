package tools

import (
	"context"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

// Annotations of the writes. Deletes and the playout reset lose what no
// preview can give back (a reset rebuilds the channel's schedule), so they
// are destructive and need a person; an update's preview shows every old
// value it replaces, so it is not.
var (
	creates     = toolkit.Annotations{OpenWorld: true}
	updates     = toolkit.Annotations{Idempotent: true, OpenWorld: true}
	destructive = toolkit.Annotations{Destructive: true, Idempotent: true, OpenWorld: true}
	resets      = toolkit.Annotations{Destructive: true, OpenWorld: true}
)

// Plan is a write's preview: what it acts on, the exact request the
// confirm sends and, for updates, the field-by-field diff. The confirm
// recomputes it from ErsatzTV and sends its Request only if it still
// equals what the user approved.
type Plan struct {
	Action  string   `json:"action"`
	Target  any      `json:"target,omitempty"`
	Changes []Change `json:"changes,omitempty"`
	// Kept lists the fields the complete request carries unchanged.
	Kept    []string `json:"kept,omitempty"`
	Request Request  `json:"request"`
	Notes   []string `json:"notes,omitempty"`
	// Queued, when set, says that ErsatzTV's answer only means the job was
	// queued, and what that leaves open; the result then reports the
	// action as queued, not done.
	Queued string `json:"-"`
	// Extra holds a preview's own facts (add_collection_items: which ids
	// exist and which are new).
	Extra map[string]any `json:"details,omitempty"`
}

// Request is the one request a confirm sends.
type Request struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	IfMatch string `json:"ifMatch,omitempty"`
	Body    any    `json:"body,omitempty"`
	segs    []string
}

// Change is one field whose value the write replaces.
type Change struct {
	Field string `json:"field"`
	From  any    `json:"from"`
	To    any    `json:"to"`
}

func (s *Service) request(method string, body any, segs ...string) Request {
	return Request{Method: method, Path: s.c.Mode().Base() + "/" + strings.Join(segs, "/"), Body: body, segs: segs}
}

// writeTool is a tool whose preview builds a Plan and whose confirm sends
// the Plan's request and nothing else.
func writeTool[In any](s *Service, name, description string, ann toolkit.Annotations, preview func(context.Context, In) (Plan, error)) toolkit.Tool {
	return toolkit.Tool{Name: name, Description: description, Annotations: ann,
		Handler: toolkit.WriteFor(preview, func(ctx context.Context, _ In, p Plan) (any, error) { return s.send(ctx, p) })}
}

// send performs a plan's request and reports ErsatzTV's answer.
func (s *Service) send(ctx context.Context, p Plan) (any, error) {
	r := p.Request
	resp, err := s.c.Do(ctx, client.Request{Method: r.Method, Path: r.segs, Body: r.Body, IfMatch: r.IfMatch})
	if err != nil {
		return nil, err
	}
	out := map[string]any{"done": p.Action, "status": resp.Status}
	if p.Queued != "" {
		out = map[string]any{"queued": p.Action, "status": resp.Status, "note": p.Queued}
	}
	if v, err := client.Decode(resp.Body); err == nil && v != nil {
		out["answer"] = v
	}
	if resp.ETag != "" {
		out["etag"] = resp.ETag
	}
	return out, nil
}

func (s *Service) v1Writes() []toolkit.Tool {
	var out []toolkit.Tool
	out = append(out, s.collectionWrites()...)
	out = append(out, s.smartCollectionWrites()...)
	out = append(out, s.scheduleWrites()...)
	out = append(out, s.playoutWrites()...)
	out = append(out, s.channelWrites()...)
	out = append(out, s.libraryWrites()...)
	return out
}

func (s *Service) legacyWrites() []toolkit.Tool {
	return append(s.smartCollectionWrites(), s.legacyReset(), s.scanLibrary())
}

// nothingChanges refuses a write whose complete request equals the
// current state: there is nothing to confirm.
func nothingChanges(what string) error {
	return toolerr.New(toolerr.InvalidArgument, "nothing would change: %s already has these values", what)
}
