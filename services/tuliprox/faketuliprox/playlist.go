package faketuliprox

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Record is one stored playlist record.
type Record struct {
	VirtualID     int
	ProviderID    string
	Name, Title   string
	Group         string
	ItemType      string // live, video, series, series_info, catchup
	Cluster       string // live, video, series
	EPGChannelID  string // "" for none
	CategoryID    int    // 0 for none (M3U)
	ChannelNo     int
	Logo          string
	ParentCode    string
	Rec           bool
	InputName     string
	InputStreamID int
	SourceOrdinal int
	Additional    map[string]any
}

// Programme is one EPG programme.
type Programme struct {
	Start, Stop time.Time
	Title, Desc string
	Categories  []string
	Live, New   bool
}

// Channel is one channel of a processed EPG database.
type Channel struct {
	ID, Title  string
	Icon       bool
	Programmes []Programme
}

// Target is a playlist target with its stored playlist and EPG databases
// (by output).
type Target struct {
	ID      int
	Name    string
	Outputs []string
	EPG     map[string][]*Channel
	// Stored is false for a target that was never updated.
	Stored  bool
	Records []Record
	// Skipped is how many stored records cannot be read.
	Skipped int
}

// Input is a playlist input.
type Input struct {
	ID       int
	Name     string
	Type     string
	Stored   bool
	Records  []Record
	Skipped  int
	Clusters []string
}

var epgIDs = []string{"daserste.de", "zdf.de", "arte.de", "sport1.de", "bbcnews.uk", "empty.tv", "old.tv", "later.tv", "notitle.tv"}

