package faketuliprox

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Planted secrets of the demo configuration: none may ever leave the
// tuliprox service. Each sits in a form a redaction rule names.
const (
	SecretProviderPassword = "prov-Xtream-Pass-31f7"  // input password, and in an Xtream URL path
	SecretProviderUser     = "prov-xtream-user-8d21"  // input username, and in an Xtream URL path
	SecretAliasPassword    = "alias-Pass-in-URL-5c02" // URL userinfo of an alias
	SecretQueryToken       = "query-Token-Value-77ab" // ?token= in an EPG URL
	SecretQueryPassword    = "query-Pass-Value-0e4d"  // ?password= in an M3U URL
	SecretQueryUser        = "query-user-value-61c9"  // ?username= in the same URL
	SecretWebAuthSecret    = "web-Auth-JWT-Secret-4b90"
	SecretAPIProxyPassword = "apiproxy-User-Pass-a2e3"
	SecretAPIProxyToken    = "apiproxy-User-Token-c8f1"
	SecretAPIProxyUser     = "apiproxy-username-93bd"
	SecretHeaderAuth       = "hdr-Authorization-Basic-d7e6"
	SecretCookie           = "cookie-Session-Value-1a5f"
	SecretAPIKey           = "geoip-Api-Key-Value-6e0b"
	SecretNested           = "nested-Secret-Deep-f00d"
	SecretInList           = "list-Password-Item-beef"
	SecretPathOnly         = "path-only-pass-c0de"  // only in /live/<user>/<pass>/ of a relative path
	SecretStreamURLPass    = "stream-Url-Pass-77d1" // in an active stream's provider URL
	SecretHistoryURLPass   = "history-Url-Pass-5e2a"
	SecretAdditionalPass   = "additional-Pass-9f3b" // a direct_source in additional_properties
)

// ConfigSecrets lists every planted configuration secret.
var ConfigSecrets = []string{
	SecretProviderPassword, SecretProviderUser, SecretAliasPassword, SecretQueryToken, SecretQueryPassword,
	SecretQueryUser, SecretWebAuthSecret, SecretAPIProxyPassword, SecretAPIProxyToken, SecretAPIProxyUser,
	SecretHeaderAuth, SecretCookie, SecretAPIKey, SecretNested, SecretInList, SecretPathOnly,
}

// AllSecrets adds the secrets planted outside the configuration.
var AllSecrets = append(slices.Clone(ConfigSecrets), SecretStreamURLPass, SecretHistoryURLPass, SecretAdditionalPass)

// Data is the fake's content.
type Data struct {
	Start   time.Time
	Version string
	// Config is the document GET /config answers (before the permission
	// filter); tests may replace it with something hostile.
	Config map[string]any
	// RawConfig, when set, is answered verbatim instead (an unparsable
	// document, say).
	RawConfig  []byte
	Streams    []map[string]any
	History    []map[string]any
	QoS        []map[string]any
	EventStats map[string]any
	Targets    []*Target
	Inputs     []*Input
}

