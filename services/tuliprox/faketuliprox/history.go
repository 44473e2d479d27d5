package faketuliprox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Stream history and QoS snapshots as stream_history_api.rs and
// utils/stream_history_viewer.rs answer them (develop at 3.3.3), and, for
// ReleaseSeed, as the seed describes: paged and searched by Tuliprox.

// HistorySearchFields are the record fields the seed's search_field may
// name.
var HistorySearchFields = []string{"api_username", "provider_name", "input_name", "title", "group", "country",
	"user_agent", "source_addr", "item_type", "event_type", "cluster", "stream_identity_key", "disconnect_reason"}

// Filter fields of the released /stream-history (stream_history_viewer.rs
// NUMERIC_FIELDS and STRING_FIELDS); any other query key is refused.
var (
	historyNumericFields = []string{"session_id", "virtual_id", "provider_id", "target_id", "provider_http_status", "shared_stream_id"}
	historyStringFields  = []string{"event_type", "api_username", "provider_name", "provider_username", "input_name", "item_type",
		"title", "group", "country", "source_addr", "disconnect_reason", "connect_failure_reason", "failure_stage",
		"shared_joined_existing", "provider_error_class", "user_agent", "cluster", "container", "stream_url_hash",
		"stream_identity_key", "video_codec", "audio_codec", "audio_channels", "resolution", "fps", "shared"}
)

const secsPerDay = 86400

// refusal is an error text worded as Tuliprox words it.
type refusal string

func (r refusal) Error() string { return string(r) }

func refuse(format string, a ...any) error { return refusal(fmt.Sprintf(format, a...)) }

func toInt(v any) int64 {
	switch t := v.(type) {
	case int:
		return int64(t)
	case int64:
		return t
	case float64:
		return int64(t)
	case json.Number:
		n, _ := t.Int64()
		return n
	}
	return 0
}

// parseBound reads a bound of the seed's API: YYYY-MM-DD (to: the end of
// that day) or a date-time.
func parseBound(s string, end bool) (time.Time, bool) {
	if t, err := time.Parse("2006-01-02", s); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Second)
		}
		return t, true
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseReleased is parse_date_or_datetime: a date or a naive date-time in
// UTC, nothing else (no "T", no zone).
func parseReleased(s string) (int64, bool, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t.Unix(), true, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), false, nil
		}
	}
	return 0, false, refuse("Invalid date format: '%s'. Expected: YYYY-MM-DD, YYYY-MM-DD HH:MM, or YYYY-MM-DD HH:MM:SS", s)
}

// releasedRange is resolve_time_range: both bounds, or one day when only
// one is given, and at least one.
func releasedRange(from, to string) (int64, int64, error) {
	switch {
	case from != "" && to != "":
		start, _, err := parseReleased(from)
		if err != nil {
			return 0, 0, err
		}
		end, dateOnly, err := parseReleased(to)
		if err != nil {
			return 0, 0, err
		}
		if dateOnly {
			end += secsPerDay - 1
		}
		if start > end {
			return 0, 0, refuse("'from' (%s) is after 'to' (%s)", from, to)
		}
		return start, end, nil
	case from != "" || to != "":
		day, _, err := parseReleased(from + to)
		if err != nil {
			return 0, 0, err
		}
		day -= day % secsPerDay
		return day, day + secsPerDay - 1, nil
	}
	return 0, 0, refuse("At least 'from' or 'to' must be specified")
}

// historyFilter is CompiledFilter: every other query key a field of the
// record, matched exactly ignoring ASCII case, as a regular expression
// after "~", or as a number; all must match.
type historyFilter []func(map[string]any) bool

func compileHistoryFilter(q map[string][]string, skip ...string) (historyFilter, error) {
	var f historyFilter
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if contains(skip, key) {
			continue
		}
		value := q[key][len(q[key])-1] // the last of repeated keys wins, as in a HashMap
		switch {
		case contains(historyNumericFields, key):
			n, err := strconv.ParseUint(value, 10, 64)
			if err != nil {
				return nil, refuse("Filter '%s' expects a numeric value, got '%s'", key, value)
			}
			// An empty field counts as 0, as unwrap_or(0) does.
			f = append(f, func(r map[string]any) bool { return uint64(toInt(r[key])) == n })
		case !contains(historyStringFields, key):
			return nil, refuse("Unknown filter field: '%s'", key)
		case strings.HasPrefix(value, "~"):
			re, err := regexp.Compile(value[1:])
			if err != nil {
				return nil, refuse("Invalid regex for filter '%s': %v", key, err)
			}
			f = append(f, func(r map[string]any) bool { s, ok := fieldString(r[key]); return ok && re.MatchString(s) })
		default:
			f = append(f, func(r map[string]any) bool { s, ok := fieldString(r[key]); return ok && asciiEqualFold(s, value) })
		}
	}
	return f, nil
}

