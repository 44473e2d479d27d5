package policy

import "strings"

// An input is split in two: its static part, which stays the same for a
// client calling one tool and keys what the engines remember (staticKey,
// staticItems), and the per-call fields below.

// perCallFields are the input fields that may differ between calls with
// the same static part, by their JSON names. Every field of Input is
// either here or in staticItems (a test holds both lists to the struct).
var perCallFields = []string{"user", "args", "ticket", "time", "preview"}

// staticKey is an input's static part. Groups are joined with a byte no
// group name contains; nil groups (JSON null) differ from none.
type staticKey struct {
	action, client, groups, userRole, service, tool, transport string
	write                                                      bool
	ann                                                        Annotations
	// noArgs: the call has no arguments, no ticket and no preview, so
	// those are part of the static input too (tools/list asks this way,
	// and so does a call without arguments).
	noArgs bool
}

// staticKey returns in's static part; ok is false for a group name that
// would make the key ambiguous.
func (in Input) staticKey() (key staticKey, ok bool) {
	groups := "\x01" // nil
	if in.Client.Groups != nil {
		for _, g := range in.Client.Groups {
			if strings.ContainsAny(g, "\x00\x01") {
				return staticKey{}, false
			}
		}
		groups = strings.Join(in.Client.Groups, "\x00")
	}
	return staticKey{
		action: in.Action, client: in.Client.Name, groups: groups, userRole: in.UserRole, service: in.Service,
		tool: in.Tool, transport: in.Transport, write: in.Write, ann: in.Annotations,
		noArgs: in.Args != nil && len(in.Args) == 0 && in.Ticket == Ticket{State: "none"} && in.Preview == nil,
	}, true
}

// unknownFields are the per-call fields a partial evaluation of in's
// static part leaves unknown: all of them, but with noArgs the arguments
// ({}), the ticket (none) and the preview (absent) are known too.
func unknownFields(noArgs bool) []string {
	if !noArgs {
		return perCallFields
	}
	var out []string
	for _, f := range perCallFields {
		if f != "args" && f != "ticket" && f != "preview" {
			out = append(out, f)
		}
	}
	return out
}
