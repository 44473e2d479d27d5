package hass

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// AreaMapTemplate asks HA for the area and floor of every entity that has
// one, one JSON array per line: [entity_id, area_id, area_name, floor_id,
// floor_name] (floor values may be null). HA's REST API has no registry
// endpoints; its template functions (area_id, area_name, floor_id,
// floor_name, HA 2024.4+) answer the same question. The template takes no
// input, so nothing a caller says is ever rendered.
const AreaMapTemplate = `{%- for s in states -%}{%- set a = area_id(s.entity_id) -%}{%- if a %}
{{ [s.entity_id, a, area_name(a), floor_id(a), floor_name(floor_id(a))] | tojson }}{% endif -%}{%- endfor -%}`

// Placement is where an entity is.
type Placement struct {
	AreaID, AreaName, FloorID, FloorName string
}

// maxAreaLines bounds the area map (one line per entity with an area).
const maxAreaLines = 20000

// AreaMap returns the placement of every entity that is in an area. It
// needs an administrator's token (template rendering is admin-only).
func (h *Client) AreaMap(ctx context.Context) (map[string]Placement, error) {
	text, err := h.Render(ctx, AreaMapTemplate, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]Placement{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if len(out) >= maxAreaLines {
			return nil, toolerr.New(toolerr.TooLarge, "Home Assistant has more than %d entities in areas", maxAreaLines)
		}
		var row []*string
		if err := json.Unmarshal([]byte(line), &row); err != nil || len(row) != 5 || row[0] == nil || row[1] == nil {
			return nil, toolerr.New(toolerr.UpstreamUnavailable, "Home Assistant answered the area lookup in an unexpected form")
		}
		p := Placement{AreaID: *row[1]}
		if row[2] != nil {
			p.AreaName = *row[2]
		}
		if row[3] != nil {
			p.FloorID = *row[3]
		}
		if row[4] != nil {
			p.FloorName = *row[4]
		}
		out[*row[0]] = p
	}
	if err := sc.Err(); err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Home Assistant answered the area lookup in an unexpected form")
	}
	return out, nil
}
