package fakehass

import (
	"slices"
	"strings"
	"time"
)

// Floor is a floor of the home.
type Floor struct {
	ID, Name string
	Aliases  []string
}

// Area is an area (room); Floor is a floor id or "".
type Area struct {
	ID, Name string
	Aliases  []string
	Floor    string
	Labels   []string
}

// Device is a device: its entities without an area of their own are in
// its area.
type Device struct {
	ID, Name string
	Area     string
	Labels   []string
}

// Entity is one entity of the fake: its state, where it is (its own area,
// else its device's), what it is called, its labels and whether it is
// exposed to Assist (only exposed entities are reachable through the MCP
// server, as in HA).
type Entity struct {
	ID         string
	Name       string
	State      string
	Attributes map[string]any
	Area       string
	Device     string
	Labels     []string
	Aliases    []string
	Exposed    bool
}

func (e *Entity) domain() string {
	d, _, _ := strings.Cut(e.ID, ".")
	return d
}

func (e *Entity) deviceClass() string {
	d, _ := e.Attributes["device_class"].(string)
	return d
}

// areaOf is an entity's effective area: its own, else its device's.
func (f *Fake) areaOf(e *Entity) string {
	if e.Area != "" {
		return e.Area
	}
	if d, ok := f.devices[e.Device]; ok {
		return d.Area
	}
	return ""
}

// change is one recorded state change (history and logbook).
type change struct {
	entity, state string
	when          time.Time
	message       string
}

// constraints are HA's MatchTargetsConstraints as the intents fill them.
type constraints struct {
	name, area, floor      string
	domains, deviceClasses []string
}

// norm is HA's _normalize_name: strip and casefold.
func norm(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// match follows HA's async_match_targets over exposed entities: name
// (entity id, friendly name or alias), domain, device class, floor and
// area (by id, name or alias); "all" as a name matches every name. It
// returns the matched entities or the reason it failed.
func (f *Fake) match(c constraints) ([]*Entity, string) {
	if c.name == "" && c.area == "" && c.floor == "" && len(c.domains) == 0 && len(c.deviceClasses) == 0 {
		return nil, "Service handler cannot target all devices"
	}
	var out []*Entity
	for _, id := range f.order {
		e := f.entities[id]
		if !e.Exposed {
			continue
		}
		if len(c.domains) > 0 && !slices.Contains(c.domains, e.domain()) {
			continue
		}
		if c.name != "" && norm(c.name) != "all" && !f.nameMatches(e, c.name) {
			continue
		}
		if len(c.deviceClasses) > 0 && !slices.Contains(c.deviceClasses, e.deviceClass()) {
			continue
		}
		if c.floor != "" || c.area != "" {
			a, ok := f.areas[f.areaOf(e)]
			if !ok {
				continue
			}
			if c.floor != "" {
				fl, ok := f.floors[a.Floor]
				if !ok || !(fl.ID == c.floor || norm(fl.Name) == norm(c.floor) || anyNorm(fl.Aliases, c.floor)) {
					continue
				}
			}
			if c.area != "" && !(a.ID == c.area || norm(a.Name) == norm(c.area) || anyNorm(a.Aliases, c.area)) {
				continue
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, "no entities matched the constraints"
	}
	return out, ""
}

func (f *Fake) nameMatches(e *Entity, name string) bool {
	return e.ID == name || norm(e.Name) == norm(name) || anyNorm(e.Aliases, name)
}

func anyNorm(list []string, s string) bool {
	for _, x := range list {
		if norm(x) == norm(s) {
			return true
		}
	}
	return false
}

// floorOf returns the floor of an area.
func (f *Fake) floorOf(areaID string) *Floor {
	a, ok := f.areas[areaID]
	if !ok {
		return nil
	}
	return f.floors[a.Floor]
}