// NewDemoData builds the demo content around start.
func NewDemoData(start time.Time) *Data {
	d := &Data{Start: start, Version: "3.2.0"}
	d.Config = demoConfig()
	d.Streams = []map[string]any{
		{"uid": 1, "meter_uid": 11, "username": "anna", "provider": "provider-a", "addr": "192.168.1.23:51234", "client_ip": "192.168.1.23",
			"user_agent": "VLC/3.0.20", "ts": start.Add(-12 * time.Minute).Unix(), "country_code": "DE", "session_token": "sess-tok-0001", "preserved": false,
			"channel": map[string]any{"target_id": 1, "virtual_id": 1001, "provider_id": 4711, "input_name": "provider-a", "item_type": "live",
				"cluster": "live", "group": "DE | Public", "title": "Das Erste HD",
				"url": "http://line.provider-a.example:8080/live/" + SecretProviderUser + "/" + SecretStreamURLPass + "/4711.ts", "shared": false}},
		{"uid": 2, "meter_uid": 12, "username": "ben", "provider": "provider-a", "addr": "10.0.0.42:40000", "client_ip": "10.0.0.42",
			"user_agent": "TiviMate/5.0", "ts": start.Add(-3 * time.Minute).Unix(), "preserved": false,
			"channel": map[string]any{"target_id": 1, "virtual_id": 2002, "provider_id": 815, "input_name": "provider-a", "item_type": "video",
				"cluster": "video", "group": "Movies | Drama", "title": "The Long Evening",
				"url": "http://line.provider-a.example:8080/movie/" + SecretProviderUser + "/" + SecretStreamURLPass + "/815.mkv", "shared": false}},
	}
	for i := range 60 {
		ts := start.Add(-time.Duration(i) * 47 * time.Minute)
		user := []string{"anna", "ben", "carla"}[i%3]
		ev := []string{"connect", "disconnect"}[i%2]
		rec := map[string]any{
			"schema_version": 1, "event_type": ev, "event_ts_utc": ts.Unix(), "partition_day_utc": ts.UTC().Format("2006-01-02"),
			"session_id": 9000 + i/2, "source_addr": "192.168.1." + strconv.Itoa(20+i%3) + ":5" + strconv.Itoa(1000+i),
			"api_username": user, "provider_name": []string{"provider-a", "provider-b"}[i%4/3], "input_name": []string{"provider-a", "provider-b"}[i%4/3],
			"virtual_id": 1001 + i%7, "item_type": []string{"live", "video", "series"}[i%3], "title": []string{"Das Erste HD", "ZDF HD", "The Long Evening", "Arte"}[i%4],
			"group": "DE | Public", "country": "DE", "user_agent": "VLC/3.0.20", "cluster": "live",
			"stream_identity_key": "sik-" + strconv.Itoa(1001+i%7),
		}
		if ev == "disconnect" {
			rec["bytes_sent"] = 1_000_000 * (i + 1)
			rec["session_duration_secs"] = 60 * (i + 1)
			rec["first_byte_latency_ms"] = 120 + i
			rec["disconnect_reason"] = "client_closed"
		}
		if i == 5 {
			rec["provider_url"] = "http://line.provider-a.example:8080/live/" + SecretProviderUser + "/" + SecretHistoryURLPass + "/4711.ts"
		}
		d.History = append(d.History, rec)
	}
	for i := range 7 {
		d.QoS = append(d.QoS, map[string]any{
			"stream_identity_key": "sik-" + strconv.Itoa(1001+i), "input_name": "provider-a", "provider_name": "provider-a",
			"item_type": "live", "target_name": "main", "title": "Channel " + strconv.Itoa(1001+i),
			"score": 100 - i*9, "sessions": 10 + i, "failures": i, "avg_first_byte_latency_ms": 150 + 40*i,
			"updated_at": start.Add(-time.Duration(i) * time.Hour).Unix(),
		})
	}
	d.EventStats = map[string]any{
		"since":  start.Add(-24 * time.Hour).UTC().Format(time.RFC3339),
		"events": map[string]any{"auth.sign_in.success": 14, "auth.sign_in.failed": 2, "auth.sign_in.throttled": 0, "playlist.update.finished": 3, "provider.connection.failed": 5},
	}
	d.Targets, d.Inputs = demoPlaylists(start)
	return d
}

