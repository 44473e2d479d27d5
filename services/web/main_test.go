package main

import (
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/web/app"
	"github.com/toolgate/toolgate/services/web/fakesearx"
)

// TestProcess runs the real binary: bad settings give one readable error
// naming every setting (never a value); a configured service answers its
// healthcheck and stops cleanly on SIGTERM.
func TestProcess(t *testing.T) {
	bin := toolkittest.Build(t, ".")
	addr := toolkittest.FreeAddr(t)
	token := toolkittest.SecretFile(t, "web-service-token-0123456789")

	t.Run("bad settings", func(t *testing.T) {
		cmd := exec.Command(bin)
		cmd.Env = []string{"TOOLGATE_LISTEN=" + addr, "TOOLGATE_SERVICE_TOKEN_FILE=" + token,
			"WEB_SEARXNG_URL=http://user:leaked-value-xyz@searxng:8080", "AI_DNS=not-an-ip", "WEB_ALLOW_HOSTS=localhost"}
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatal("started with bad settings")
		}
		for _, want := range []string{"WEB_SEARXNG_URL", "AI_DNS", "WEB_ALLOW_HOSTS"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("start-up error does not mention %s:\n%s", want, out)
			}
		}
		if strings.Contains(string(out), "leaked-value-xyz") {
			t.Errorf("start-up error shows a secret:\n%s", out)
		}
	})

	t.Run("healthcheck and SIGTERM", func(t *testing.T) {
		searx := httptest.NewServer(fakesearx.NewDemo())
		defer searx.Close()
		env := []string{"TOOLGATE_LISTEN=" + addr, "TOOLGATE_SERVICE_TOKEN_FILE=" + token,
			"WEB_SEARXNG_URL=" + searx.URL, "WEB_SEARXNG_ALLOW_HTTP=true", "WEB_DNS=127.0.0.1:1"}
		p := toolkittest.StartHealthy(t, bin, env)
		// The seed's guidance reaches the model at initialize.
		tr, err := transport.NewStreamableHTTP("http://"+addr+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer web-service-token-0123456789"}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr)
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		res, err := c.Initialize(t.Context(), mcp.InitializeRequest{})
		_ = c.Close()
		if err != nil || !strings.HasPrefix(res.Instructions, app.Instructions) {
			t.Errorf("initialize: %v, instructions %q", err, res.Instructions)
		}
		p.Terminate(t)
		if strings.Contains(p.Output.String(), "web-service-token-0123456789") {
			t.Error("log shows the service token")
		}
	})
}
