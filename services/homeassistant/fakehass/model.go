package fakehass

import (
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/cases"
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

// constraints are HA's MatchTargetsConstraints as the intents fill them,
// and its MatchTargetsPreferences.
type constraints struct {
	name, area, floor             string
	domains, deviceClasses        []string
	preferredArea, preferredFloor string
	// duplicates: several entities may answer to the name
	// (allow_duplicate_names, as GetLiveContext asks).
	duplicates bool
}

// norm is HA's _normalize_name: str.strip() and str.casefold(). Python's
// strip also removes \x1c-\x1f.
func norm(s string) string {
	return cases.Fold().String(strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }))
}

// errAllDevices is DynamicServiceIntentHandler's refusal of a call
// without any constraint.
const errAllDevices = "Service handler cannot target all devices"

// match follows HA's async_match_targets over exposed entities: name
// (entity id, friendly name or alias), domain, device class, floor and
// area (by id, name or alias). Several entities answering to the name are
// refused (DUPLICATE_NAME) unless the preferred floor, then the preferred
// area, leaves fewer than two. It returns the matched entities or the
// reason it failed.
func (f *Fake) match(c constraints) ([]*Entity, string) {
	if c.name == "" && c.area == "" && c.floor == "" && len(c.domains) == 0 && len(c.deviceClasses) == 0 {
		return nil, errAllDevices
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
		if c.name != "" && !f.nameMatches(e, c.name) {
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
	if c.name == "" || c.duplicates || len(out) < 2 {
		return out, ""
	}
	if c.preferredFloor != "" {
		out = slices.DeleteFunc(out, func(e *Entity) bool {
			a, ok := f.areas[f.areaOf(e)]
			return !ok || a.Floor != c.preferredFloor
		})
		if len(out) < 2 {
			return f.orNone(out)
		}
	}
	if c.preferredArea != "" {
		out = slices.DeleteFunc(out, func(e *Entity) bool { return f.areaOf(e) != c.preferredArea })
		if len(out) < 2 {
			return f.orNone(out)
		}
	}
	return nil, "DUPLICATE_NAME"
}

// orNone is a disambiguated match: HA fails with NAME when the preference
// left nothing.
func (f *Fake) orNone(out []*Entity) ([]*Entity, string) {
	if len(out) == 0 {
		return nil, "NAME"
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
