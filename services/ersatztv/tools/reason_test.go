package tools_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// ErsatzTV's own reason (the ProblemDetails detail its API answers with)
// reaches the tool result framed as its words; the machine key never does.
func TestErsatzTVsReasonReachesTheResult(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "unknown channel", Tool: "ersatztv_get_channel", Args: map[string]any{"id": 99}, Code: toolerr.NotFound,
			Has: []string{`ErsatzTV said: \"Channel does not exist.\"`}, HasNot: []string{"rfc9110", "traceId"}},
		{Name: "unknown collection", Tool: "ersatztv_get_collection", Args: map[string]any{"id": 99}, Code: toolerr.NotFound,
			Has: []string{`ErsatzTV said: \"Collection does not exist.\"`}},
	}, testKey)
}
