package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

var (
	errWithheld = errors.New("definition changed since it was pinned; review it with `gateway pins show` and accept its hash with `gateway pins accept`")
	errToolName = errors.New("tool name is not 1 to 128 letters, digits, '_', '-' or '.'")
)

// toolName is what MCP allows as a tool name; it also keeps tool names
// apart from pins.Instructions.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

func (c *Catalog) offer(service string, t mcp.Tool) (*Tool, error) {
	if !toolName.MatchString(t.Name) {
		return nil, errToolName
	}
	def, hash, err := pins.Definition(t)
	if err != nil {
		return nil, err
	}
	ok, err := c.cfg.Pins.Check(service, t.Name, hash, def)
	if err != nil {
		c.log.Error("could not save pins", "error", err)
	}
	if !ok {
		return nil, errWithheld
	}
	e := &Tool{Service: service, Upstream: t, Write: isWrite(t), Annotations: annotations(t)}
	e.Offered = t
	if e.Write {
		offered, err := withConfirmArgs(t)
		if err != nil {
			return nil, err
		}
		e.Offered = offered
	}
	// The service's _meta is for the gateway, not for clients.
	e.Offered.Meta = nil
	return e, nil
}

// isWrite is conservative: a tool is a write unless it says it only reads
// and does not declare itself a write.
func isWrite(t mcp.Tool) bool {
	if t.Meta != nil {
		if w, ok := t.Meta.AdditionalFields[approval.MetaWrite].(bool); ok && w {
			return true
		}
	}
	ro := t.Annotations.ReadOnlyHint
	return ro == nil || !*ro
}

func annotations(t mcp.Tool) policy.Annotations {
	b := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	a := t.Annotations
	return policy.Annotations{
		ReadOnly:    b(a.ReadOnlyHint, false),
		Destructive: b(a.DestructiveHint, true),
		Idempotent:  b(a.IdempotentHint, false),
		OpenWorld:   b(a.OpenWorldHint, true),
	}
}

// withConfirmArgs adds the gateway's confirm and ticket arguments to a write
// tool's schema and explains the flow in its description.
func withConfirmArgs(t mcp.Tool) (mcp.Tool, error) {
	raw := t.RawInputSchema
	if len(raw) == 0 {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return t, err
		}
		raw = b
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return t, fmt.Errorf("input schema is not an object: %w", err)
	}
	props, _ := schema["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	if _, clash := props[ArgConfirm]; clash {
		return t, errors.New("write tool declares its own confirm argument")
	}
	if _, clash := props[ArgTicket]; clash {
		return t, errors.New("write tool declares its own ticket argument")
	}
	props[ArgConfirm] = map[string]any{"type": "boolean", "description": "Set to true only after the user explicitly agreed to the preview."}
	props[ArgTicket] = map[string]any{"type": "string", "maxLength": 128, "description": "The ticket returned with the preview."}
	schema["properties"] = props
	out, err := json.Marshal(schema)
	if err != nil {
		return t, err
	}
	t.InputSchema = mcp.ToolInputSchema{}
	t.RawInputSchema = out
	// Short: the confirm argument, the gateway's instructions and the
	// preview's own next step say the rest, and this text is in every
	// prompt of every client of the endpoint.
	t.Description = strings.TrimSpace(t.Description) + "\n\nA write: unless the policy allows it outright, the first call only returns a preview and a ticket."
	return t, nil
}

// install replaces one service's tools, leaving out any whose name another
// service offers already, and tells Changed when they differ.
func (c *Catalog) install(service string, entries []*Tool) {
	c.mu.Lock()
	old := c.tools[service]
	taken := map[string]string{}
	for svc, es := range c.tools {
		if svc == service {
			continue
		}
		for _, e := range es {
			taken[e.Offered.Name] = svc
		}
	}
	var unique []*Tool
	for _, e := range entries {
		if other, dup := taken[e.Offered.Name]; dup {
			c.log.Warn("tool name already offered by another service; withheld", "service", service, "tool", e.Offered.Name, "other", other)
			continue
		}
		unique = append(unique, e)
	}
	if sameTools(old, unique) {
		c.mu.Unlock()
		return
	}
	c.tools[service] = unique
	for _, o := range old {
		delete(c.byName, o.Offered.Name)
	}
	for _, e := range unique {
		c.byName[e.Offered.Name] = e
	}
	c.mu.Unlock()

	var gone []string
	for _, o := range old {
		if !slices.ContainsFunc(unique, func(e *Tool) bool { return e.Offered.Name == o.Offered.Name }) {
			gone = append(gone, o.Offered.Name)
		}
	}
	c.cfg.Changed(service, unique, gone)
}

func sameTools(a, b []*Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ha, _ := pins.Hash(a[i].Upstream)
		hb, _ := pins.Hash(b[i].Upstream)
		if ha != hb {
			return false
		}
	}
	return true
}
