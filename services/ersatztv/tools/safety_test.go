package tools_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Traversal attempts through a tool's path argument are refused before
// any request; a slash stays inside its segment.
func TestPathArgumentsCannotTraverse(t *testing.T) {
	for _, mode := range []struct {
		name  string
		start func(testing.TB, map[string]string) *upstreamEnv
		base  string
	}{{"v1", startV1, "/api/v1"}, {"legacy", startLegacy, "/api"}} {
		t.Run(mode.name, func(t *testing.T) {
			e := mode.start(t, nil)
			svc := e.service(t)
			for _, name := range []string{"..", ".", "a\nb", ""} {
				got, isErr := svc.Call(t, "ersatztv_get_resolution_by_name", map[string]any{"name": name}, "")
				if !isErr || got["error"].(map[string]any)["code"] != string(toolerr.InvalidArgument) {
					t.Errorf("name %q: %v", name, got)
				}
			}
			e.noRequests(t)
			got, isErr := svc.Call(t, "ersatztv_get_resolution_by_name", map[string]any{"name": "../../channels"}, "")
			if !isErr || got["error"].(map[string]any)["code"] != string(toolerr.NotFound) {
				t.Errorf("escaped name: %v", got)
			}
			reqs := e.requests()
			if len(reqs) != 1 || reqs[0].Path != mode.base+"/ffmpeg/resolution/by-name/..%2F..%2Fchannels" {
				t.Errorf("requests %v", reqs)
			}
		})
	}
}
