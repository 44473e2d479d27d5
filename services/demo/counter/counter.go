// Package counter is the demo service's domain: an in-memory counter and a
// note, with one tool of every kind the gateway treats differently (a read,
// a write that needs the user's confirmation, a destructive write that needs
// a person's approval, and a low-risk write the policy allows outright).
package counter

import (
	"context"
	"encoding/json"
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

type amountArgs struct {
	Amount int64 `json:"amount"`
}

// Tools lists the demo tools.
func (s *State) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		{
			Name:        "demo_echo",
			Title:       "Echo",
			Description: "Return the given text unchanged. Use it to check that the tool connection works.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","minLength":1,"maxLength":500,"description":"Text to echo."}},"required":["text"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Read: func(_ context.Context, a toolkit.Args) (any, error) {
				var in struct {
					Text string `json:"text"`
				}
				if err := a.Decode(&in); err != nil {
					return nil, err
				}
				return map[string]any{"text": in.Text}, nil
			},
		},
		{
			Name:        "demo_counter_get",
			Title:       "Read the counter",
			Description: "Return the demo counter's value and the note.",
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
			Read: func(context.Context, toolkit.Args) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				out := map[string]any{"value": s.value, "note": s.note}
				if !s.touched.IsZero() {
					out["note_touched_at"] = s.touched.UTC().Format(time.RFC3339)
				}
				return out, nil
			},
		},
		{
			Name:        "demo_counter_add",
			Title:       "Add to the counter",
			Description: "Add an amount (1-100) to the demo counter. A write: previewed, then confirmed with a ticket.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1,"maximum":100,"description":"How much to add."}},"required":["amount"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{},
			Write: &toolkit.Write{
				Preview: func(_ context.Context, a toolkit.Args) (any, error) {
					var in amountArgs
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					cur := s.Value()
					return map[string]any{"action": "add", "amount": in.Amount, "current": cur, "new": cur + in.Amount}, nil
				},
				Apply: func(_ context.Context, a toolkit.Args, _ any) (any, error) {
					var in amountArgs
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					s.mu.Lock()
					defer s.mu.Unlock()
					s.value += in.Amount
					return map[string]any{"value": s.value}, nil
				},
			},
		},
		{
			Name:        "demo_counter_reset",
			Title:       "Reset the counter",
			Description: "Reset the demo counter to zero. Destructive: a person must approve the ticket outside the chat.",
			Schema:      json.RawMessage(`{"type":"object","additionalProperties":false}`),
			Annotations: toolkit.Annotations{Destructive: true, Idempotent: true},
			Write: &toolkit.Write{
				Preview: func(context.Context, toolkit.Args) (any, error) {
					cur := s.Value()
					if cur == 0 {
						return nil, toolerr.New(toolerr.InvalidArgument, "the counter is already zero; nothing to reset")
					}
					return map[string]any{"action": "reset", "current": cur, "new": 0}, nil
				},
				Apply: func(context.Context, toolkit.Args, any) (any, error) {
					s.mu.Lock()
					defer s.mu.Unlock()
					s.value = 0
					return map[string]any{"value": 0}, nil
				},
			},
		},
		{
			Name:        "demo_note_touch",
			Title:       "Set the note",
			Description: "Replace the demo note. Low-risk: the default policy allows it without a ticket.",
			Schema:      json.RawMessage(`{"type":"object","properties":{"note":{"type":"string","maxLength":200}},"required":["note"],"additionalProperties":false}`),
			Annotations: toolkit.Annotations{Idempotent: true},
			Write: &toolkit.Write{
				Preview: func(_ context.Context, a toolkit.Args) (any, error) {
					var in struct {
						Note string `json:"note"`
					}
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					s.mu.Lock()
					defer s.mu.Unlock()
					return map[string]any{"action": "set_note", "old": s.note, "new": in.Note}, nil
				},
				Apply: func(_ context.Context, a toolkit.Args, _ any) (any, error) {
					var in struct {
						Note string `json:"note"`
					}
					if err := a.Decode(&in); err != nil {
						return nil, err
					}
					s.mu.Lock()
					defer s.mu.Unlock()
					s.note, s.touched = in.Note, s.now()
					return map[string]any{"note": s.note}, nil
				},
			},
		},
	}
}
