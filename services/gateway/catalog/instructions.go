package catalog

import (
	"strings"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/truncate"
	"github.com/toolgate/toolgate/services/gateway/pins"
)

// A service's instructions reach every client that initializes, so they
// are pinned like a tool definition: changed text is withheld until an
// operator accepts its hash (pins.Instructions in the pin store).

// maxServiceInstructions bounds what one service adds to the instructions
// a client receives.
const maxServiceInstructions = 1500

// instructor is a backend that knows its service's instructions.
type instructor interface{ Instructions() string }

// pinInstructions checks the service's current instructions against their
// pin. Accepted text replaces what clients get; changed text is withheld
// and clients keep getting the last accepted text this process has seen.
func (c *Catalog) pinInstructions(service string, b Backend) {
	in, ok := b.(instructor)
	if !ok {
		return
	}
	// Pinned is exactly what is forwarded: without the toolkit's
	// untrusted-data note (the gateway's own instructions say that once),
	// cut to the size clients get.
	text := truncate.String(strings.TrimSpace(strings.ReplaceAll(in.Instructions(), toolkit.UntrustedNote, "")), maxServiceInstructions)
	def, hash, err := pins.Definition(text)
	if err != nil {
		return
	}
	accepted, err := c.cfg.Pins.Check(service, pins.Instructions, hash, def)
	if err != nil {
		c.log.Error("could not save pins", "error", err)
	}
	if !accepted {
		c.log.Warn("service instructions withheld", "service", service,
			"reason", "instructions changed since they were pinned; review them with `gateway pins show "+service+" "+pins.Instructions+"`")
		return
	}
	c.mu.Lock()
	c.instr[service] = text
	c.mu.Unlock()
}

// Instructions are service's accepted instructions ("" for none).
func (c *Catalog) Instructions(service string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.instr[service]
}