func demoPlaylists(start time.Time) ([]*Target, []*Input) {
	groups := []string{"DE | Public", "DE | Sports", "UK | News", "DE | Kids"}
	var main []Record
	for i := range 640 {
		r := Record{VirtualID: 1001 + i, ProviderID: strconv.Itoa(4711 + i), Name: fmt.Sprintf("Channel %03d", i+1),
			Group: groups[i%len(groups)], ItemType: "live", Cluster: "live", CategoryID: 10 + i%len(groups), ChannelNo: i + 1,
			Logo: "http://logos.provider-a.example/" + strconv.Itoa(i) + ".png", InputName: "provider-a", InputStreamID: 4711 + i, SourceOrdinal: i}
		switch {
		case i == 0:
			r.Name, r.EPGChannelID = "Das Erste HD", "daserste.de"
		case i == 1:
			r.Name, r.EPGChannelID = "ZDF HD", "zdf.de"
		case i%10 == 9:
			// no EPG id: missing_id
		case i%25 == 7:
			r.EPGChannelID = "ghost.tv" // not in the EPG database: unmatched
		default:
			r.EPGChannelID = epgIDs[i%len(epgIDs)]
		}
		r.Title = r.Name
		main = append(main, r)
	}
	for i := range 30 {
		main = append(main, Record{VirtualID: 5001 + i, ProviderID: strconv.Itoa(815 + i), Name: fmt.Sprintf("Movie %02d", i+1),
			Title: fmt.Sprintf("Movie %02d (20%02d)", i+1, i%25), Group: "Movies | Drama", ItemType: "video", Cluster: "video",
			CategoryID: 40, InputName: "provider-a", InputStreamID: 815 + i, SourceOrdinal: i,
			Additional: map[string]any{"plot": "A quiet film.", "rating": 7.1, "release_date": "2019-05-01",
				"direct_source": "http://line.provider-a.example:8080/movie/" + SecretProviderUser + "/" + SecretAdditionalPass + "/" + strconv.Itoa(815+i) + ".mkv",
				"cover_url":     "http://img.provider-a.example/c.jpg"}})
	}
	for i := range 5 {
		main = append(main, Record{VirtualID: 7001 + i, ProviderID: strconv.Itoa(300 + i), Name: fmt.Sprintf("Series %d", i+1),
			Title: fmt.Sprintf("Series %d", i+1), Group: "Series | Crime", ItemType: "series_info", Cluster: "series", CategoryID: 60,
			InputName: "provider-a", InputStreamID: 300 + i, SourceOrdinal: i})
		for e := range 2 {
			main = append(main, Record{VirtualID: 7100 + 10*i + e, ProviderID: strconv.Itoa(3000 + 10*i + e), Name: fmt.Sprintf("Series %d S01E0%d", i+1, e+1),
				Title: fmt.Sprintf("Series %d S01E0%d", i+1, e+1), Group: "Series | Crime", ItemType: "series", Cluster: "series", CategoryID: 60,
				InputName: "provider-a", InputStreamID: 3000 + 10*i + e, SourceOrdinal: i})
		}
	}
	hourly := func(from, to time.Time, title string) []Programme {
		var ps []Programme
		for t := from; t.Before(to); t = t.Add(time.Hour) {
			ps = append(ps, Programme{Start: t, Stop: t.Add(time.Hour), Title: title + " " + t.UTC().Format("15:04"),
				Desc: strings.Repeat("A long description. ", 40), Categories: []string{"News"}, New: t.Hour()%6 == 0})
		}
		return ps
	}
	base := start.Truncate(time.Hour)
	healthy := func(id, title string) *Channel {
		return &Channel{ID: id, Title: title, Icon: true, Programmes: hourly(base.Add(-6*time.Hour), base.Add(30*time.Hour), title)}
	}
	mainEPG := []*Channel{
		healthy("daserste.de", "Das Erste"), healthy("zdf.de", "ZDF"), healthy("arte.de", "Arte"), healthy("sport1.de", "Sport1"),
		healthy("bbcnews.uk", "BBC News"),
		{ID: "empty.tv", Title: "Empty TV", Icon: false},
		{ID: "old.tv", Title: "Old TV", Icon: true, Programmes: hourly(base.Add(-72*time.Hour), base.Add(-48*time.Hour), "Old")},
		{ID: "later.tv", Title: "Later TV", Programmes: hourly(base.Add(48*time.Hour), base.Add(50*time.Hour), "Later")},
		{ID: "notitle.tv", Title: "", Icon: false, Programmes: hourly(base.Add(-2*time.Hour), base.Add(10*time.Hour), "Untitled")},
		healthy("orphan.tv", "Orphan TV"),
	}
	kids := []Record{}
	for i := range 12 {
		kids = append(kids, Record{VirtualID: 9001 + i, ProviderID: strconv.Itoa(i + 1), Name: fmt.Sprintf("Kids %02d", i+1), Title: fmt.Sprintf("Kids %02d", i+1),
			Group: "Kids", ItemType: "live", Cluster: "live", ChannelNo: i + 1, EPGChannelID: []string{"kika.de", "toggo.de", ""}[i%3],
			InputName: "provider-b", InputStreamID: i + 1, SourceOrdinal: i})
	}
	radio := []Record{{VirtualID: 9501, ProviderID: "r1", Name: "Radio One", Title: "Radio One", Group: "Radio", ItemType: "live", Cluster: "live", InputName: "provider-b", InputStreamID: 1}}
	targets := []*Target{
		{ID: 1, Name: "main", Outputs: []string{"xtream", "m3u"}, EPG: map[string][]*Channel{"xtream": mainEPG}, Stored: true, Records: main},
		{ID: 2, Name: "kids", Outputs: []string{"m3u"}, EPG: map[string][]*Channel{"m3u": {healthy("kika.de", "KiKA"), healthy("toggo.de", "Toggo")}},
			Stored: true, Records: kids, Skipped: 1},
		{ID: 3, Name: "sports", Outputs: []string{"xtream"}, EPG: map[string][]*Channel{"xtream": {healthy("sport1.de", "Sport1"), healthy("eurosport.de", "Eurosport")}}},
		{ID: 4, Name: "radio", Outputs: []string{"m3u"}, Stored: true, Records: radio},
		{ID: 5, Name: "never", Outputs: []string{"xtream"}},
	}
	var provA []Record
	for _, r := range main {
		if r.Cluster == "live" && r.VirtualID > 1100 {
			continue
		}
		provA = append(provA, r)
	}
	inputs := []*Input{
		{ID: 1, Name: "provider-a", Type: "xtream", Stored: true, Records: provA, Clusters: []string{"live", "video", "series"}},
		{ID: 2, Name: "provider-b", Type: "m3u", Stored: true, Records: append(slices.Clone(kids), radio...), Skipped: 2, Clusters: []string{"live"}},
		{ID: 3, Name: "stalker-x", Type: "stalker"},
	}
	return targets, inputs
}

