package gatewaytest

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
)

// SDKClientAt connects the official Go SDK's client to path (/mcp/<service>)
// as clientName, the second real MCP client the tests use beside mcp-go's.
// Everything it is sent is copied into wire, so a test can search that too;
// the session closes when the test ends.
func (g *Gateway) SDKClientAt(clientName, path string, wire *capture.Buffer) *sdk.ClientSession {
	g.t.Helper()
	hc := RecordingClient(wire, map[string]string{"Authorization": "Bearer " + g.Tokens[clientName]})
	c := sdk.NewClient(&sdk.Implementation{Name: "gatewaytest-sdk", Version: "1"}, nil)
	sess, err := c.Connect(g.t.Context(), &sdk.StreamableClientTransport{Endpoint: g.URL + path, HTTPClient: hc}, nil)
	if err != nil {
		g.t.Fatalf("go-sdk connect to %s: %v", path, err)
	}
	g.t.Cleanup(func() { _ = sess.Close() })
	return sess
}
