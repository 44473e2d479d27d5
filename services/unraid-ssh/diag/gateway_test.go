package diag

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
	"github.com/toolgate/toolgate/services/unraid-ssh/diag/sshdtest"
)

// Through a real gateway with both Go MCP clients: a nas client runs a
// diagnostic, a users client may not, and the private key appears in no
// log, audit line or wire body.
func TestThroughTheGateway(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Syslog: "Dec  3 05:00:00 tower kernel: hello from syslog\n"})
	c, _ := client(t, srv, srv.KnownHostsFile, 64<<10)
	tokens, bearer := gatewaytest.ClientTokens(t, map[string][]string{"operator": {"nas"}, "openwebui": {"users"}})
	g := gatewaytest.Start(t, gatewaytest.Options{Service: "unraid-ssh", Tools: New(c).Tools(), Secrets: [][]byte{srv.Key},
		Instructions: Instructions, Config: func(c *app.Config) { c.Tokens = tokens }})
	for name, tok := range bearer {
		g.Tokens[name] = tok
	}
	got, isErr := gatewaytest.Call(t, g.Client("operator", ""), "unraidssh_syslog", map[string]any{"lines": 1})
	if isErr || !strings.Contains(jsonText(got), "hello from syslog") {
		t.Fatalf("mcp-go: %v", got)
	}
	res, err := g.Client("openwebui", "").CallTool(t.Context(), callReq("unraidssh_df"))
	if err == nil && !res.IsError {
		t.Fatalf("group users ran an SSH diagnostic: %v", res)
	}
	wire := &capture.Buffer{}
	sc := sdk.NewClient(&sdk.Implementation{Name: "unraid-ssh-test", Version: "1"}, nil)
	s, err := sc.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: g.URL + "/mcp",
		HTTPClient: gatewaytest.RecordingClient(wire, map[string]string{"Authorization": "Bearer " + g.Tokens["operator"]})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r, err := s.CallTool(t.Context(), &sdk.CallToolParams{Name: "unraidssh_smart", Arguments: map[string]any{"disk": "sdc"}})
	if err != nil || r.IsError || !strings.Contains(wire.String(), "Device: /dev/sdc") {
		t.Fatalf("sdk: %v %v", err, r)
	}
	g.NoLeaks(t, []string{string(srv.Key)}, map[string]string{"sdk wire": wire.String(), "sshd log": srv.Log.String()})
}
