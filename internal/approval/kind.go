package approval

// Kind says whose consent a write needs before the gateway signs its
// approval: the policy decides it, the ticket carries it.
type Kind string

// The kinds of consent.
const (
	// Model: the user's consent, given through the client (confirm: true
	// with the ticket).
	Model Kind = "model"
	// Human: a person's approval outside the chat as well (the approval
	// page or `gateway approvals`); a confirm from the model alone is not
	// consent.
	Human Kind = "human"
)
