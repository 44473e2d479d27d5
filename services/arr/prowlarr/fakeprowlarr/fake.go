// Package fakeprowlarr is a fake Prowlarr (API v1) for tests and the demo
// profile: it answers the routes the prowlarr_ tools use with the shapes
// and status codes of Prowlarr's OpenAPI document, checks the API key as
// Prowlarr does (X-Api-Key header or apikey query parameter, else 401),
// and plants credentials in its data (indexer settings, download links
// with its API key, tracker passkeys) so tests can prove none leaves.
package fakeprowlarr

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

// Port is the port Prowlarr listens on by default.
const Port = 9696

// Credentials planted in the seeded data. No tool result may contain them.
const (
	IndexerAPIKey   = "geek-SECRET-apikey-0f3c9a7d"
	IndexerUser     = "tl-SECRET-user-anna"
	IndexerPassword = "tl-SECRET-password-8c1e"
	IndexerCookie   = "cf_clearance=tl-SECRET-cookie-77aa"
	IndexerPasskey  = "0123456789abcdefSECRETpasskey42"
	IndexerRSSKey   = "ipt-SECRET-rsskey-5531"
)

// PlantedSecrets lists the credentials in the seeded data.
func PlantedSecrets() []string {
	return []string{IndexerAPIKey, IndexerUser, IndexerPassword, IndexerCookie, IndexerPasskey, IndexerRSSKey}
}

// Request is one request the fake received.
type Request = arrfake.Request

// Server is a fake Prowlarr. It is safe for concurrent use. Its embedded
// SearchHooks slow or hold GET /search.
type Server struct {
	arrfake.SearchHooks
	key     string
	base    string
	mux     *http.ServeMux
	rec     arrfake.Recorder
	release []release
}

// New returns a fake Prowlarr seeded with plausible data that accepts
// apiKey. publicURL is the address clients reach it at; Prowlarr writes it
// into the download links it rewrites.
func New(apiKey, publicURL string) *Server {
	s := &Server{key: apiKey, base: strings.TrimRight(publicURL, "/"), mux: http.NewServeMux()}
	s.release = seedReleases()
	s.mux.HandleFunc("GET /api/v1/system/status", s.status)
	s.mux.HandleFunc("GET /api/v1/indexer", s.indexers)
	s.mux.HandleFunc("GET /api/v1/indexer/{id}", s.indexer)
	s.mux.HandleFunc("GET /api/v1/indexerstatus", s.indexerStatus)
	s.mux.HandleFunc("GET /api/v1/indexerstats", s.indexerStats)
	s.mux.HandleFunc("GET /api/v1/health", s.health)
	s.mux.HandleFunc("GET /api/v1/search", s.search)
	return s
}

