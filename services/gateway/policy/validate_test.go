package policy

import (
	"errors"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
)

func TestValidate(t *testing.T) {
	ok := Decision{Decision: Confirm, Reason: "write needs confirmation", Approval: approval.Human, TTLSeconds: 600}
	tests := []struct {
		name  string
		d     Decision
		valid bool
	}{
		{"confirm", ok, true},
		{"allow", Decision{Decision: Allow, Reason: "read allowed", Approval: approval.Model}, true},
		{"deny", Decision{Decision: Deny, Reason: "unknown tool", Approval: approval.Model}, true},
		{"zero", Decision{}, false},
		{"unknown decision", withDecision(ok, func(d *Decision) { d.Decision = "maybe" }), false},
		{"decision case matters", withDecision(ok, func(d *Decision) { d.Decision = "ALLOW" }), false},
		{"unknown approval", withDecision(ok, func(d *Decision) { d.Approval = "admin" }), false},
		{"empty approval", withDecision(ok, func(d *Decision) { d.Approval = "" }), false},
		{"empty reason", withDecision(ok, func(d *Decision) { d.Reason = "" }), false},
		{"negative ttl", withDecision(ok, func(d *Decision) { d.TTLSeconds = -1 }), false},
		{"confirm without ttl", withDecision(ok, func(d *Decision) { d.TTLSeconds = 0 }), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.d)
			if tc.valid && err != nil {
				t.Errorf("Validate(%+v) = %v, want nil", tc.d, err)
			}
			if !tc.valid && !errors.Is(err, ErrInvalidDecision) {
				t.Errorf("Validate(%+v) = %v, want ErrInvalidDecision", tc.d, err)
			}
		})
	}
}

func withDecision(d Decision, f func(*Decision)) Decision {
	f(&d)
	return d
}
