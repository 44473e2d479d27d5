// Package policy asks toolgate's Rego policy (data.toolgate.authz.decision)
// whether a client may call or see a tool. Two engines give the same
// answers: Embedded evaluates the Rego inside the gateway, Remote asks an OPA
// sidecar over HTTP. Any error or malformed answer must make the caller deny.
package policy

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
)

// Decision values.
const (
	Allow   = "allow"
	Deny    = "deny"
	Confirm = "confirm"
)

// Actions the gateway asks about.
const (
	// ActionCall is a tools/call.
	ActionCall = "call"
	// ActionList asks whether a tool may be shown in tools/list.
	ActionList = "list"
)

// Query is the policy document both engines evaluate.
const Query = "data.toolgate.authz.decision"

// Errors returned by the engines, for errors.Is. Every one of them means
// "deny".
var (
	// ErrUnavailable: the OPA sidecar could not be reached or did not answer 200.
	ErrUnavailable = errors.New("policy engine unavailable")
	// ErrBadResponse: the sidecar's answer was too large or not the expected JSON.
	ErrBadResponse = errors.New("malformed policy response")
	// ErrUndefined: the policy produced no decision for the input.
	ErrUndefined = errors.New("policy decision undefined")
	// ErrInvalidDecision: the decision has an unknown value or an inconsistent shape.
	ErrInvalidDecision = errors.New("invalid policy decision")
	// ErrEvaluation: the embedded engine failed to evaluate the policy.
	ErrEvaluation = errors.New("policy evaluation failed")
)

// Client is the authenticated caller.
type Client struct {
	Name   string   `json:"name"`
	Groups []string `json:"groups"`
}

// Annotations are the MCP tool annotations the service declared.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// Ticket describes the preview ticket presented with a call.
type Ticket struct {
	// State is "none" or "valid".
	State string `json:"state"`
	// Force is the ticket's force flag; forced writes need a person.
	Force bool `json:"force"`
}

// Input is the policy input document. Its JSON form is what the OPA sidecar
// receives; the embedded engine builds the identical value directly.
type Input struct {
	Action string `json:"action"`
	Client Client `json:"client"`
	User   string `json:"user"`
	// UserRole is the end user's role from a verified user token (OpenWebUI:
	// admin, user, pending); "" when the client's end user is unverified.
	UserRole    string         `json:"user_role"`
	Service     string         `json:"service"`
	Tool        string         `json:"tool"`
	Write       bool           `json:"write"`
	Annotations Annotations    `json:"annotations"`
	Args        map[string]any `json:"args"`
	Ticket      Ticket         `json:"ticket"`
	// Time is encoded as RFC 3339 (with fractional seconds when present).
	Time      time.Time `json:"time"`
	Transport string    `json:"transport"`
	// Preview is set only when the policy is asked about a write whose
	// preview has run: after the preview (before a ticket is issued or a
	// low-risk write applied) and on its confirm. Absent, the preview has
	// not run yet. The gateway keeps the stricter of the decisions with
	// and without it, so a preview's facts can only raise the approval.
	Preview *Preview `json:"preview,omitempty"`
}

// Preview is what the gateway knows about a write's preview.
type Preview struct {
	// Facts are the small facts the preview reported about what the write
	// would touch (approval.Facts, validated by the gateway), or nil when
	// it reported none.
	Facts map[string]any `json:"facts"`
}

// Decision is the policy's answer. Approval and TTLSeconds matter only for
// Confirm; the policy always fills them so the shape is stable.
type Decision struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	// ReasonID is the stable id of Reason (read, needs_person:lock,
	// read_only_role, …; policies/authz.rego lists them), for the audit
	// line and for grouping: the words of Reason may change, it may not.
	ReasonID   string        `json:"reason_id"`
	Approval   approval.Kind `json:"approval"`
	TTLSeconds int           `json:"ttl_seconds"`
}

// Engine evaluates the policy for one input. On error it still returns a
// Deny decision so that a caller that drops the error fails closed, but
// callers must treat any error as a denial and log it.
type Engine interface {
	Decide(ctx context.Context, in Input) (Decision, error)
}

// failClosed is returned with every error.
var failClosed = Decision{Decision: Deny, Reason: "policy unavailable", ReasonID: ReasonUnavailable, Approval: approval.Model}

// Reason ids of the decisions the gateway makes itself when the policy
// cannot: the engine could not be reached, or its answer was unusable.
const (
	ReasonUnavailable = "policy_unavailable"
	ReasonFailed      = "policy_failed"
)

// reasonIDPattern is the shape of a reason id: a lower-case word, and
// after a colon what it is about (needs_person:lock, needs_person:cover.garage).
var reasonIDPattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(:[a-z0-9_.-]+)?$`)

// maxReasonID bounds a reason id in bytes.
const maxReasonID = 64

// Stricter returns the stricter of two decisions: deny over confirm by a
// person over confirm by the model over allow; on a tie, a. The gateway
// combines a write's decision before and after its preview's facts with
// it, so facts can only raise the approval a write needs.
func Stricter(a, b Decision) Decision {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func rank(d Decision) int {
	switch {
	case d.Decision == Deny:
		return 3
	case d.Decision == Confirm && d.Approval == approval.Human:
		return 2
	case d.Decision == Confirm:
		return 1
	case d.Decision == Allow:
		return 0
	}
	// Anything else is malformed; Validate refuses it before this.
	return 3
}

// Validate reports whether d is a well-formed decision: a known decision and
// approval value, a reason and its id, and a positive ticket lifetime for
// Confirm.
func Validate(d Decision) error {
	switch d.Decision {
	case Allow, Deny, Confirm:
	default:
		return fmt.Errorf("%w: unknown decision %.32q", ErrInvalidDecision, d.Decision)
	}
	switch d.Approval {
	case approval.Model, approval.Human:
	default:
		return fmt.Errorf("%w: unknown approval %.32q", ErrInvalidDecision, d.Approval)
	}
	if d.Reason == "" {
		return fmt.Errorf("%w: missing reason", ErrInvalidDecision)
	}
	if d.ReasonID == "" {
		return fmt.Errorf("%w: missing reason_id", ErrInvalidDecision)
	}
	if len(d.ReasonID) > maxReasonID || !reasonIDPattern.MatchString(d.ReasonID) {
		return fmt.Errorf("%w: reason_id %.32q is not a lower-case id such as needs_person:lock", ErrInvalidDecision, d.ReasonID)
	}
	if d.TTLSeconds < 0 {
		return fmt.Errorf("%w: negative ttl_seconds", ErrInvalidDecision)
	}
	if d.Decision == Confirm && d.TTLSeconds == 0 {
		return fmt.Errorf("%w: confirm without ttl_seconds", ErrInvalidDecision)
	}
	return nil
}

// checked validates d and turns a failure into the fail-closed answer.
func checked(d Decision) (Decision, error) {
	if err := Validate(d); err != nil {
		return failClosed, err
	}
	return d, nil
}