func demoConfig() map[string]any {
	xtreamURL := "http://line.provider-a.example:8080"
	return map[string]any{
		"config": map[string]any{
			"api":            map[string]any{"host": "0.0.0.0", "port": 8901, "web_root": "/web"},
			"working_dir":    "/app/data",
			"update_on_boot": true,
			"web_ui": map[string]any{
				"enabled": true, "path": "",
				"auth": map[string]any{"enabled": true, "issuer": "tuliprox", "secret": SecretWebAuthSecret, "token_ttl_mins": 30,
					"userfile": "/app/config/user.txt"},
			},
			"reverse_proxy": map[string]any{
				"stream_history": map[string]any{"stream_history_enabled": true},
				"geoip":          map[string]any{"enabled": true, "url": "https://geoip.example/db.csv?api_key=" + SecretAPIKey},
			},
			"messaging": map[string]any{
				"notify_on": []any{"error", "info"},
				"telegram":  map[string]any{"bot_token": "123456:telegram-bot-token-secret", "chat_ids": []any{"-1001"}},
				"rest":      map[string]any{"url": "https://hooks.example/notify", "headers": map[string]any{"Authorization": "Basic " + SecretHeaderAuth, "X-Cookie": SecretCookie}},
			},
			"proxy": map[string]any{"url": "socks5://proxyuser:" + SecretNested + "@proxy.lan:1080"},
			"notes": "Provider login for support: see http://line.provider-a.example:8080/get.php?username=" + SecretQueryUser + "&password=" + SecretQueryPassword,
			"deep":  map[string]any{"level1": map[string]any{"level2": map[string]any{"client_secret": SecretNested}}},
		},
		"sources": map[string]any{
			"inputs": []any{
				map[string]any{"name": "provider-a", "type": "xtream", "enabled": true, "url": xtreamURL,
					"username": SecretProviderUser, "password": SecretProviderPassword,
					"epg": map[string]any{"sources": []any{map[string]any{"url": "https://epg.example/guide.xml.gz?token=" + SecretQueryToken, "priority": 0}}},
					"aliases": []any{map[string]any{"name": "provider-a-backup", "url": "http://backup:" + SecretAliasPassword + "@line2.provider-a.example:8080",
						"username": SecretProviderUser, "password": SecretProviderPassword, "max_connections": 1}},
					"options": map[string]any{"xtream_live_stream_use_prefix": true},
				},
				map[string]any{"name": "provider-b", "type": "m3u", "enabled": true,
					"url":  "http://m3u.provider-b.example/get.php?username=" + SecretQueryUser + "&password=" + SecretQueryPassword + "&type=m3u_plus",
					"user": ""},
				map[string]any{"name": "stalker-x", "type": "stalker", "enabled": false,
					"comment":     "mirror at /live/" + SecretProviderUser + "/" + SecretPathOnly + "/1.ts for tests",
					"credentials": []any{map[string]any{"password": SecretInList}}},
			},
			"targets": []any{
				map[string]any{"name": "main", "output": []any{map[string]any{"type": "xtream"}, map[string]any{"type": "m3u", "filename": "main.m3u"}}},
				map[string]any{"name": "kids", "output": []any{map[string]any{"type": "m3u"}}},
			},
		},
		"mappings": nil,
		"api_proxy": map[string]any{
			"server": []any{map[string]any{"name": "default", "protocol": "http", "host": "tv.home.example", "port": "8901", "timezone": "Europe/Berlin"}},
			"user": []any{
				map[string]any{"target": "main", "credentials": []any{
					map[string]any{"username": SecretAPIProxyUser, "password": SecretAPIProxyPassword, "token": SecretAPIProxyToken, "proxy": "reverse"},
					map[string]any{"username": "family-tv", "password": SecretAPIProxyPassword, "proxy": "redirect"},
				}},
				map[string]any{"target": "kids", "credentials": []any{map[string]any{"username": "kids-box", "password": SecretAPIProxyPassword}}},
			},
			"use_user_db": false,
		},
	}
}

func (f *Fake) status(w http.ResponseWriter, _ *http.Request) {
	now := f.now()
	f.mu.Lock()
	streams := slices.Clone(f.data.Streams)
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "version": f.data.Version, "build_time": "2026-11-20 10:00:00", "server_time": now.UTC().Format("2006-01-02 15:04:05 UTC"),
		"cache": "1.2 GB / 5 GB", "active_users": 2, "active_user_connections": len(streams), "active_user_streams": streams,
		"active_provider_connections": map[string]any{"provider-a": len(streams)},
	})
}

func (f *Fake) streams(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, http.StatusOK, f.data.Streams)
}

func (f *Fake) ipinfo(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"ipv4": "203.0.113.7", "ipv6": nil})
}

func (f *Fake) eventStats(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	writeJSON(w, http.StatusOK, f.data.EventStats)
}

// config answers the configuration filtered by the caller's permissions
// as v1_api_config.rs does.
func (f *Fake) config(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	raw := f.data.RawConfig
	doc := deepCopy(f.data.Config)
	f.mu.Unlock()
	if raw != nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
		return
	}
	has := f.permissions(r)
	m, _ := doc.(map[string]any)
	if !has("config.read") {
		m["config"] = map[string]any{}
		if ap, ok := m["api_proxy"].(map[string]any); ok {
			delete(ap, "server")
		}
	}
	if !has("source.read") {
		m["sources"] = map[string]any{"inputs": []any{}, "targets": []any{}}
	}
	if ap, ok := m["api_proxy"].(map[string]any); ok && !has("user.read") {
		delete(ap, "user")
	}
	writeJSON(w, http.StatusOK, m)
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// parseBound reads a from/to bound: YYYY-MM-DD (to: the end of that day)
// or an RFC 3339 date-time.
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