// NewDemo is the fake for the demo profile: seeded data, the given API
// key, and searches that take two seconds like real indexers.
func NewDemo(apiKey string) http.Handler {
	s := New(apiKey, "http://fake-prowlarr:9696")
	s.SetSearchDelay(2 * time.Second)
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request { return s.rec.Requests() }

// ServeHTTP checks the API key and routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.rec.Record(r, nil)
	if !arrfake.Authorized(r, s.key) {
		arrfake.Unauthorized(w)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// notFound is what GetResourceByIdWithErrorHandler's NotFound() becomes.
func notFound(w http.ResponseWriter) { arrfake.NotFound(w) }

var started = time.Date(2025, 11, 3, 8, 0, 0, 0, time.UTC)

func (s *Server) status(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, map[string]any{
		"appName": "Prowlarr", "instanceName": "Prowlarr", "version": "2.1.5.5216", "buildTime": "2025-10-01T00:00:00Z",
		"isDebug": false, "isProduction": true, "isAdmin": false, "isUserInteractive": false,
		"startupPath": "/app/prowlarr/bin", "appData": "/config", "osName": "ubuntu", "osVersion": "24.04",
		"isNetCore": true, "isLinux": true, "isOsx": false, "isWindows": false, "isDocker": true,
		"mode": "console", "branch": "master", "databaseType": "sqLite", "databaseVersion": "3.45.1",
		"authentication": "forms", "migrationVersion": 42, "urlBase": "", "runtimeVersion": "8.0.11",
		"runtimeName": ".NET", "startTime": started.Format(time.RFC3339),
	})
}

// field is a provider setting as the API answers it (Prowlarr.Http
// ClientSchema/SchemaBuilder.ToSchema): a non-empty value of an apiKey or
// password setting is replaced by "********"; user names and every setting
// of privacy normal (a Cardigann cookie, an RSS key) keep their value.
func field(order int, name, label, typ, privacy string, value any) map[string]any {
	if v, ok := value.(string); ok && v != "" && (privacy == "apiKey" || privacy == "password") {
		value = "********"
	}
	return map[string]any{
		"order": order, "name": name, "label": label, "value": value, "type": typ, "advanced": false,
		"privacy": privacy, "isFloat": false,
	}
}

func category(id int, name string) map[string]any {
	return map[string]any{"id": id, "name": name, "subCategories": []any{}}
}

func (s *Server) indexerList() []map[string]any {
	disabledTill := started.Add(90 * 24 * time.Hour).Format(time.RFC3339)
	mk := func(id int, name, impl, def, protocol, privacy string, enable bool, prio int, fields []map[string]any, urls []string, status map[string]any) map[string]any {
		ix := map[string]any{
			"id": id, "name": name, "fields": fields, "implementationName": impl, "implementation": impl,
			"configContract": impl + "Settings", "infoLink": "https://wiki.servarr.com/prowlarr/supported-indexers",
			"tags": []int{}, "indexerUrls": urls, "legacyUrls": []string{}, "definitionName": def,
			"description": name + " indexer", "language": "en-US", "encoding": "UTF-8",
			"enable": enable, "redirect": false, "supportsRss": true, "supportsSearch": true,
			"supportsRedirect": false, "supportsPagination": false, "appProfileId": 1,
			"protocol": protocol, "privacy": privacy, "priority": prio, "downloadClientId": 0,
			"added": started.Add(-400 * 24 * time.Hour).Format(time.RFC3339), "sortName": strings.ToLower(name),
			"capabilities": map[string]any{
				"id": 0, "limitsMax": 100, "limitsDefault": 100, "supportsRawSearch": false,
				"categories":   []any{category(2000, "Movies"), category(5000, "TV")},
				"searchParams": []string{"q"}, "tvSearchParams": []string{"q", "season", "ep"}, "movieSearchParams": []string{"q", "imdbId"},
			},
		}
		// Prowlarr leaves null properties out (STJson: WhenWritingNull),
		// so an indexer without failures has no status at all.
		if status != nil {
			ix["status"] = status
		}
		return ix
	}
	return []map[string]any{
		mk(1, "NZBgeek", "Newznab", "nzbgeek", "usenet", "private", true, 25, []map[string]any{
			field(0, "baseUrl", "URL", "textbox", "normal", "https://api.nzbgeek.info"),
			field(1, "apiPath", "API Path", "textbox", "normal", "/api"),
			field(2, "apiKey", "API Key", "textbox", "apiKey", IndexerAPIKey),
			field(3, "vipExpiration", "VIP Expiration", "textbox", "normal", ""),
			field(4, "baseSettings.limitsUnit", "Limits Unit", "select", "normal", 0),
		}, []string{"https://api.nzbgeek.info/"}, nil),
		mk(2, "TorrentLeech", "Cardigann", "torrentleech", "torrent", "private", true, 20, []map[string]any{
			field(0, "definitionFile", "", "hidden", "normal", "torrentleech"),
			field(1, "baseUrl", "Base Url", "select", "normal", "https://www.torrentleech.org/"),
			field(2, "username", "Username", "textbox", "userName", IndexerUser),
			field(3, "password", "Password", "password", "password", IndexerPassword),
			field(4, "cookie", "Cookie", "textbox", "normal", IndexerCookie),
			field(5, "info_tpp", "About", "info", "normal", "Help text"),
			field(6, "freeleech", "Search freeleech only", "checkbox", "normal", false),
		}, []string{"https://www.torrentleech.org/"}, map[string]any{
			"id": 7, "indexerId": 2, "disabledTill": disabledTill,
			"mostRecentFailure": started.Add(-2 * time.Hour).Format(time.RFC3339),
			"initialFailure":    started.Add(-26 * time.Hour).Format(time.RFC3339),
		}),
		mk(3, "1337x", "Cardigann", "1337x", "torrent", "public", true, 30, []map[string]any{
			field(0, "definitionFile", "", "hidden", "normal", "1337x"),
			field(1, "baseUrl", "Base Url", "select", "normal", "https://1337x.to/"),
			field(2, "sort", "Sort requested from site", "select", "normal", 2),
		}, []string{"https://1337x.to/"}, nil),
		mk(4, "IPTorrents", "Cardigann", "iptorrents", "torrent", "private", false, 25, []map[string]any{
			field(0, "baseUrl", "Base Url", "select", "normal", "https://iptorrents.com/"),
			field(1, "rssKey", "RSS key", "textbox", "normal", IndexerRSSKey),
			field(2, "feedUrl", "Feed", "textbox", "normal", "https://iptorrents.com/t.rss?u=1&tp="+IndexerRSSKey),
		}, []string{"https://iptorrents.com/"}, nil),
	}
}

func (s *Server) indexers(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, s.indexerList())
}

