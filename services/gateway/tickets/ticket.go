package tickets

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
)

// State is where a ticket is in its life.
type State string

// DefaultTTL is the lifetime of a ticket issued with a ttl <= 0.
const DefaultTTL = 10 * time.Minute

// Binding is everything a ticket is bound to. A confirm must match it exactly.
type Binding struct {
	Client     string `json:"client"`
	User       string `json:"user"`
	UserRole   string `json:"user_role,omitempty"`
	Service    string `json:"service"`
	Tool       string `json:"tool"`
	ArgsDigest string `json:"args_digest"`
	Force      bool   `json:"force"`
}

// Ticket is one issued ticket.
type Ticket struct {
	ID string `json:"id"`
	Binding
	PreviewDigest string          `json:"preview_digest"`
	Approval      approval.Kind   `json:"approval"`
	State         State           `json:"state"`
	Reason        string          `json:"reason,omitempty"`
	Preview       json.RawMessage `json:"preview,omitempty"`
	// Facts are the preview's facts (approval.Facts as JSON) the policy
	// decided on; the confirm is decided on the same ones.
	Facts     json.RawMessage `json:"facts,omitempty"`
	Created   time.Time       `json:"created"`
	Expires   time.Time       `json:"expires"`
	DecidedBy string          `json:"decided_by,omitempty"`
}

// Errors of Redeem, Approve and Deny; check them with errors.Is.
var (
	ErrUnknown  = errors.New("unknown ticket")
	ErrExpired  = errors.New("ticket has expired")
	ErrUsed     = errors.New("ticket was already used")
	ErrDenied   = errors.New("ticket was denied")
	ErrPending  = errors.New("ticket is waiting for a person's approval")
	ErrMismatch = errors.New("ticket does not match this call")
	ErrFull     = errors.New("too many open tickets")
	ErrDecided  = errors.New("ticket was already decided")
	// ErrStore: the ticket file could not be written. Nothing changed: no
	// ticket was issued, redeemed or decided. Issue also refuses with it
	// while the last write of issued tickets failed (see Flush).
	ErrStore = errors.New("ticket store unavailable")
	// ErrCorrupt: the ticket file cannot be read or holds something that
	// is not a ticket; Open refuses it rather than guess which tickets
	// were used.
	ErrCorrupt = errors.New("ticket file is unreadable or corrupt")
)

// Ticket states.
const (
	// Pending waits for a person's approval (approval "human").
	Pending State = "pending"
	// Ready may be confirmed by the client that asked for it.
	Ready State = "ready"
	// Used was confirmed once and can never be confirmed again.
	Used State = "used"
	// Denied was refused by a person.
	Denied State = "denied"
)
