package main

import (
	"net/http/httptest"
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
// healthcheck, gives the seed's guidance at initialize and stops cleanly
// on SIGTERM.
func TestProcess(t *testing.T) {
	searx := httptest.NewServer(fakesearx.NewDemo())
	defer searx.Close()
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{{
			Env:  []string{"WEB_SEARXNG_URL=http://user:leaked-value-xyz@searxng:8080", "AI_DNS=not-an-ip", "WEB_ALLOW_HOSTS=localhost"},
			Want: []string{"WEB_SEARXNG_URL", "AI_DNS", "WEB_ALLOW_HOSTS"},
		}},
		Secrets: []string{"leaked-value-xyz"},
		Env:     []string{"WEB_SEARXNG_URL=" + searx.URL, "WEB_SEARXNG_ALLOW_HTTP=true", "WEB_DNS=127.0.0.1:1"},
		Check: func(t *testing.T, p *toolkittest.Process) {
			// The seed's guidance reaches the model at initialize.
			tr, err := transport.NewStreamableHTTP("http://"+p.Addr+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + p.Token}))
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
		},
	})
}
