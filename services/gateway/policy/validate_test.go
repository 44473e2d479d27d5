package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
)

func TestValidate(t *testing.T) {
	ok := Decision{Decision: Confirm, Reason: "write needs confirmation", ReasonID: "needs_confirmation", Approval: approval.Human, TTLSeconds: 600}
	tests := []struct {
		name  string
		d     Decision
		valid bool
	}{
		{"confirm", ok, true},
		{"allow", Decision{Decision: Allow, Reason: "read allowed", ReasonID: "read", Approval: approval.Model}, true},
		{"deny", Decision{Decision: Deny, Reason: "unknown tool", ReasonID: "unknown_tool", Approval: approval.Model}, true},
		{"zero", Decision{}, false},
		{"unknown decision", withDecision(ok, func(d *Decision) { d.Decision = "maybe" }), false},
		{"decision case matters", withDecision(ok, func(d *Decision) { d.Decision = "ALLOW" }), false},
		{"unknown approval", withDecision(ok, func(d *Decision) { d.Approval = "admin" }), false},
		{"empty approval", withDecision(ok, func(d *Decision) { d.Approval = "" }), false},
		{"empty reason", withDecision(ok, func(d *Decision) { d.Reason = "" }), false},
		{"empty reason id", withDecision(ok, func(d *Decision) { d.ReasonID = "" }), false},
		{"reason id with a fact", withDecision(ok, func(d *Decision) { d.ReasonID = "needs_person:cover.garage" }), true},
		{"reason id upper case", withDecision(ok, func(d *Decision) { d.ReasonID = "Read" }), false},
		{"reason id with a space", withDecision(ok, func(d *Decision) { d.ReasonID = "needs person" }), false},
		{"reason id with markup", withDecision(ok, func(d *Decision) { d.ReasonID = "needs_person:<b>" }), false},
		{"reason id with two colons", withDecision(ok, func(d *Decision) { d.ReasonID = "a:b:c" }), false},
		{"reason id too long", withDecision(ok, func(d *Decision) { d.ReasonID = "needs_person:" + strings.Repeat("x", 60) }), false},
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