// historyRange filters records on event_ts_utc by from/to.
func (f *Fake) historyRange(w http.ResponseWriter, r *http.Request) ([]map[string]any, bool) {
	q := r.URL.Query()
	from, to := time.Time{}, time.Unix(1<<40, 0)
	if s := q.Get("from"); s != "" {
		t, ok := parseBound(s, false)
		if !ok {
			writeError(w, http.StatusBadRequest, "Invalid 'from' date: "+s)
			return nil, false
		}
		from = t
	}
	if s := q.Get("to"); s != "" {
		t, ok := parseBound(s, true)
		if !ok {
			writeError(w, http.StatusBadRequest, "Invalid 'to' date: "+s)
			return nil, false
		}
		to = t
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, rec := range f.data.History {
		ts := time.Unix(toInt(rec["event_ts_utc"]), 0)
		if !ts.Before(from) && !ts.After(to) {
			out = append(out, rec)
		}
	}
	return out, true
}

func toInt(v any) int64 {
	switch t := v.(type) {
	case int:
		return int64(t)
	case int64:
		return t
	case float64:
		return int64(t)
	}
	return 0
}

// HistorySearchFields are the record fields search_field may name.
var HistorySearchFields = []string{"api_username", "provider_name", "input_name", "title", "group", "country",
	"user_agent", "source_addr", "item_type", "event_type", "cluster", "stream_identity_key", "disconnect_reason"}

func (f *Fake) streamHistory(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoStreamHistory {
		writeError(w, http.StatusServiceUnavailable, "Stream history is not enabled")
		return
	}
	recs, ok := f.historyRange(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
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

func (f *Fake) historySummary(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoStreamHistory {
		writeError(w, http.StatusServiceUnavailable, "Stream history is not enabled")
		return
	}
	recs, ok := f.historyRange(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	type agg struct {
		sessions, disconnects, bytes, dur, lat, n int64
	}
	by := map[string]*agg{}
	for _, rec := range recs {
		skip := false
		for _, k := range []string{"provider_name", "input_name", "api_username", "item_type", "event_type"} {
			if want := q.Get(k); want != "" && rec[k] != want {
				skip = true
			}
		}
		if skip {
			continue
		}
		p, _ := rec["provider_name"].(string)
		a := by[p]
		if a == nil {
			a = &agg{}
			by[p] = a
		}
		if rec["event_type"] == "connect" {
			a.sessions++
		} else {
			a.disconnects++
			a.bytes += toInt(rec["bytes_sent"])
			a.dur += toInt(rec["session_duration_secs"])
			a.lat += toInt(rec["first_byte_latency_ms"])
			a.n++
		}
	}
	out := []map[string]any{}
	for p, a := range by {
		s := map[string]any{"provider_name": p, "session_count": a.sessions, "disconnect_count": a.disconnects, "total_bytes_sent": a.bytes,
			"avg_session_duration_secs": nil, "avg_first_byte_latency_ms": nil}
		if a.n > 0 {
			s["avg_session_duration_secs"] = a.dur / a.n
			s["avg_first_byte_latency_ms"] = a.lat / a.n
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["provider_name"].(string) < out[j]["provider_name"].(string) })
	writeJSON(w, http.StatusOK, out)
}

func (f *Fake) qosSnapshots(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoQoS {
		writeError(w, http.StatusServiceUnavailable, "QoS aggregation is not enabled")
		return
	}
	q := r.URL.Query()
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Failed to deserialize query string")
			return
		}
		limit = max(n, 1)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for _, s := range f.data.QoS {
		keep := true
		for _, k := range []string{"stream_identity_key", "input_name", "provider_name", "item_type", "target_name"} {
			if want := q.Get(k); want != "" && s[k] != want {
				keep = false
			}
		}
		if keep && len(out) < limit {
			out = append(out, s)
		}
	}
	writeJSON(w, http.StatusOK, out)
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
			writeJSON(w, http.StatusOK, s)
			return
		}
	}
	writeError(w, http.StatusNotFound, "QoS snapshot not found")
}

// geoipUpdate answers as v1_api.rs: 200 without a body, 400 when GeoIP is
// disabled (or the download failed).
func (f *Fake) geoipUpdate(w http.ResponseWriter, _ *http.Request) {
	if f.opts.NoGeoIP {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.geoipUpdates++
	f.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// GeoIPUpdates is how many GeoIP updates the fake ran.
func (f *Fake) GeoIPUpdates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.geoipUpdates
}