func (s *Server) indexer(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		w.WriteHeader(http.StatusNotFound) // no {id:int} route matches
		return
	}
	for _, ix := range s.indexerList() {
		if ix["id"] == id {
			arrfake.WriteJSON(w, http.StatusOK, ix)
			return
		}
	}
	notFound(w)
}

func (s *Server) indexerStatus(w http.ResponseWriter, _ *http.Request) {
	var out []any
	for _, ix := range s.indexerList() {
		if st, ok := ix["status"].(map[string]any); ok && st != nil {
			out = append(out, st)
		}
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

func (s *Server) indexerStats(w http.ResponseWriter, r *http.Request) {
	for _, p := range []string{"startDate", "endDate"} {
		if v := r.URL.Query().Get(p); v != "" {
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				arrfake.InvalidValue(w, p, v)
				return
			}
		}
	}
	want := map[int]bool{}
	if v := r.URL.Query().Get("indexers"); v != "" {
		for _, p := range strings.Split(v, ",") {
			id, _ := strconv.Atoi(p)
			want[id] = true
		}
	}
	var lines []any
	for i, ix := range s.indexerList() {
		id := ix["id"].(int)
		if len(want) > 0 && !want[id] {
			continue
		}
		lines = append(lines, map[string]any{
			"indexerId": id, "indexerName": ix["name"], "averageResponseTime": 300 + 100*i, "averageGrabResponseTime": 500,
			"numberOfQueries": 120 * (i + 1), "numberOfGrabs": 7 * (i + 1), "numberOfRssQueries": 400, "numberOfAuthQueries": 3,
			"numberOfFailedQueries": i, "numberOfFailedGrabs": 0, "numberOfFailedRssQueries": 1, "numberOfFailedAuthQueries": 0,
		})
	}
	arrfake.WriteJSON(w, http.StatusOK, map[string]any{
		"id":       0,
		"indexers": lines,
		"userAgents": []any{
			map[string]any{"userAgent": "Sonarr/4.0.15", "numberOfQueries": 320, "numberOfGrabs": 12},
			map[string]any{"userAgent": "Radarr/5.26.2", "numberOfQueries": 160, "numberOfGrabs": 9},
		},
		"hosts": []any{map[string]any{"host": "sonarr", "numberOfQueries": 320, "numberOfGrabs": 12}},
	})
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	arrfake.WriteJSON(w, http.StatusOK, []any{
		map[string]any{"id": 0, "source": "IndexerStatusCheck", "type": "warning",
			"message": "Indexers unavailable due to failures: TorrentLeech", "wikiUrl": "https://wiki.servarr.com/prowlarr/system#indexers-are-unavailable-due-to-failures"},
	})
}
