package main

import (
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
)

// TestProcess runs the real binary: bad settings give one readable error
// naming the variables and no value; against the demo fake it becomes
// healthy and stops on SIGTERM without logging the password.
func TestProcess(t *testing.T) {
	bin := toolkittest.Build(t, ".")
	token := toolkittest.SecretFile(t, "frigate-service-token-0123456789")

	t.Run("bad settings", func(t *testing.T) {
		cmd := exec.Command(bin)
		cmd.Env = []string{"TOOLGATE_LISTEN=" + toolkittest.FreeAddr(t), "TOOLGATE_SERVICE_TOKEN_FILE=" + token,
			"FRIGATE_API_ROOT=http://frigate:5000/api", "FRIGATE_PASSWORD=leaked-password-xyz"}
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatal("started with bad settings")
		}
		for _, want := range []string{"FRIGATE_ALLOW_INSECURE_HTTP", "FRIGATE_PASSWORD_FILE instead"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("error does not mention %s:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), "leaked-password-xyz") {
			t.Errorf("error shows the password:\n%s", out)
		}
	})

	t.Run("demo fake", func(t *testing.T) {
		fake := httptest.NewServer(fakefrigate.Demo())
		t.Cleanup(fake.Close)
		env := []string{"TOOLGATE_LISTEN=" + toolkittest.FreeAddr(t), "TOOLGATE_SERVICE_TOKEN_FILE=" + token,
			"FRIGATE_API_ROOT=" + fake.URL + "/api", "FRIGATE_ALLOW_INSECURE_HTTP=true",
			"FRIGATE_USERNAME=" + fakefrigate.DemoUser, "FRIGATE_PASSWORD_FILE=" + toolkittest.SecretFile(t, fakefrigate.DemoPassword)}
		p := toolkittest.StartHealthy(t, bin, env)
		p.Terminate(t)
		if strings.Contains(p.Output.String(), fakefrigate.DemoPassword) {
			t.Error("log shows the password")
		}
	})
}
