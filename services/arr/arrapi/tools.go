package arrapi

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// ReadOnly are the annotations of the plain read tools of every app:
// reads of a LAN application that may be repeated freely.
var ReadOnly = toolkit.Annotations{ReadOnly: true, Idempotent: true}

// SearchSlack is added to an app's search deadline (SearchTimeout) for
// the deadline of the tools that make it query its indexers, so the app's
// own timeout is what gets reported rather than the call's.
const SearchSlack = 10 * time.Second

// CommandStatus is the read of the <app>_command_status tools: it decodes
// {"command_id": n} and returns the CommandResource of GET /command/{id}
// unchanged.
func CommandStatus(c *Client) toolkit.ReadFunc {
	return func(ctx context.Context, a toolkit.Args) (any, error) {
		var in struct {
			CommandID int `json:"command_id"`
		}
		if err := a.Decode(&in); err != nil {
			return nil, err
		}
		return c.Command(ctx, in.CommandID)
	}
}

// HumanSize renders a byte count in binary units ("1.4 GiB").
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// LanguageNames returns the names of ls, nil for none.
func LanguageNames(ls []Language) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}

// SortedUnique returns a sorted copy of ids and whether no id occurs
// twice; the write tools refuse a list with a repeated id rather than
// silently merging it.
func SortedUnique(ids []int) (sorted []int, unique bool) {
	sorted = slices.Clone(ids)
	slices.Sort(sorted)
	return sorted, len(slices.Compact(slices.Clone(sorted))) == len(sorted)
}

// SafeDetails picks the members keys of a history record's free-form
// data that are set and are no link with credentials (see SensitiveLink),
// clipped to clip bytes when clip > 0; nil when none is left. The rest of
// the data (download URLs with keys, paths, ids of other systems) is
// never shown.
func SafeDetails(data map[string]string, keys []string, clip int) map[string]string {
	var out map[string]string
	for _, k := range keys {
		if v := data[k]; v != "" && !SensitiveLink(v) {
			if out == nil {
				out = map[string]string{}
			}
			if clip > 0 {
				v = Clip(v, clip)
			}
			out[k] = v
		}
	}
	return out
}

// Clip cuts s to at most n bytes on a rune boundary and marks the cut
// with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
