// Package faketuliprox is a fake Tuliprox for tests and the demo profile:
// the Web UI's token sign-in ({web_ui_path}/auth/token, JWTs that expire
// after token_ttl_mins and then answer 401 with WWW-Authenticate: Bearer),
// permissions per user (403), and the REST routes under
// {web_ui_path}/api/v1 of the seed's tool catalog with stored playlists,
// processed EPG databases, stream history and QoS snapshots (503 while
// those features are off), and a configuration full of secrets.
//
// It answers as Tuliprox does (backend/src/api/endpoints, shared/src/model
// of euzu/tuliprox) and plays one of three APIs (Options.Release): the
// seed's (its operator reference's playlist, EPG, event and update-status
// routes, which no published source has), the public 3.3.x builds (develop
// at 3.3.3: stream history that takes only from, to and filter fields and
// answers a bare array, a playlist update that answers 202 without a body
// and drops a request while one waits), or the v3.3.0 release (no stream
// history or QoS routes either). A route a release lacks answers 404 with
// an empty body, as Tuliprox's static-file fallback does.
package faketuliprox

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// User is a Web UI user of the fake.
// maxRecorded bounds what the fake remembers of the requests it served:
// tests look at the last few, and a demo stack left running must not grow.
const maxRecorded = 10_000

type User struct {
	Password string
	// Permissions are names as in groups.txt (system.read, playlist.read…).
	Permissions []string
	// Admin users hold every permission.
	Admin bool
}

// Request is one request the fake received (credentials left out).
type Request struct {
	Method, Path, Query string
}

// Options configure a Fake; the zero value is a Tuliprox with web
// authentication on, the demo users, a 30-minute token lifetime and every
// feature enabled.
type Options struct {
	// Now is the fake's clock; nil means time.Now.
	Now func() time.Time
	// WebPath is web_ui.path ("" or "/admin").
	WebPath string
	// NoAuth runs without web authentication: /auth/token answers
	// {"token":"authorized"} and no route checks a token.
	NoAuth bool
	// TokenTTL is web_ui.auth.token_ttl_mins (default 30 min).
	TokenTTL time.Duration
	// Users replace the demo users.
	Users map[string]User
	// Features switched off answer as Tuliprox does (503, or 400 for
	// GeoIP).
	NoStreamHistory, NoQoS, NoGeoIP bool
	// Release is the API the fake plays; "" is ReleaseSeed.
	Release Release
	// NoWebUI is web_ui.enabled: false. Tuliprox then registers neither
	// the Web UI nor its REST API (main_api.rs merges v1_api_register and
	// the /auth routes only when the Web UI is on): every such path is
	// axum's empty 404.
	NoWebUI bool
	// Hostile leaves provider URLs in additional_properties, which a real
	// Tuliprox removes: for tests of the service's own scrubbing.
	Hostile bool
}

// Release names an API the fake can play.
type Release string

const (
	// ReleaseSeed is the API of the seed (Tuliprox's MCP operator
	// reference, docs/src/operator/mcp.md): every route of its catalog,
	// stream history paged and searched by Tuliprox, a playlist update
	// answered with a run id and a 409 while one is queued. No published
	// Tuliprox source has this API.
	ReleaseSeed Release = "seed"
	// ReleasePublic is euzu/tuliprox develop at 3.3.3 (1b148d29), what the
	// 3.3.x builds after v3.3.0 serve.
	ReleasePublic Release = "3.3.3"
	// Release330 is the v3.3.0 tag (master, 7c85d5f7): ReleasePublic
	// without stream history and QoS snapshots.
	Release330 Release = "3.3.0"
)

// Demo users: admin may do everything, assistant has the group the docs
// recommend (system.read, playlist.read), viewer only playlist.read, and
// operator may also trigger updates.
const (
	DemoAdmin             = "admin"
	DemoAdminPassword     = "tuliprox-demo-admin-Pw-7c1e"
	DemoAssistant         = "assistant"
	DemoAssistantPassword = "tuliprox-demo-assistant-Pw-4f2a"
	DemoViewer            = "viewer"
	DemoViewerPassword    = "tuliprox-demo-viewer-Pw-9b3d"
	DemoOperator          = "operator"
	DemoOperatorPassword  = "tuliprox-demo-operator-Pw-2e8c"
)

