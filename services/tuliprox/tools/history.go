package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/tuliprox/client"
)

// Stream history works with both APIs: the seed's, which pages and
// searches, and the released one (stream_history_api.rs), which takes
// from, to and exact filter fields only and answers the whole range as a
// bare array; toolgate then pages and searches it itself, within bounds.

// defaultHistoryDays is the range a query without from and to covers:
// the released API needs a range, and both APIs get the same one.
const defaultHistoryDays = 7

// maxHistoryRecords bounds the records toolgate pages and searches
// itself; a range holding more must be narrowed. Real records (about 1 KB
// each) meet the response cap (4 MiB) first; this bounds small ones.
const maxHistoryRecords = 10_000

// historySearchFields are the record fields search_field may name, and
// searched by default.
var historySearchFields = []string{"api_username", "provider_name", "input_name", "title", "group", "country",
	"user_agent", "source_addr", "item_type", "event_type", "cluster", "stream_identity_key", "disconnect_reason"}

// historyRange is a query's range in the form both APIs accept: a date,
// or a UTC date-time "YYYY-MM-DD HH:MM:SS" (the released API knows no
// "T" and no zone).
type historyRange struct {
	from, to string
	note     string
}

func (r historyRange) add(m map[string]any) map[string]any {
	m["from"], m["to"] = r.from, r.to
	if r.note != "" {
		m["range_note"] = r.note
	}
	return m
}

// parseBound reads a from/to argument: a date, or a date-time with "T" or
// a space, seconds and fraction optional, in UTC unless it names a zone.
func parseBound(name, s string) (t time.Time, dateOnly bool, err error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true, nil
	}
	norm := s
	if len(norm) > 10 && norm[10] == ' ' {
		norm = norm[:10] + "T" + norm[11:]
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999-0700", "2006-01-02T15:04Z07:00",
		"2006-01-02T15:04-0700", "2006-01-02T15:04:05.999999999", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, norm); err == nil {
			return t.UTC(), false, nil
		}
	}
	return time.Time{}, false, toolerr.New(toolerr.InvalidArgument, "%s is neither a date (YYYY-MM-DD) nor a date-time (YYYY-MM-DDTHH:MM:SS, UTC unless a zone is given)", name)
}

// historyBounds turns the from/to arguments into the range sent: a
// missing to is today (UTC), a missing from is six days before to.
func historyBounds(from, to string, now time.Time) (historyRange, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	var r historyRange
	var start, end time.Time
	switch {
	case to == "":
		end, r.to = today.Add(24*time.Hour-time.Second), today.Format(time.DateOnly)
	default:
		t, dateOnly, err := parseBound("to", to)
		if err != nil {
			return r, err
		}
		end, r.to = t, t.Format(time.DateTime)
		if dateOnly {
			end, r.to = t.Add(24*time.Hour-time.Second), t.Format(time.DateOnly)
		}
	}
	switch {
	case from == "":
		day := end.Truncate(24*time.Hour).AddDate(0, 0, -(defaultHistoryDays - 1))
		start, r.from = day, day.Format(time.DateOnly)
	default:
		t, dateOnly, err := parseBound("from", from)
		if err != nil {
			return r, err
		}
		start, r.from = t, t.Format(time.DateTime)
		if dateOnly {
			r.from = t.Format(time.DateOnly)
		}
	}
	if start.After(end) {
		return r, toolerr.New(toolerr.InvalidArgument, "from (%s) is after to (%s)", r.from, r.to)
	}
	switch {
	case from == "" && to == "":
		r.note = "no from or to given: the last 7 days (UTC)"
	case from == "":
		r.note = "no from given: the 7 days up to to"
	case to == "":
		r.note = "no to given: up to today (UTC)"
	}
	return r, nil
}

// exactFilter keeps a filter value exact: the released API reads a value
// starting with "~" as a regular expression.
func exactFilter(v string) string {
	if strings.HasPrefix(v, "~") {
		return "~(?i)^" + regexp.QuoteMeta(v) + "$"
	}
	return v
}

// getHistory asks /stream-history; refused tells a 400 "Unknown filter
// field", the released API's answer to the seed's paging and search.
func (s *Service) getHistory(ctx context.Context, q url.Values) (v any, refused bool, err error) {
	resp, err := s.c.Do(ctx, client.Call{Route: []string{"stream-history"}, Query: q, Permission: permSystemRead,
		Feature: featureHistory, Needs: needsHistory})
	if err != nil {
		refused = resp != nil && resp.Status == 400 && bytes.Contains(resp.Body, []byte("Unknown filter field"))
		return nil, refused, err
	}
	return v, false, client.Decode(resp, &v)
}

