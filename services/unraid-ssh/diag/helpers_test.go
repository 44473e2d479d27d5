package diag

import (
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func callReq(name string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, map[string]any{}
	return req
}