func (f historyFilter) matches(r map[string]any) bool {
	for _, m := range f {
		if !m(r) {
			return false
		}
	}
	return true
}

func fieldString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case bool:
		return strconv.FormatBool(t), true
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// records returns the history in [from, to] oldest first, as Tuliprox
// reads its day files; f.mu is taken.
func (f *Fake) records(from, to int64, keep historyFilter) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for _, rec := range f.data.History {
		ts := toInt(rec["event_ts_utc"])
		if ts >= from && ts <= to && keep.matches(rec) {
			out = append(out, rec)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return toInt(out[i]["event_ts_utc"]) < toInt(out[j]["event_ts_utc"]) })
	return out
}

// seedRange reads the seed's optional from/to.
func seedRange(w http.ResponseWriter, q map[string][]string) (int64, int64, bool) {
	from, to := int64(0), int64(1<<40)
	for _, b := range []struct {
		key string
		end bool
		out *int64
	}{{"from", false, &from}, {"to", true, &to}} {
		if s := first(q, b.key); s != "" {
			t, ok := parseBound(s, b.end)
			if !ok {
				writeError(w, http.StatusBadRequest, "Invalid '"+b.key+"' date: "+s)
				return 0, 0, false
			}
			*b.out = t.Unix()
		}
	}
	return from, to, true
}

func first(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (f *Fake) streamHistory(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoStreamHistory {
		writeError(w, http.StatusServiceUnavailable, "Stream history is not enabled")
		return
	}
	q := r.URL.Query()
	if f.release() != ReleaseSeed {
		from, to, err := releasedRange(first(q, "from"), first(q, "to"))
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		keep, err := compileHistoryFilter(q, "from", "to")
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, f.records(from, to, keep))
		return
	}
	from, to, ok := seedRange(w, q)
	if !ok {
		return
	}
	recs := f.records(from, to, nil)
	page, pageSize := 1, 50
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "page must be >= 1")
			return
		}
		page = n
	}
	if s := q.Get("page_size"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || (n != 25 && n != 50 && n != 100 && n != 200) {
			writeError(w, http.StatusBadRequest, "page_size must be 25, 50, 100 or 200")
			return
		}
		pageSize = n
	}
	fields := HistorySearchFields
	if s := q.Get("search_field"); s != "" {
		fields = strings.Split(s, ",")
	}
	if search := q.Get("search"); search != "" {
		var match func(string) bool
		if q.Get("search_mode") == "regex" {
			re, err := regexp.Compile(search)
			if err != nil {
				writeError(w, http.StatusBadRequest, "Invalid regex")
				return
			}
			match = re.MatchString
		} else {
			needle := strings.ToLower(search)
			match = func(s string) bool { return strings.Contains(strings.ToLower(s), needle) }
		}
		var kept []map[string]any
		for _, rec := range recs {
			for _, fld := range fields {
				if s, ok := rec[fld].(string); ok && match(s) {
					kept = append(kept, rec)
					break
				}
			}
		}
		recs = kept
	}
	sort.SliceStable(recs, func(i, j int) bool { return toInt(recs[i]["event_ts_utc"]) > toInt(recs[j]["event_ts_utc"]) })
	total := len(recs)
	lo := min((page-1)*pageSize, total)
	hi := min(lo+pageSize, total)
	writeJSON(w, http.StatusOK, map[string]any{"page": page, "page_size": pageSize, "total": total,
		"has_more": hi < total, "records": recs[lo:hi]})
}

