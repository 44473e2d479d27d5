package toolkit_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// greetArgs are the arguments of the example tool: the toolkit derives the
// tool's strict schema from this type.
type greetArgs struct {
	Name  string `json:"name" jsonschema:"Who to greet." schema:"minLength=1,maxLength=40"`
	Times int    `json:"times,omitempty" schema:"minimum=1,maximum=3"`
}

// A service is its tools: typed handlers get validated, decoded arguments,
// and a call that breaks the schema never reaches them.
func Example() {
	greet := toolkit.Tool{
		Name:        "demo_greet",
		Description: "Greet someone by name.",
		Annotations: toolkit.Annotations{ReadOnly: true, Idempotent: true},
		Handler: toolkit.ReadFor(func(_ context.Context, in greetArgs) (map[string]any, error) {
			return map[string]any{"greeting": "Hello, " + in.Name, "times": max(in.Times, 1)}, nil
		}),
	}
	const token = "example-service-token-0123456789"
	svc, err := toolkit.New(toolkit.Options{Name: "demo", ServiceToken: []byte(token), Redactor: redact.New()}, greet)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(svc.Handler())
	defer srv.Close()

	// The gateway's side: an MCP client with the service token.
	ctx := context.Background()
	tr, _ := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	c := client.NewClient(tr)
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		panic(err)
	}
	schema, _ := toolkit.InputSchema[greetArgs]() // what tools/list shows
	fmt.Println(string(schema))
	for _, args := range []map[string]any{{"name": "Ann"}, {"name": "Ann", "shout": true}} {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "demo_greet", args
		res, _ := c.CallTool(ctx, req)
		fmt.Println(res.IsError, res.Content[0].(mcp.TextContent).Text)
	}
	// Output:
	// {"type":"object","properties":{"name":{"type":"string","description":"Who to greet.","minLength":1,"maxLength":40},"times":{"type":"integer","minimum":1,"maximum":3}},"required":["name"],"additionalProperties":false}
	// false {"greeting":"Hello, Ann","times":1}
	// true {"error":{"code":"invalid_argument","message":"invalid arguments for demo_greet: at /: additional properties 'shout' not allowed"}}
}
