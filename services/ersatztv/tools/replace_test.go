package tools

import (
	"encoding/json"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// replace fills the complete body from the current state and refuses what
// it cannot fill honestly.
func TestReplaceFillsFromTheCurrentStateOrRefuses(t *testing.T) {
	cur := map[string]any{"name": "Movies", "watermarkId": json.Number("3"), "graphicsElementIds": []any{json.Number("7")}, "logo": nil}
	fields := []string{"name", "watermarkId", "graphicsElementIds", "logo"}
	cases := []struct {
		name    string
		current map[string]any
		set     map[string]any
		clear   []string
		body    string
		changed int
		code    toolerr.Code
	}{
		{name: "one change, the rest kept", current: cur, set: map[string]any{"name": "Films"},
			body: `{"graphicsElementIds":[7],"logo":null,"name":"Films","watermarkId":3}`, changed: 1},
		{name: "clear empties a list as [] and a value as null", current: cur, clear: []string{"graphicsElementIds", "watermarkId"},
			body: `{"graphicsElementIds":[],"logo":null,"name":"Movies","watermarkId":null}`, changed: 2},
		{name: "setting the current value changes nothing", current: cur, set: map[string]any{"watermarkId": json.Number("3")},
			body: `{"graphicsElementIds":[7],"logo":null,"name":"Movies","watermarkId":3}`, changed: 0},
		{name: "set and cleared", current: cur, set: map[string]any{"logo": map[string]any{}}, clear: []string{"logo"}, code: toolerr.InvalidArgument},
		{name: "a field ErsatzTV does not report", current: map[string]any{"name": "Movies", "watermarkId": nil, "logo": nil},
			set: map[string]any{"name": "Films"}, code: toolerr.UpstreamUnavailable},
		{name: "a field ErsatzTV does not report, set explicitly", current: map[string]any{"name": "Movies", "watermarkId": nil, "logo": nil},
			set: map[string]any{"graphicsElementIds": []any{}}, body: `{"graphicsElementIds":[],"logo":null,"name":"Movies","watermarkId":null}`, changed: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := replace(c.current, fields, c.set, c.clear)
			if c.code != "" {
				if toolerr.CodeOf(err) != c.code {
					t.Fatalf("err %v, want %s", err, c.code)
				}
				return
			}
			body, _ := json.Marshal(r.Body)
			if err != nil || string(body) != c.body || len(r.Changes) != c.changed || len(r.Changes)+len(r.Kept) != len(fields) {
				t.Fatalf("err %v body %s changes %v kept %v", err, body, r.Changes, r.Kept)
			}
		})
	}
}