// historySummary is aggregate_provider_summaries over the filtered range:
// every record counts as a session, by provider name ("unknown" without
// one), sorted by name. The seed's from/to are optional.
func (f *Fake) historySummary(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoStreamHistory {
		writeError(w, http.StatusServiceUnavailable, "Stream history is not enabled")
		return
	}
	q := r.URL.Query()
	var from, to int64
	if f.release() != ReleaseSeed {
		var err error
		if from, to, err = releasedRange(first(q, "from"), first(q, "to")); err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	} else {
		var ok bool
		if from, to, ok = seedRange(w, q); !ok {
			return
		}
	}
	keep, err := compileHistoryFilter(q, "from", "to")
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	type agg struct{ sessions, disconnects, bytes, dur, durN, lat, latN int64 }
	by := map[string]*agg{}
	for _, rec := range f.records(from, to, keep) {
		p, ok := rec["provider_name"].(string)
		if !ok {
			p = "unknown"
		}
		a := by[p]
		if a == nil {
			a = &agg{}
			by[p] = a
		}
		a.sessions++
		if rec["event_type"] == "disconnect" {
			a.disconnects++
		}
		a.bytes += toInt(rec["bytes_sent"])
		if rec["session_duration"] != nil {
			a.dur += toInt(rec["session_duration"])
			a.durN++
		}
		if rec["first_byte_latency_ms"] != nil {
			a.lat += toInt(rec["first_byte_latency_ms"])
			a.latN++
		}
	}
	out := []map[string]any{}
	for p, a := range by {
		s := map[string]any{"provider_name": p, "session_count": a.sessions, "disconnect_count": a.disconnects, "total_bytes_sent": a.bytes,
			"avg_session_duration_secs": nil, "avg_first_byte_latency_ms": nil}
		if a.durN > 0 {
			s["avg_session_duration_secs"] = a.dur / a.durN
		}
		if a.latN > 0 {
			s["avg_first_byte_latency_ms"] = a.lat / a.latN
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["provider_name"].(string) < out[j]["provider_name"].(string) })
	writeJSON(w, http.StatusOK, out)
}

// qosSnapshots is qos_snapshot_query: exact filters on
// stream_identity_key, input_name, provider_name, item_type and target_id
// (the seed's also on target_name), other keys ignored, best 24 h score
// first, at most limit (default 100, at least 1).
func (f *Fake) qosSnapshots(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoQoS {
		writeError(w, http.StatusServiceUnavailable, "QoS aggregation is not enabled")
		return
	}
	q := r.URL.Query()
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			// axum's Query rejection, in plain text.
			http.Error(w, "Failed to deserialize query string: limit: invalid digit found in string", http.StatusBadRequest)
			return
		}
		limit = max(int(n), 1)
	}
	keys := []string{"stream_identity_key", "input_name", "provider_name", "item_type"}
	if f.release() == ReleaseSeed {
		keys = append(keys, "target_name")
	}
	var targetID int64 = -1
	if s := q.Get("target_id"); strings.TrimSpace(s) != "" {
		n, err := strconv.ParseUint(s, 10, 16)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Invalid QoS snapshot filter value for target_id: "+s)
			return
		}
		targetID = int64(n)
	}
	f.mu.Lock()
	var out []map[string]any
	for _, s := range f.data.QoS {
		keep := targetID < 0 || toInt(s["target_id"]) == targetID
		for _, k := range keys {
			if want := q.Get(k); strings.TrimSpace(want) != "" && s[k] != want {
				keep = false
			}
		}
		if keep {
			out = append(out, f.qosView(s))
		}
	}
	f.mu.Unlock()
	score := func(s map[string]any) int64 { w, _ := s["window_24h"].(map[string]any); return toInt(w["score"]) }
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := score(out[i]), score(out[j]); a != b {
			return a > b
		}
		return out[i]["stream_identity_key"].(string) < out[j]["stream_identity_key"].(string)
	})
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, out[:min(limit, len(out))])
}

func (f *Fake) qosSnapshot(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoQoS {
		writeError(w, http.StatusServiceUnavailable, "QoS aggregation is not enabled")
		return
	}
	key := r.PathValue("key")
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.data.QoS {
		if s["stream_identity_key"] == key {
			writeJSON(w, http.StatusOK, f.qosView(s))
			return
		}
	}
	writeError(w, http.StatusNotFound, "QoS snapshot not found")
}

// qosView is a snapshot as this release answers it: the released record
// names its target by id only (qos_snapshot_repository.rs).
func (f *Fake) qosView(s map[string]any) map[string]any {
	if f.release() == ReleaseSeed {
		return s
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		if k != "target_name" {
			out[k] = v
		}
	}
	return out
}
