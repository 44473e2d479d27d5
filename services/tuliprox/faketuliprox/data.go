package faketuliprox

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
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
		// Every member of StreamHistoryRecord (storage.rs), none skipped
		// when empty.
		rec := map[string]any{
			"schema_version": 1, "event_type": ev, "event_ts_utc": ts.Unix(), "partition_day_utc": ts.UTC().Format("2006-01-02"),
			"session_id": 9000 + i/2, "source_addr": "192.168.1." + strconv.Itoa(20+i%3) + ":5" + strconv.Itoa(1000+i),
			"api_username": user, "provider_name": []string{"provider-a", "provider-b"}[i%4/3], "provider_username": nil,
			"input_name": []string{"provider-a", "provider-b"}[i%4/3],
			"virtual_id": 1001 + i%7, "item_type": []string{"live", "video", "series"}[i%3], "title": []string{"Das Erste HD", "ZDF HD", "The Long Evening", "Arte"}[i%4],
			"group": "DE | Public", "country": "DE", "user_agent": "VLC/3.0.20", "shared": false, "shared_joined_existing": nil,
			"shared_stream_id": nil, "provider_id": 4711 + i%7, "cluster": "live", "container": nil, "stream_url_hash": "h" + strconv.Itoa(1001+i%7),
			"stream_identity_key": "sik-" + strconv.Itoa(1001+i%7), "video_codec": nil, "audio_codec": nil, "audio_channels": nil,
			"resolution": nil, "fps": nil, "connect_ts_utc": nil, "disconnect_ts_utc": nil, "session_duration": nil, "bytes_sent": nil,
			"first_byte_latency_ms": nil, "provider_reconnect_count": nil, "failure_stage": nil, "provider_http_status": nil,
			"provider_error_class": nil, "connect_failure_reason": nil, "disconnect_reason": nil, "previous_session_id": nil,
			"target_id": 1,
		}
		if ev == "disconnect" {
			rec["connect_ts_utc"] = ts.Unix() - int64(60*(i+1))
			rec["disconnect_ts_utc"] = ts.Unix()
			rec["bytes_sent"] = 1_000_000 * (i + 1)
			rec["session_duration"] = 60 * (i + 1)
			rec["first_byte_latency_ms"] = 120 + i
			rec["disconnect_reason"] = "client_closed"
		}
		if i == 5 {
			// Only with Options.Hostile: a real record holds no URL.
			rec["provider_url"] = "http://line.provider-a.example:8080/live/" + SecretProviderUser + "/" + SecretHistoryURLPass + "/4711.ts"
		}
		d.History = append(d.History, rec)
	}
	for i := range 7 {
		// QosSnapshotRecord (qos_snapshot_repository.rs); target_name is the
		// seed's, which filters by it, and goes in the released modes.
		window := func(score int) map[string]any {
			return map[string]any{"connect_count": 10 + i, "connect_failed_count": i, "startup_capacity_failure_count": 0,
				"provider_open_failure_count": i, "first_byte_failure_count": 0, "runtime_abort_count": 0, "provider_closed_count": 0,
				"preempt_count": 0, "avg_first_byte_latency_ms": 150 + 40*i, "avg_session_duration_secs": 600, "avg_provider_reconnect_count": nil,
				"last_success_ts": start.Add(-time.Duration(i) * time.Hour).Unix(), "last_failure_ts": nil, "successive_failure_streak": 0,
				"sample_size": 10 + i, "score": score, "confidence": 70}
		}
		d.QoS = append(d.QoS, map[string]any{
			"stream_identity_key": "sik-" + strconv.Itoa(1001+i), "input_name": "provider-a", "target_id": 1 + i%2,
			"target_name": []string{"main", "kids"}[i%2], "provider_name": "provider-a", "provider_id": 4711 + i, "virtual_id": 1001 + i,
			"item_type": "live", "updated_at": start.Add(-time.Duration(i) * time.Hour).Unix(), "last_event_at": start.Add(-time.Duration(i) * time.Hour).Unix(),
			"window_24h": window(100 - i*9), "window_7d": window(90 - i*5), "window_30d": window(85 - i*4), "daily_buckets": map[string]any{},
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
	version := f.data.Version
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "version": version, "build_time": "2026-11-20 10:00:00", "server_time": now.UTC().Format("2006-01-02 15:04:05 UTC"),
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
	// IpCheckDto skips a blank address.
	writeJSON(w, http.StatusOK, map[string]any{"ipv4": "203.0.113.7"})
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
