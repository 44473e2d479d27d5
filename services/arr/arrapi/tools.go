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

// Read is a plain read tool of an app: read-only, idempotent, its
// arguments' schema derived from In.
func Read[In any](name, title, description string, fn func(ctx context.Context, in In) (any, error)) toolkit.Tool {
	return toolkit.Tool{Name: name, Title: title, Description: description, Annotations: ReadOnly, Handler: toolkit.ReadFor(fn)}
}

// SearchSlack is added to an app's search deadline (SearchTimeout) for
// the deadline of the tools that make it query its indexers, so the app's
// own timeout is what gets reported rather than the call's.
const SearchSlack = 10 * time.Second

// CommandArgs are the arguments of the <app>_command_status tools.
type CommandArgs struct {
	CommandID int `json:"command_id" jsonschema:"Command id returned by a write." schema:"minimum=1,maximum=2147483647"`
}

// CommandStatus is the read of the <app>_command_status tools: the
// CommandResource of GET /command/{id} unchanged.
func CommandStatus(c *Client) func(ctx context.Context, in CommandArgs) (any, error) {
	return func(ctx context.Context, in CommandArgs) (any, error) {
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

// Paging is the paging of the list tools of every app; zero means the
// default (page 1, 20 items).
type Paging struct {
	Page     int `json:"page,omitempty" jsonschema:"Page number (default 1)." schema:"minimum=1,maximum=100000"`
	PageSize int `json:"page_size,omitempty" jsonschema:"Items per page (default 20)." schema:"minimum=1,maximum=100"`
}

// Defaults fills in the default page and page size.
func (p Paging) Defaults() (page, size int) {
	page, size = p.Page, p.PageSize
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 20
	}
	return page, min(size, 100)
}
