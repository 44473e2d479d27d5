package tools

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// The seed's full-replace writes (update_channel, update_schedule,
// update_collection_custom_order) write every field they are not sent as
// empty, and update_playout clears dailyRebuildTime unless it is sent. So
// these tools take only the change the user wants, and the preview builds
// the complete request from ErsatzTV's current state: a field the user did
// not mention is sent with its current value, never wiped.

// fieldsOf turns a tool's arguments into the fields they set, as JSON
// values (numbers exact), leaving out the arguments that are not fields.
func fieldsOf(in any, notFields ...string) (map[string]any, error) {
	data, err := json.Marshal(in)
	if err != nil {
		return nil, toolerr.Wrap(toolerr.Internal, err, "cannot encode the arguments")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, toolerr.Wrap(toolerr.Internal, err, "cannot decode the arguments")
	}
	for _, k := range notFields {
		delete(m, k)
	}
	return m, nil
}

// replacement is the complete request body of a full replace and how it
// differs from the current state.
type replacement struct {
	Body    map[string]any
	Changes []Change
	Kept    []string
}

// replace builds the complete body for fields (in their order) from
// current, with set applied and the fields in clear set to their empty
// value (null, or [] for a list). A field both set and cleared is refused,
// and so is a field the current state does not report and the user did
// not set: its value is unknown, and sending anything would overwrite it
// (the seed's graphicsElementIds wipe, one level down).
func replace(current map[string]any, fields []string, set map[string]any, clear []string) (replacement, error) {
	r := replacement{Body: map[string]any{}}
	for _, f := range clear {
		if _, both := set[f]; both {
			return r, toolerr.New(toolerr.InvalidArgument, "%s is both set and cleared; do one", f)
		}
	}
	for _, f := range fields {
		v, ok := set[f]
		_, known := current[f]
		switch {
		case ok:
		case slices.Contains(clear, f):
			v = nil
			if _, list := current[f].([]any); list {
				v = []any{}
			}
		case !known:
			return r, toolerr.New(toolerr.UpstreamUnavailable,
				"ErsatzTV's answer does not report %s, which the complete request must carry; nothing is proposed (set %s explicitly, or check the ErsatzTV version)", f, f)
		default:
			v = current[f]
		}
		r.Body[f] = v
		if sameJSON(current[f], v) {
			r.Kept = append(r.Kept, f)
		} else {
			r.Changes = append(r.Changes, Change{Field: f, From: current[f], To: v})
		}
	}
	return r, nil
}

// sameJSON compares two JSON values by their encoding.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// object asserts that an answer is a JSON object.
func object(v any, what string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "ErsatzTV answered %s with something other than an object", what)
	}
	return m, nil
}

// summary keeps the identifying fields of an object for a preview.
func summary(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