func (d *Data) target(name string) *Target {
	for _, t := range d.Targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func (d *Data) input(name string) *Input {
	for _, in := range d.Inputs {
		if in.Name == name {
			return in
		}
	}
	return nil
}

func (f *Fake) sources(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	targets := []map[string]any{}
	for _, t := range f.data.Targets {
		epg := []map[string]any{}
		for _, o := range t.Outputs {
			_, ok := t.EPG[o]
			epg = append(epg, map[string]any{"output": o, "available": ok})
		}
		targets = append(targets, map[string]any{"id": t.ID, "name": t.Name, "outputs": t.Outputs, "epg": epg})
	}
	inputs := []map[string]any{}
	for _, in := range f.data.Inputs {
		clusters := in.Clusters
		if clusters == nil {
			clusters = []string{}
		}
		inputs = append(inputs, map[string]any{"id": in.ID, "name": in.Name, "input_type": in.Type, "clusters": clusters})
	}
	writeJSON(w, http.StatusOK, map[string]any{"targets": targets, "inputs": inputs})
}

// DefaultFields are the fields returned without a fields parameter.
var DefaultFields = []string{"virtual_id", "provider_id", "name", "title", "group", "item_type", "cluster", "epg_channel_id", "category_id", "channel_no"}

// AllFields are the selectable fields.
var AllFields = append(slices.Clone(DefaultFields), "logo", "logo_small", "parent_code", "rec", "input_name", "input_stream_id",
	"source_ordinal", "additional_properties", "epg_status")

func list(q string) []string {
	if q == "" {
		return nil
	}
	return strings.Split(q, ",")
}

// paging reads offset and limit (default def, clamped to max).
func paging(w http.ResponseWriter, r *http.Request, def, maxLimit int) (offset, limit int, clamped, ok bool) {
	q := r.URL.Query()
	limit = def
	if s := q.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "offset must be >= 0")
			return 0, 0, false, false
		}
		offset = n
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, "limit must be >= 1")
			return 0, 0, false, false
		}
		limit = n
	}
	if limit > maxLimit {
		limit, clamped = maxLimit, true
	}
	return offset, limit, clamped, true
}

// epgSet is the set of channel ids of a target's first EPG database.
func epgSet(t *Target) map[string]bool {
	for _, o := range t.Outputs {
		if chans, ok := t.EPG[o]; ok {
			set := map[string]bool{}
			for _, c := range chans {
				set[c.ID] = true
			}
			return set
		}
	}
	return nil
}

func epgStatus(r Record, set map[string]bool) string {
	switch {
	case r.EPGChannelID == "":
		return "missing_id"
	case !set[r.EPGChannelID]:
		return "unmatched"
	}
	return "matched"
}

