// Package mcpwire reads and writes the gateway's MCP messages as bytes:
// a POST body checked and read once (Read, ReadRequest, PlainCall), a
// JSON-RPC response written with the request's id as it came
// (WriteResponse, WriteError), and a service's read result passed on
// without decoding it into mcp-go's types (Pass). Every reader is
// encoding/json.
package mcpwire
