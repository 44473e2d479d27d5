package audit

import (
	"encoding/json"
	"fmt"
	"time"
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
