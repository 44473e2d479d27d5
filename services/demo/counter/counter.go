// Package counter is the demo service's domain: an in-memory counter and a
// note, with one tool of every kind the gateway treats differently (a read,
// a write that needs the user's confirmation, a destructive write that needs
// a person's approval, and a low-risk write the policy allows outright).
package counter

import (
	"context"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// Module provides the demo tools.
var Module = fx.Module("counter",
	fx.Provide(New),
	toolkit.ProvideTools((*State).Tools),
)

// State is the demo's upstream: what a real service would read from an API.
type State struct {
	mu      sync.Mutex
	value   int64
	note    string
	touched time.Time
	now     func() time.Time
}

// New returns a zeroed state.
func New() *State { return &State{now: time.Now} }

// Value returns the counter.
func (s *State) Value() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.value
}

// The tools' arguments: the toolkit derives each tool's strict schema from
// these types and hands the handlers decoded values.
type (
	echoArgs struct {
		Text string `json:"text" jsonschema:"Text to echo." schema:"minLength=1,maxLength=500"`
	}
	amountArgs struct {
		Amount int64 `json:"amount" jsonschema:"How much to add." schema:"minimum=1,maximum=100"`
	}
	noteArgs struct {
		Note string `json:"note" schema:"maxLength=200"`
	}
)

// The writes' previews: exactly what Apply will do. The toolkit digests
// them, and Apply receives the same value, recomputed and checked against
// what the user approved.
type (
	counterChange struct {
		Action  string `json:"action"`
		Amount  int64  `json:"amount,omitempty"`
		Current int64  `json:"current"`
		New     int64  `json:"new"`
	}
	noteChange struct {
		Action string `json:"action"`
		Old    string `json:"old"`
		New    string `json:"new"`
	}
)

// Tools lists the demo tools.
func (s *State) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		{
			Name:        "demo_echo",
			Title:       "Echo",
			Description: "Return the given text unchanged. Use it to check that the tool connection works.",
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Handler: toolkit.ReadFor(func(_ context.Context, in echoArgs) (any, error) {
				return map[string]any{"text": in.Text}, nil
			}),
		},
		{
			Name:        "demo_counter_get",
			Title:       "Read the counter",
			Description: "Return the demo counter's value and the note.",
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Handler: toolkit.ReadFor(func(context.Context, toolkit.NoArgs) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				out := map[string]any{"value": s.value, "note": s.note}
				if !s.touched.IsZero() {
					out["note_touched_at"] = s.touched.UTC().Format(time.RFC3339)
				}
				return out, nil
			}),
		},
		{
			Name:        "demo_counter_add",
			Title:       "Add to the counter",
			Description: "Add an amount (1-100) to the demo counter. A write: previewed, then confirmed with a ticket.",
			Annotations: toolkit.Annotations{},
			Handler: toolkit.WriteFor(
				func(_ context.Context, in amountArgs) (counterChange, error) {
					cur := s.Value()
					return counterChange{Action: "add", Amount: in.Amount, Current: cur, New: cur + in.Amount}, nil
				},
				func(_ context.Context, in amountArgs, _ counterChange) (any, error) {
					s.mu.Lock()
					defer s.mu.Unlock()
					s.value += in.Amount
					return map[string]any{"value": s.value}, nil
				}),
		},
		{
			Name:        "demo_counter_reset",
			Title:       "Reset the counter",
			Description: "Reset the demo counter to zero. Destructive: a person must approve the ticket outside the chat.",
			Annotations: toolkit.Annotations{Destructive: true, Idempotent: true},
			Handler: toolkit.WriteFor(
				func(context.Context, toolkit.NoArgs) (counterChange, error) {
					cur := s.Value()
					if cur == 0 {
						return counterChange{}, toolerr.New(toolerr.InvalidArgument, "the counter is already zero; nothing to reset")
					}
					return counterChange{Action: "reset", Current: cur, New: 0}, nil
				},
				func(context.Context, toolkit.NoArgs, counterChange) (any, error) {
					s.mu.Lock()
					defer s.mu.Unlock()
					s.value = 0
					return map[string]any{"value": 0}, nil
				}),
		},
		{
			Name:        "demo_note_touch",
			Title:       "Set the note",
			Description: "Replace the demo note. Low-risk: the default policy allows it without a ticket.",
			Annotations: toolkit.Annotations{Idempotent: true},
			Handler: toolkit.WriteFor(
				func(_ context.Context, in noteArgs) (noteChange, error) {
					s.mu.Lock()
					defer s.mu.Unlock()
					return noteChange{Action: "set_note", Old: s.note, New: in.Note}, nil
				},
				func(_ context.Context, _ noteArgs, p noteChange) (any, error) {
					s.mu.Lock()
					defer s.mu.Unlock()
					s.note, s.touched = p.New, s.now()
					return map[string]any{"note": s.note}, nil
				}),
		},
	}
}
