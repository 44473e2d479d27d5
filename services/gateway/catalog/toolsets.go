package catalog

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Toolset is a named endpoint (/mcp/<name>, /openapi/<name>) that offers
// some of one service's tools: a client that needs Sonarr loads Sonarr's
// schemas, not Radarr's and Prowlarr's too (every schema of every endpoint
// a client adds goes into every prompt).
type Toolset struct {
	Name    string
	Service string
	// Tools are tool names or patterns where * stands for any run of
	// characters ("sonarr_*", "ersatztv_*playout*").
	Tools []string
}

// Has reports whether tool belongs to the toolset: a pattern matches it
// and no pattern written "!pattern" does (so a toolset can be "the rest
// of a service": "ha_*", "!ha_yaml_*").
func (t Toolset) Has(tool string) bool {
	in := false
	for _, p := range t.Tools {
		not := strings.HasPrefix(p, "!")
		// Tool names hold no "/", so path.Match is a plain glob here.
		if ok, _ := path.Match(strings.TrimPrefix(p, "!"), tool); ok {
			if not {
				return false
			}
			in = true
		}
	}
	return in
}

// DiscoveryEndpoint is the endpoint of the discovery tools (the router's);
// no service or toolset may take its name.
const DiscoveryEndpoint = "discover"

var (
	endpointName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	// Relayed tools keep their upstream's case (ha_HassTurnOn).
	toolPattern = regexp.MustCompile(`^!?[a-z][A-Za-z0-9_*]{0,63}$`)
)

// CheckToolsets checks toolsets against each other and the services.
func CheckToolsets(sets []Toolset, services []string) error {
	seen := map[string]bool{}
	for _, ts := range sets {
		switch {
		case !endpointName.MatchString(ts.Name):
			return fmt.Errorf("toolset name %q: lower-case letters, digits and dashes", ts.Name)
		case ts.Name == DiscoveryEndpoint:
			return fmt.Errorf("toolset name %q is the discovery endpoint's", ts.Name)
		case slices.Contains(services, ts.Name):
			return fmt.Errorf("toolset %q has a service's name", ts.Name)
		case seen[ts.Name]:
			return fmt.Errorf("toolset %q defined twice", ts.Name)
		case !slices.Contains(services, ts.Service):
			return fmt.Errorf("toolset %q: no service %q", ts.Name, ts.Service)
		case len(ts.Tools) == 0:
			return fmt.Errorf("toolset %q names no tools", ts.Name)
		}
		positive := false
		for _, p := range ts.Tools {
			if !toolPattern.MatchString(p) {
				return fmt.Errorf("toolset %q: %q is not a tool name or a pattern of one (letters, digits, _ and *; ! before one leaves it out)", ts.Name, p)
			}
			positive = positive || !strings.HasPrefix(p, "!")
		}
		if !positive {
			return fmt.Errorf("toolset %q only leaves tools out", ts.Name)
		}
		seen[ts.Name] = true
	}
	return nil
}
