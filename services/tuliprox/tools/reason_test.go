package tools_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

// Seed 001: a failed REST call is an isError result starting with its
// HTTP status, and Tuliprox's own reason ({"error": …}) reaches the model
// so it can correct itself — a bad regex, a disabled feature.
func TestTuliproxsReasonReachesTheResult(t *testing.T) {
	svc := admin(t, faketuliprox.Options{}).service(t)
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "bad regex", Tool: tools.ToolHistory, Args: map[string]any{"search": "(unclosed", "search_mode": "regex"},
			Code: toolerr.InvalidArgument, Has: []string{`"message":"HTTP 400`, `Tuliprox said: \"Invalid regex\"`}},
	})
	off := admin(t, faketuliprox.Options{NoStreamHistory: true}).service(t)
	off.RunReads(t, []toolkittest.ReadCase{
		{Name: "feature disabled", Tool: tools.ToolHistory, Code: toolerr.UpstreamUnavailable,
			Has: []string{`"message":"HTTP 503`, `Tuliprox said: \"Stream history is not enabled\"`}},
	})
}