func (f *Fake) items(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	tname, iname := q.Get("target"), q.Get("input")
	if (tname == "") == (iname == "") {
		writeError(w, http.StatusBadRequest, "exactly one of target or input is required")
		return
	}
	cluster := q.Get("cluster")
	if cluster != "live" && cluster != "video" && cluster != "series" {
		writeError(w, http.StatusBadRequest, "cluster must be live, video or series")
		return
	}
	offset, limit, clamped, ok := paging(w, r, 50, 500)
	if !ok {
		return
	}
	fields := list(q.Get("fields"))
	if fields == nil {
		fields = DefaultFields
	}
	for _, fl := range fields {
		if !slices.Contains(AllFields, fl) {
			writeError(w, http.StatusBadRequest, "unknown field: "+fl)
			return
		}
	}
	searchFields := list(q.Get("search_field"))
	if searchFields == nil {
		searchFields = []string{"name", "title", "group"}
	}
	statuses := list(q.Get("epg_status"))
	f.mu.Lock()
	defer f.mu.Unlock()
	var (
		recs    []Record
		stored  bool
		skipped int
		set     map[string]bool
		source  = map[string]any{}
	)
	if tname != "" {
		t := f.data.target(tname)
		if t == nil {
			writeError(w, http.StatusNotFound, "target not found")
			return
		}
		source["kind"], source["name"] = "target", t.Name
		recs, stored, skipped, set = t.Records, t.Stored, t.Skipped, epgSet(t)
	} else {
		if len(statuses) > 0 {
			writeError(w, http.StatusBadRequest, "epg_status is only available for targets")
			return
		}
		in := f.data.input(iname)
		if in == nil {
			writeError(w, http.StatusNotFound, "input not found")
			return
		}
		source["kind"], source["name"] = "input", in.Name
		recs, stored, skipped = in.Records, in.Stored, in.Skipped
	}
	resp := map[string]any{"source": source, "cluster": cluster, "total_matched": 0, "skipped_records": 0, "offset": offset,
		"limit": limit, "limit_clamped": clamped, "returned": 0, "has_more": false, "items": []any{}}
	if !stored {
		resp["note"] = "No playlist is stored for this source yet; it was never updated."
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if len(statuses) > 0 && set == nil {
		resp["note"] = "This target has no EPG database, so no item has an EPG status."
		writeJSON(w, http.StatusOK, resp)
		return
	}
	needle := strings.ToLower(q.Get("search"))
	group := q.Get("group")
	var matched []Record
	for _, rec := range recs {
		if rec.Cluster != cluster || (tname != "" && rec.ItemType == "series") {
			continue
		}
		if group != "" && rec.Group != group {
			continue
		}
		if needle != "" && !matchesSearch(rec, needle, searchFields) {
			continue
		}
		if len(statuses) > 0 && !slices.Contains(statuses, epgStatus(rec, set)) {
			continue
		}
		matched = append(matched, rec)
	}
	lo := min(offset, len(matched))
	hi := min(lo+limit, len(matched))
	items := []any{}
	for _, rec := range matched[lo:hi] {
		items = append(items, project(rec, fields, set, f.opts))
	}
	resp["total_matched"], resp["skipped_records"], resp["returned"], resp["has_more"], resp["items"] = len(matched), skipped, len(items), hi < len(matched), items
	if skipped > 0 {
		resp["note"] = fmt.Sprintf("%d stored record(s) could not be read and are missing from this listing.", skipped)
	}
	writeJSON(w, http.StatusOK, resp)
}

func matchesSearch(r Record, needle string, fields []string) bool {
	for _, f := range fields {
		var v string
		switch f {
		case "name":
			v = r.Name
		case "title":
			v = r.Title
		case "group":
			v = r.Group
		case "epg_channel_id":
			v = r.EPGChannelID
		case "provider_id":
			v = r.ProviderID
		case "input_name":
			v = r.InputName
		}
		if strings.Contains(strings.ToLower(v), needle) {
			return true
		}
	}
	return false
}

// project returns the selected fields of r as Tuliprox does: URL-like
// members of additional_properties removed (unless the fake is hostile).
func project(r Record, fields []string, set map[string]bool, o Options) map[string]any {
	m := map[string]any{}
	for _, f := range fields {
		switch f {
		case "virtual_id":
			m[f] = r.VirtualID
		case "provider_id":
			m[f] = r.ProviderID
		case "name":
			m[f] = r.Name
		case "title":
			m[f] = r.Title
		case "group":
			m[f] = r.Group
		case "item_type":
			m[f] = r.ItemType
		case "cluster":
			m[f] = r.Cluster
		case "epg_channel_id":
			m[f] = nullIfEmpty(r.EPGChannelID)
		case "category_id":
			if r.CategoryID == 0 {
				m[f] = nil
			} else {
				m[f] = r.CategoryID
			}
		case "channel_no":
			m[f] = r.ChannelNo
		case "logo", "logo_small":
			m[f] = nullIfEmpty(r.Logo)
		case "parent_code":
			m[f] = nullIfEmpty(r.ParentCode)
		case "rec":
			m[f] = r.Rec
		case "input_name":
			m[f] = r.InputName
		case "input_stream_id":
			m[f] = r.InputStreamID
		case "source_ordinal":
			m[f] = r.SourceOrdinal
		case "additional_properties":
			props := maps.Clone(r.Additional)
			if !o.Hostile {
				for k := range props {
					if k == "direct_source" || k == "url" || strings.HasSuffix(k, "_url") {
						delete(props, k)
					}
				}
			}
			m[f] = props
		case "epg_status":
			if set != nil {
				m[f] = epgStatus(r, set)
			}
		}
	}
	return m
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// pickOutput returns the output whose EPG database to read.
func pickOutput(w http.ResponseWriter, t *Target, output string) (string, bool) {
	if output != "" {
		if !slices.Contains(t.Outputs, output) {
			writeError(w, http.StatusBadRequest, "the target has no output "+output)
			return "", false
		}
		return output, true
	}
	for _, o := range t.Outputs {
		if _, ok := t.EPG[o]; ok {
			return o, true
		}
	}
	if len(t.Outputs) > 0 {
		return t.Outputs[0], true
	}
	return "", true
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (f *Fake) epgChannels(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	offset, limit, clamped, ok := paging(w, r, 50, 500)
	if !ok {
		return
	}
	issues := list(q.Get("issue"))
	for _, is := range issues {
		if !slices.Contains([]string{"no_programmes", "expired", "not_current", "no_title", "unreferenced"}, is) {
			writeError(w, http.StatusBadRequest, "unknown issue: "+is)
			return
		}
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.data.target(q.Get("target"))
	if t == nil {
		writeError(w, http.StatusNotFound, "target not found")
		return
	}
	output, ok := pickOutput(w, t, q.Get("output"))
	if !ok {
		return
	}
	resp := map[string]any{"target": t.Name, "output": output, "total_matched": 0, "offset": offset, "limit": limit, "limit_clamped": clamped,
		"returned": 0, "has_more": false, "skipped_playlist_records": 0, "channels": []any{}}
	chans, has := t.EPG[output]
	if !has {
		resp["note"] = "This target has no EPG database for output " + output + " (no EPG source, or the target was never updated)."
		writeJSON(w, http.StatusOK, resp)
		return
	}
	var refs map[string]bool
	var notes []string
	if t.Stored {
		refs = map[string]bool{}
		for _, rec := range t.Records {
			if rec.EPGChannelID != "" {
				refs[rec.EPGChannelID] = true
			}
		}
	} else {
		notes = append(notes, "The playlist of this target is not stored, so referenced_by_playlist is null and the unreferenced filter matches nothing.")
	}
	if t.Skipped > 0 {
		notes = append(notes, fmt.Sprintf("%d stored playlist record(s) could not be read; referenced_by_playlist and the unreferenced filter may be wrong for channels used only by them.", t.Skipped))
	}
	needle := strings.ToLower(q.Get("search"))
	var matched []map[string]any
	for _, c := range chans {
		if needle != "" && !strings.Contains(strings.ToLower(c.ID), needle) && !strings.Contains(strings.ToLower(c.Title), needle) {
			continue
		}
		var first, last time.Time
		covers, future := false, false
		for i, p := range c.Programmes {
			if i == 0 || p.Start.Before(first) {
				first = p.Start
			}
			if i == 0 || p.Stop.After(last) {
				last = p.Stop
			}
			if !p.Start.After(now) && p.Stop.After(now) {
				covers = true
			}
			if p.Stop.After(now) {
				future = true
			}
		}
		has := map[string]bool{
			"no_programmes": len(c.Programmes) == 0,
			"expired":       len(c.Programmes) > 0 && !future,
			"not_current":   !covers,
			"no_title":      c.Title == "",
			"unreferenced":  refs != nil && !refs[c.ID],
		}
		if len(issues) > 0 && !slices.ContainsFunc(issues, func(i string) bool { return has[i] }) {
			continue
		}
		ch := map[string]any{"id": c.ID, "title": nullIfEmpty(c.Title), "has_icon": c.Icon, "programme_count": len(c.Programmes),
			"first_start": nil, "last_stop": nil, "covers_now": covers, "referenced_by_playlist": nil}
		if len(c.Programmes) > 0 {
			ch["first_start"], ch["last_stop"] = rfc(first), rfc(last)
		}
		if refs != nil {
			ch["referenced_by_playlist"] = refs[c.ID]
		}
		matched = append(matched, ch)
	}
	lo := min(offset, len(matched))
	hi := min(lo+limit, len(matched))
	page := []any{}
	for _, c := range matched[lo:hi] {
		page = append(page, c)
	}
	resp["total_matched"], resp["returned"], resp["has_more"], resp["channels"], resp["skipped_playlist_records"] = len(matched), len(page), hi < len(matched), page, t.Skipped
	if len(notes) > 0 {
		resp["note"] = strings.Join(notes, " ")
	}
	writeJSON(w, http.StatusOK, resp)
}

func (f *Fake) epgChannel(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	_, limit, clamped, ok := paging(w, r, 100, 1000)
	if !ok {
		return
	}
	now := f.now()
	from, to := now, now.Add(24*time.Hour)
	for _, b := range []struct {
		name string
		dst  *time.Time
	}{{"from", &from}, {"to", &to}} {
		if s := q.Get(b.name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				writeError(w, http.StatusBadRequest, b.name+" must be RFC 3339")
				return
			}
			*b.dst = t
		}
	}
	if !to.After(from) {
		writeError(w, http.StatusBadRequest, "to must be after from")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.data.target(q.Get("target"))
	if t == nil {
		writeError(w, http.StatusNotFound, "target not found")
		return
	}
	output, ok := pickOutput(w, t, q.Get("output"))
	if !ok {
		return
	}
	chans, has := t.EPG[output]
	if !has {
		writeError(w, http.StatusNotFound, "the target has no EPG database for output "+output)
		return
	}
	id := strings.ToLower(strings.TrimSpace(q.Get("channel_id")))
	var c *Channel
	for _, ch := range chans {
		if strings.ToLower(ch.ID) == id {
			c = ch
		}
	}
	if c == nil {
		writeError(w, http.StatusNotFound, "EPG channel not found")
		return
	}
	var in []Programme
	for _, p := range c.Programmes {
		if p.Stop.After(from) && p.Start.Before(to) {
			in = append(in, p)
		}
	}
	progs := []any{}
	for i, p := range in {
		if i >= limit {
			break
		}
		desc := p.Desc
		if len([]rune(desc)) > 500 {
			desc = string([]rune(desc)[:500])
		}
		progs = append(progs, map[string]any{"start": rfc(p.Start), "stop": rfc(p.Stop), "title": p.Title, "desc": desc,
			"categories": p.Categories, "is_live": p.Live, "is_new": p.New})
	}
	writeJSON(w, http.StatusOK, map[string]any{"target": t.Name, "output": output,
		"channel": map[string]any{"id": c.ID, "title": nullIfEmpty(c.Title), "has_icon": c.Icon, "programme_count": len(c.Programmes)},
		"from":    rfc(from), "to": rfc(to), "limit": limit, "limit_clamped": clamped,
		"total_in_window": len(in), "truncated": len(in) > limit, "programmes": progs})
}
