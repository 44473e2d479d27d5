package policy

import (
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
)

// Stricter is how the gateway combines a write's decision before and after
// its preview's facts: the result is never less strict than either.
func TestStricterNeverLowers(t *testing.T) {
	allow := Decision{Decision: Allow, Approval: approval.Model, Reason: "a"}
	model := Decision{Decision: Confirm, Approval: approval.Model, Reason: "m", TTLSeconds: 600}
	human := Decision{Decision: Confirm, Approval: approval.Human, Reason: "h", TTLSeconds: 600}
	deny := Decision{Decision: Deny, Approval: approval.Model, Reason: "d"}
	order := []Decision{allow, model, human, deny}
	for i, a := range order {
		for j, b := range order {
			want := a
			if j > i {
				want = b
			}
			if got := Stricter(a, b); got != want {
				t.Errorf("Stricter(%s/%s, %s/%s) = %s/%s", a.Decision, a.Approval, b.Decision, b.Approval, got.Decision, got.Approval)
			}
		}
	}
	if got := Stricter(allow, Decision{Decision: "maybe"}); got.Decision != "maybe" {
		t.Errorf("a malformed decision must not lose to allow: %+v", got)
	}
}
