package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
)

// Parse reads one audit line back into the Record it was written from
// (Sync and Args, which are never written, stay zero). It is the only
// reader of the format, so whoever reads the trail (the operator console,
// on start from the audit file and then from the tap) reads what a log
// shipper reads.
func Parse(b []byte) (Record, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return Record{}, fmt.Errorf("audit line: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil {
		return Record{}, fmt.Errorf("audit line: time: %w", err)
	}
	return l.record(t, nil), nil
}

// record is the Record a line says, at t, with args beside it.
func (l line) record(t time.Time, args []byte) Record {
	return Record{
		Time: t.UTC(), Event: l.Event, Client: l.Client, User: l.User, UserRole: l.UserRole, Endpoint: l.Endpoint,
		Service: l.Service, Tool: l.Tool, Phase: l.Phase, Decision: l.Decision, Reason: l.Reason,
		ReasonID: l.ReasonID, Approval: approval.Kind(l.Approval), TicketID: l.TicketID, ArgsDigest: l.ArgsDigest,
		DurationMS: l.DurationMS, Outcome: l.Outcome, Bytes: l.Bytes, Args: args,
	}
}