func (s *Service) history(ctx context.Context, in historyArgs) (map[string]any, error) {
	rng, err := historyBounds(in.From, in.To, s.c.Now())
	if err != nil {
		return nil, err
	}
	var re *regexp.Regexp
	if in.SearchMode == "regex" && in.Search != "" {
		if re, err = regexp.Compile(in.Search); err != nil {
			return nil, toolerr.Wrap(toolerr.InvalidArgument, err, "search is not a valid regular expression: %v", err)
		}
	}
	base := url.Values{"from": {rng.from}, "to": {rng.to}}
	paged := url.Values{"from": {rng.from}, "to": {rng.to}}
	setInt(paged, "page", in.Page)
	setInt(paged, "page_size", in.PageSize)
	setNonEmpty(paged, "search", in.Search)
	setNonEmpty(paged, "search_mode", in.SearchMode)
	setList(paged, "search_field", in.SearchField)
	wantsPaging := len(paged) > len(base)

	if form := s.rel.historyForm(); form == formPaged || (form == formUnknown && wantsPaging) {
		v, refused, err := s.getHistory(ctx, paged)
		if err == nil {
			return s.historyAnswer(v, in, re, rng)
		}
		if !refused {
			return nil, err
		}
		// The released API: ask again with the range alone.
		s.rel.learnHistory(formFiltered)
	}
	v, _, err := s.getHistory(ctx, base)
	if err != nil {
		return nil, err
	}
	if _, seed := v.(map[string]any); seed && wantsPaging {
		// Tuliprox pages after all (updated since it was learned): let it.
		s.rel.learnHistory(formPaged)
		if v, _, err = s.getHistory(ctx, paged); err != nil {
			return nil, err
		}
	}
	return s.historyAnswer(v, in, re, rng)
}

// historyAnswer finishes either API's answer, learning which it was: the
// seed's page passes on; a bare array is paged and searched here.
func (s *Service) historyAnswer(v any, in historyArgs, re *regexp.Regexp, rng historyRange) (map[string]any, error) {
	switch t := v.(type) {
	case map[string]any:
		s.rel.learnHistory(formPaged)
		return rng.add(scrubResult(t).(map[string]any)), nil
	case []any:
		s.rel.learnHistory(formFiltered)
		return pageHistory(t, in, re, rng)
	}
	return nil, toolerr.New(toolerr.UpstreamUnavailable, "Tuliprox answered the stream history with JSON that is neither a page nor a list")
}

// pageHistory searches and pages a released answer as the seed's API
// does: newest first, page_size 50 by default.
func pageHistory(recs []any, in historyArgs, re *regexp.Regexp, rng historyRange) (map[string]any, error) {
	if len(recs) > maxHistoryRecords {
		return nil, toolerr.New(toolerr.TooLarge, "the range holds more than %d records, more than toolgate pages for this Tuliprox release; narrow from and to", maxHistoryRecords)
	}
	if in.Search != "" {
		match := func(s string) bool { return re.MatchString(s) }
		if re == nil {
			needle := strings.ToLower(in.Search)
			match = func(s string) bool { return strings.Contains(strings.ToLower(s), needle) }
		}
		fields := in.SearchField
		if len(fields) == 0 {
			fields = historySearchFields
		}
		kept := recs[:0:0]
		for _, r := range recs {
			m, _ := r.(map[string]any)
			for _, f := range fields {
				if s, ok := m[f].(string); ok && match(s) {
					kept = append(kept, r)
					break
				}
			}
		}
		recs = kept
	}
	ts := func(r any) int64 {
		m, _ := r.(map[string]any)
		n, _ := m["event_ts_utc"].(json.Number)
		i, _ := n.Int64()
		return i
	}
	sorted := append([]any(nil), recs...)
	sort.SliceStable(sorted, func(i, j int) bool { return ts(sorted[i]) > ts(sorted[j]) })
	page, size := max(in.Page, 1), in.PageSize
	if size == 0 {
		size = 50
	}
	lo := min((page-1)*size, len(sorted))
	hi := min(lo+size, len(sorted))
	return rng.add(map[string]any{
		"page": page, "page_size": size, "total": len(sorted), "has_more": hi < len(sorted),
		"records":  scrubResult(sorted[lo:hi]),
		"paged_by": "toolgate: this Tuliprox release answers whole ranges, so toolgate searched and paged them (newest first)",
	}), nil
}

func (s *Service) historySummary(ctx context.Context, in summaryArgs) (map[string]any, error) {
	rng, err := historyBounds(in.From, in.To, s.c.Now())
	if err != nil {
		return nil, err
	}
	q := url.Values{"from": {rng.from}, "to": {rng.to}}
	for k, v := range map[string]string{"provider_name": in.ProviderName, "input_name": in.InputName,
		"api_username": in.APIUsername, "item_type": in.ItemType, "event_type": in.EventType} {
		setNonEmpty(q, k, exactFilter(v))
	}
	m, err := s.list(ctx, client.Call{Route: []string{"stream-history", "summary"}, Query: q, Permission: permSystemRead,
		Feature: featureHistory, Needs: needsHistory}, "providers")
	if err != nil {
		return nil, err
	}
	return rng.add(m), nil
}

// errQoSTargetName: the released API ignores target_name (it filters by
// target_id) and answers every target's snapshots.
var errQoSTargetName = toolerr.Wrap(toolerr.NotFound, client.ErrUnsupported,
	"not supported by this Tuliprox release (needs the seed's target_name filter): it answers QoS snapshots without target names and filters them by target id only; leave target_name out")

// checkTargetName keeps the snapshots of the target asked for, and
// refuses when Tuliprox's answer cannot show it filtered.
func checkTargetName(m map[string]any, want string) (map[string]any, error) {
	list, ok := m["snapshots"].([]any)
	if !ok {
		return nil, errQoSTargetName
	}
	kept := list[:0:0]
	for _, it := range list {
		o, _ := it.(map[string]any)
		name, ok := o["target_name"].(string)
		if !ok {
			return nil, errQoSTargetName
		}
		if name == want {
			kept = append(kept, it)
		}
	}
	m["snapshots"], m["count"] = kept, len(kept)
	return m, nil
}
