package main

import (
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

// TestProcess runs the real binary: bad settings give one readable error
// naming the variables and no value; against the demo fake it becomes
// healthy and ready, and stops on SIGTERM without logging the password.
func TestProcess(t *testing.T) {
	fake := httptest.NewServer(fakefrigate.Demo())
	t.Cleanup(fake.Close)
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{{
			Env:  []string{"FRIGATE_API_ROOT=http://frigate:5000/api", "FRIGATE_PASSWORD=leaked-password-xyz"},
			Want: []string{"FRIGATE_ALLOW_HTTP", "FRIGATE_PASSWORD_FILE instead"},
		}, {
			Name: "the toolkit's bounds",
			Env: []string{"FRIGATE_URL=https://frigate:8971", "FRIGATE_TRUSTED_UNAUTHENTICATED=true",
				"FRIGATE_MAX_CONCURRENT=65", "FRIGATE_MAX_RESULT_BYTES=lots"},
			Want: []string{"FRIGATE_MAX_CONCURRENT", "FRIGATE_MAX_RESULT_BYTES"},
		}},
		Env: []string{"FRIGATE_API_ROOT=" + fake.URL + "/api", "FRIGATE_ALLOW_INSECURE_HTTP=true",
			"FRIGATE_USERNAME=" + fakefrigate.DemoUser, "FRIGATE_PASSWORD_FILE=" + toolkittest.SecretFile(t, fakefrigate.DemoPassword)},
		Ready:   true,
		Secrets: []string{"leaked-password-xyz", fakefrigate.DemoPassword},
	})
}
