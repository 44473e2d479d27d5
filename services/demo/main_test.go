package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// TestProcess runs the real binary: a configuration error is one readable
// line naming the setting (never a value); a configured service answers its
// healthcheck subcommand and stops cleanly on SIGTERM.
func TestProcess(t *testing.T) {
	bin := toolkittest.Build(t, ".")
	addr := toolkittest.FreeAddr(t)
	token := toolkittest.SecretFile(t, "demo-service-token-0123456789")

	t.Run("missing and misplaced settings", func(t *testing.T) {
		cmd := exec.Command(bin)
		cmd.Env = []string{"TOOLGATE_LISTEN=" + addr, "DEMO_ALLOW_WRITES=true", "TOOLGATE_SERVICE_TOKEN=leaked-value-xyz"}
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatal("started without its settings")
		}
		for _, want := range []string{"TOOLGATE_SERVICE_TOKEN_FILE", "TOOLGATE_APPROVAL_KEY_FILE", "set TOOLGATE_SERVICE_TOKEN_FILE instead"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("start-up error does not mention %s:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), "leaked-value-xyz") {
			t.Errorf("start-up error shows a secret value:\n%s", out)
		}
	})

	t.Run("healthcheck and SIGTERM", func(t *testing.T) {
		env := []string{"TOOLGATE_LISTEN=" + addr, "TOOLGATE_SERVICE_TOKEN_FILE=" + token}
		toolkittest.StartHealthy(t, bin, env).Terminate(t)
		// The healthcheck fails once the service is gone.
		hc := exec.Command(bin, "healthcheck")
		hc.Env = env
		if hc.Run() == nil {
			t.Fatal("healthcheck succeeded with the service stopped")
		}
	})
}