// DemoUsers are the fake's users unless Options.Users replaces them.
func DemoUsers() map[string]User {
	return map[string]User{
		DemoAdmin:     {Password: DemoAdminPassword, Admin: true},
		DemoAssistant: {Password: DemoAssistantPassword, Permissions: []string{"system.read", "playlist.read"}},
		DemoViewer:    {Password: DemoViewerPassword, Permissions: []string{"playlist.read"}},
		DemoOperator: {Password: DemoOperatorPassword,
			Permissions: []string{"system.read", "system.write", "playlist.read", "playlist.write", "config.read", "source.read"}},
	}
}

// Fake is a running fake Tuliprox's state.
type Fake struct {
	opts   Options
	now    func() time.Time
	secret []byte
	mux    atomic.Pointer[http.ServeMux]
	rel    atomic.Value // Release
	data   *Data

	mu       sync.Mutex
	requests []Request
	logins   int
	// epoch invalidates tokens issued before it (a permission change).
	epoch        int
	update       updateState
	geoipUpdates int
}

// New returns a fake Tuliprox over the demo data.
func New(o Options) *Fake {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = 30 * time.Minute
	}
	if o.Users == nil {
		o.Users = DemoUsers()
	}
	if o.Release == "" {
		o.Release = ReleaseSeed
	}
	o.WebPath = "/" + strings.Trim(o.WebPath, "/")
	if o.WebPath == "/" {
		o.WebPath = ""
	}
	f := &Fake{opts: o, now: o.Now, secret: []byte("faketuliprox-jwt-signing-secret-0001"), data: NewDemoData(o.Now())}
	if !o.Hostile {
		// A real record never holds a URL (storage.rs: "must never contain
		// ... credential-bearing URLs").
		for _, h := range f.data.History {
			delete(h, "provider_url")
		}
	}
	f.SetRelease(o.Release)
	return f
}

// SetRelease makes the fake play another release from the next request
// on, as if Tuliprox had been updated in place.
func (f *Fake) SetRelease(r Release) {
	f.mu.Lock()
	f.data.Version = string(r)
	if r == ReleaseSeed {
		f.data.Version = "seed"
	}
	f.mu.Unlock()
	f.rel.Store(r)
	f.mux.Store(f.routes(r))
}

// release is the API the fake plays now.
func (f *Fake) release() Release { return f.rel.Load().(Release) }

// Data is the fake's content; tests may change it under Lock.
func (f *Fake) Data() *Data { return f.data }

// Lock and Unlock guard Data.
func (f *Fake) Lock()   { f.mu.Lock() }
func (f *Fake) Unlock() { f.mu.Unlock() }

// Requests returns the API requests received so far (sign-ins excluded).
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// Reset forgets the requests and sign-ins seen.
func (f *Fake) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests, f.logins = nil, 0
}

// Logins is how many successful sign-ins the fake answered.
func (f *Fake) Logins() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logins
}

// RevokeTokens rejects every token issued so far, as Tuliprox does after a
// change of permissions.
func (f *Fake) RevokeTokens() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.epoch++
}

// ServeHTTP serves the fake.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.opts.NoWebUI {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	f.mux.Load().ServeHTTP(w, r)
}

