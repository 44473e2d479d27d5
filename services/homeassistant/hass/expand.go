package hass

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// ExpandTemplate asks HA which entities a service call's device and label
// targets reach, one JSON array per line: ["device", id, [entities]] and
// ["label", id, [entities], [entities of its devices], [its areas]]. HA's
// REST API has no registry endpoints; its template functions
// device_entities, label_entities, label_devices and label_areas (HA
// 2024.4+) answer the same question. The ids reach the template only as
// variables, never spliced into its source.
const ExpandTemplate = `{%- for d in devices %}
{{ ["device", d, device_entities(d) | list] | tojson }}{% endfor -%}
{%- for l in labels %}{% set ns = namespace(e=[]) %}{% for d in label_devices(l) %}{% set ns.e = ns.e + (device_entities(d) | list) %}{% endfor %}
{{ ["label", l, label_entities(l) | list, ns.e, label_areas(l) | list] | tojson }}{% endfor -%}`

// Expansion is what device and label targets reach: the entities of each
// device, and per label its entities (its own and its devices') and areas.
type Expansion struct {
	Devices    map[string][]string
	Labels     map[string][]string
	LabelAreas map[string][]string
}

// Bounds of an expansion.
const (
	maxExpandIDs     = 200
	maxExpandEntries = 20000
)

// Expand renders ExpandTemplate for the given device and label ids (admin
// only: template rendering needs an administrator's token). An unknown id
// reaches nothing, as in HA.
func (h *Client) Expand(ctx context.Context, devices, labels []string) (Expansion, error) {
	out := Expansion{Devices: map[string][]string{}, Labels: map[string][]string{}, LabelAreas: map[string][]string{}}
	if len(devices)+len(labels) == 0 {
		return out, nil
	}
	if len(devices)+len(labels) > maxExpandIDs {
		return out, toolerr.New(toolerr.TooLarge, "more than %d devices and labels are targeted", maxExpandIDs)
	}
	text, err := h.Render(ctx, ExpandTemplate, map[string]any{"devices": nonNilStrings(devices), "labels": nonNilStrings(labels)})
	if err != nil {
		return out, err
	}
	bad := toolerr.New(toolerr.UpstreamUnavailable, "Home Assistant answered the device and label lookup in an unexpected form")
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	entries := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var row []json.RawMessage
		if err := json.Unmarshal([]byte(line), &row); err != nil || len(row) < 3 {
			return out, bad
		}
		var kind, id string
		if json.Unmarshal(row[0], &kind) != nil || json.Unmarshal(row[1], &id) != nil {
			return out, bad
		}
		lists := make([][]string, len(row)-2)
		for i := range lists {
			if json.Unmarshal(row[i+2], &lists[i]) != nil {
				return out, bad
			}
			entries += len(lists[i])
		}
		if entries > maxExpandEntries {
			return out, toolerr.New(toolerr.TooLarge, "the targeted devices and labels reach more than %d entities", maxExpandEntries)
		}
		switch {
		case kind == "device" && len(lists) == 1:
			out.Devices[id] = lists[0]
		case kind == "label" && len(lists) == 3:
			out.Labels[id] = append(lists[0], lists[1]...)
			out.LabelAreas[id] = lists[2]
		default:
			return out, bad
		}
	}
	if err := sc.Err(); err != nil {
		return out, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Home Assistant answered the device and label lookup in an unexpected form")
	}
	return out, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
