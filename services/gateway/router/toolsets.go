package router

import (
	"fmt"
	"path"
	"regexp"
	"slices"

	"github.com/mark3labs/mcp-go/server"
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

// Has reports whether tool belongs to the toolset.
func (t Toolset) Has(tool string) bool {
	for _, p := range t.Tools {
		// Tool names hold no "/", so path.Match is a plain glob here.
		if ok, _ := path.Match(p, tool); ok {
			return true
		}
	}
	return false
}

// DiscoveryEndpoint is the endpoint of the discovery tools (discovery.go);
// no service or toolset may take its name.
const DiscoveryEndpoint = "discover"

var (
	endpointName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	toolPattern  = regexp.MustCompile(`^[a-z][a-z0-9_*]{0,63}$`)
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
		for _, p := range ts.Tools {
			if !toolPattern.MatchString(p) {
				return fmt.Errorf("toolset %q: %q is not a tool name or a pattern of one (letters, digits, _ and *)", ts.Name, p)
			}
		}
		seen[ts.Name] = true
	}
	return nil
}

// installToolsets gives every toolset of service its tools among served.
func (r *Router) installToolsets(service string, served []server.ServerTool) {
	for _, ts := range r.cfg.Toolsets {
		if ts.Service != service {
			continue
		}
		var mine []server.ServerTool
		for _, st := range served {
			if ts.Has(st.Tool.Name) {
				mine = append(mine, st)
			}
		}
		r.sets[ts.Name].SetTools(mine...)
	}
}