type claims struct {
	Username    string   `json:"username"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	Epoch       int      `json:"pwd_version"`
	jwt.RegisteredClaims
}

// route registers a REST route under {web_ui_path}/api/v1 that needs one
// of perms (with web authentication on).
func (f *Fake) route(mux *http.ServeMux, pattern string, perms []string, h http.HandlerFunc) {
	method, path, _ := strings.Cut(pattern, " ")
	mux.HandleFunc(method+" "+f.opts.WebPath+"/api/v1"+path, func(w http.ResponseWriter, r *http.Request) {
		f.record(r)
		if !f.opts.NoAuth && !f.authorize(w, r, perms) {
			return
		}
		h(w, r)
	})
}

// record remembers an API request.
func (f *Fake) record(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, Request{Method: r.Method, Path: strings.TrimPrefix(r.URL.Path, f.opts.WebPath), Query: r.URL.RawQuery})
	if len(f.requests) > maxRecorded {
		f.requests = f.requests[len(f.requests)-maxRecorded:]
	}
}

// authorize checks the bearer token as Tuliprox's permission layer does:
// no Authorization header is 403 (the AuthBearer extractor), an invalid or
// expired token 401 with WWW-Authenticate: Bearer, a missing permission 403.
func (f *Fake) authorize(w http.ResponseWriter, r *http.Request, perms []string) bool {
	h := r.Header.Get("Authorization")
	if h == "" {
		http.Error(w, "Authorization header is missing", http.StatusForbidden)
		return false
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		http.Error(w, "`Authorization` header must be a bearer token", http.StatusForbidden)
		return false
	}
	var c claims
	_, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return f.secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(f.now), jwt.WithExpirationRequired())
	f.mu.Lock()
	epoch := f.epoch
	f.mu.Unlock()
	if err != nil || c.Epoch != epoch {
		w.Header().Set("WWW-Authenticate", "Bearer")
		w.WriteHeader(http.StatusUnauthorized)
		return false
	}
	if slices.Contains(c.Roles, "ADMIN") {
		return true
	}
	for _, p := range perms {
		if slices.Contains(c.Permissions, p) {
			return true
		}
	}
	w.WriteHeader(http.StatusForbidden)
	return false
}

// signIn is POST {web_ui_path}/auth/token.
func (f *Fake) signIn(w http.ResponseWriter, r *http.Request) {
	var cred struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&cred); err != nil {
		// axum's Json extractor rejects a malformed body.
		http.Error(w, "Failed to parse the request body as JSON", http.StatusBadRequest)
		return
	}
	if f.opts.NoAuth {
		writeJSON(w, http.StatusOK, map[string]string{"token": "authorized", "username": "admin"})
		return
	}
	u, ok := f.opts.Users[cred.Username]
	if cred.Username == "" || cred.Password == "" || !ok || u.Password != cred.Password {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	now := f.now()
	f.mu.Lock()
	f.logins++
	epoch := f.epoch
	f.mu.Unlock()
	c := claims{Username: cred.Username, Permissions: u.Permissions, Epoch: epoch, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: "tuliprox", IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(f.opts.TokenTTL)),
	}}
	if u.Admin {
		c.Roles = []string{"ADMIN"}
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(f.secret)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"token": tok, "username": cred.Username})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers {"error": msg}, Tuliprox's error body.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func (f *Fake) routes(rel Release) *http.ServeMux {
	mux := http.NewServeMux()
	wp := f.opts.WebPath
	mux.HandleFunc("POST "+wp+"/auth/token", f.signIn)
	// Unknown paths reach the Web UI's ServeDir fallback (web_index.rs):
	// 404 with an empty body for GET and HEAD, 405 for other methods.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, wp+"/api/") {
			f.record(r)
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusNotFound)
	})
	sysRead := []string{"system.read"}
	plRead := []string{"playlist.read"}
	f.route(mux, "GET /status", sysRead, f.status)
	f.route(mux, "GET /streams", sysRead, f.streams)
	f.route(mux, "GET /config", []string{"config.read", "source.read", "user.read", "user.write", "playlist.read", "playlist.write"}, f.config)
	f.route(mux, "GET /ipinfo", sysRead, f.ipinfo)
	f.route(mux, "GET /geoip/update", []string{"system.write"}, f.geoipUpdate)
	if rel == ReleaseSeed {
		f.route(mux, "POST /playlist/update", []string{"playlist.write"}, f.playlistUpdate)
	} else {
		f.route(mux, "POST /playlist/update", []string{"playlist.write"}, f.playlistUpdateReleased)
	}
	if rel == Release330 {
		return mux
	}
	f.route(mux, "GET /stream-history", sysRead, f.streamHistory)
	f.route(mux, "GET /stream-history/summary", sysRead, f.historySummary)
	f.route(mux, "GET /qos-snapshots", sysRead, f.qosSnapshots)
	f.route(mux, "GET /qos-snapshots/{key}", sysRead, f.qosSnapshot)
	if rel != ReleaseSeed {
		return mux
	}
	f.route(mux, "GET /events/stats", sysRead, f.eventStats)
	f.route(mux, "GET /playlist/update/status", plRead, f.updateStatus)
	f.route(mux, "GET /playlist/sources", plRead, f.sources)
	f.route(mux, "GET /playlist/items", plRead, f.items)
	f.route(mux, "GET /playlist/epg/channels", plRead, f.epgChannels)
	f.route(mux, "GET /playlist/epg/channel", plRead, f.epgChannel)
	return mux
}

// permissions of the caller's token (all with web authentication off).
func (f *Fake) permissions(r *http.Request) func(string) bool {
	if f.opts.NoAuth {
		return func(string) bool { return true }
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	var c claims
	if _, err := jwt.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return f.secret, nil },
		jwt.WithValidMethods([]string{"HS256"}), jwt.WithTimeFunc(f.now)); err != nil {
		return func(string) bool { return false }
	}
	return func(p string) bool { return slices.Contains(c.Roles, "ADMIN") || slices.Contains(c.Permissions, p) }
}
