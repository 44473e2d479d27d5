package tools

import (
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/frigate/client"
)

// The service's environment variables. Secrets are read from NAME_FILE.
// FRIGATE_URL, FRIGATE_TOKEN_FILE, FRIGATE_CA_FILE, FRIGATE_ALLOW_HTTP and
// FRIGATE_TIMEOUT are the settings every upstream application has
// (upstream.App); the seed's names stay accepted as older names.
const (
	EnvURL                    = "FRIGATE_URL"
	EnvAPIRoot                = "FRIGATE_API_ROOT" // older name: the exact API root, /api included
	EnvUsername               = "FRIGATE_USERNAME"
	EnvPassword               = "FRIGATE_PASSWORD" // FRIGATE_PASSWORD_FILE
	EnvToken                  = "FRIGATE_TOKEN"    // FRIGATE_TOKEN_FILE
	EnvBearerToken            = "FRIGATE_BEARER_TOKEN"
	EnvCookieName             = "FRIGATE_AUTH_COOKIE_NAME"
	EnvCameras                = "FRIGATE_CAMERAS"
	EnvCAFile                 = "FRIGATE_CA_FILE"
	EnvCACertFile             = "FRIGATE_CA_CERT_FILE"
	EnvTrustedUnauthenticated = "FRIGATE_TRUSTED_UNAUTHENTICATED"
	EnvAllowHTTP              = "FRIGATE_ALLOW_HTTP"
	EnvAllowInsecureHTTP      = "FRIGATE_ALLOW_INSECURE_HTTP"
	EnvTimeout                = "FRIGATE_TIMEOUT"
	EnvTimeoutMS              = "FRIGATE_TIMEOUT_MS"
	EnvMaxResponseBytes       = "FRIGATE_MAX_RESPONSE_BYTES"
	EnvEventsPageSize         = "FRIGATE_EVENTS_PAGE_SIZE"
	EnvEventsMaxWindow        = "FRIGATE_EVENTS_MAX_WINDOW_SECONDS"
	EnvImageMaxBytes          = "FRIGATE_IMAGE_MAX_BYTES"
	EnvImageMaxHeight         = "FRIGATE_IMAGE_MAX_HEIGHT"
)

// App is Frigate's upstream.App: the settings every service reads the same
// way, and the seed's names as older ones.
var App = upstream.App{
	Prefix: "FRIGATE", Name: "Frigate", Credential: upstream.Token, CredentialOptional: true,
	DefaultTimeout: DefaultTimeout, MaxTimeout: time.Minute,
	Aliases: upstream.Aliases{URL: EnvAPIRoot, Credential: EnvBearerToken, CAFile: EnvCACertFile,
		AllowHTTP: EnvAllowInsecureHTTP, TimeoutMS: EnvTimeoutMS},
}

// Defaults and bounds of the numeric settings. FRIGATE_MAX_CONCURRENT and
// FRIGATE_MAX_RESULT_BYTES are the toolkit's (toolkit.Limits).
const (
	DefaultTimeout          = 15 * time.Second
	DefaultMaxResponseBytes = 5 << 20
	DefaultMaxConcurrent    = 4
	DefaultPageSize         = 50
	MaxPageSize             = 200
	DefaultMaxWindow        = 24 * time.Hour
	DefaultMaxResultBytes   = 256 << 10
	// DefaultImageMaxBytes keeps a picture's base64 (4/3 of it) inside the
	// toolkit's default 256 KiB result cap.
	DefaultImageMaxBytes  = 160 << 10
	DefaultImageMaxHeight = 720
)

// DefaultLimits are the toolkit's bounds unless FRIGATE_MAX_CONCURRENT or
// FRIGATE_MAX_RESULT_BYTES say otherwise.
var DefaultLimits = toolkit.Limits{MaxConcurrent: DefaultMaxConcurrent, MaxResultBytes: DefaultMaxResultBytes}

// Settings is the frigate service's configuration.
type Settings struct {
	APIRoot    *url.URL
	Auth       client.Mode
	Username   string
	Password   []byte
	Token      []byte
	CookieName string
	// Cameras is the camera allowlist; nil means every camera.
	Cameras          []string
	CAFile           string
	AllowHTTP        bool
	Timeout          time.Duration
	MaxResponseBytes int
	PageSize         int
	MaxWindow        time.Duration
	ImageMaxBytes    int
	ImageMaxHeight   int
}

var (
	cameraName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	cookieName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")
)

// LoadSettings reads the settings through l and reports every problem at
// once, naming the variable but never its value.
func LoadSettings(l *config.Loader) (Settings, error) {
	app, _ := App.Load(l)
	s := Settings{
		Username:         strings.TrimSpace(l.String(EnvUsername, "")),
		CookieName:       l.String(EnvCookieName, client.DefaultCookieName),
		CAFile:           app.CAFile,
		AllowHTTP:        app.AllowHTTP,
		Timeout:          app.Timeout,
		Token:            app.Secret,
		MaxResponseBytes: l.Int(EnvMaxResponseBytes, DefaultMaxResponseBytes, 1024, DefaultMaxResponseBytes),
		PageSize:         l.Int(EnvEventsPageSize, DefaultPageSize, 1, MaxPageSize),
		MaxWindow:        time.Duration(l.Int(EnvEventsMaxWindow, int(DefaultMaxWindow/time.Second), 60, 31*24*3600)) * time.Second,
		ImageMaxBytes:    l.Int(EnvImageMaxBytes, DefaultImageMaxBytes, 8<<10, 4<<20),
		ImageMaxHeight:   l.Int(EnvImageMaxHeight, DefaultImageMaxHeight, 64, 2160),
	}
	if app.URL != "" {
		// FRIGATE_URL is Frigate's base URL, like every <APP>_URL; the
		// seed's FRIGATE_API_ROOT is the API root itself.
		root := app.URL
		if app.Env.URL == EnvURL {
			root = strings.TrimRight(root, "/") + "/api"
		}
		s.APIRoot, _ = url.Parse(root) // app.Load checked it
	}
	trusted := l.Bool(EnvTrustedUnauthenticated, false)
	password, hasPassword := l.OptionalSecret(EnvPassword)
	hasToken := app.Secret != nil
	tokenFile := app.Env.Credential + "_FILE"

	if !cookieName.MatchString(s.CookieName) {
		l.Fail(EnvCookieName, "must be a cookie name (letters, digits and !#$%&'*+.^_`|~-)")
	}

	if raw := l.String(EnvCameras, ""); strings.TrimSpace(raw) != "" {
		seen := map[string]bool{}
		for _, c := range strings.Split(raw, ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			if !cameraName.MatchString(c) {
				l.Fail(EnvCameras, "must be a comma-separated list of Frigate camera names (letters, digits, _ and -)")
				break
			}
			if !seen[c] {
				seen[c] = true
				s.Cameras = append(s.Cameras, c)
			}
		}
	}

	switch {
	case s.Username != "" && !hasPassword:
		l.Fail(EnvPassword+"_FILE", "is required with "+EnvUsername)
	case s.Username == "" && hasPassword:
		l.Fail(EnvUsername, "is required with "+EnvPassword+"_FILE")
	}
	managed := s.Username != "" && hasPassword
	switch {
	case managed && hasToken, s.Username != "" && hasToken:
		l.Fail(tokenFile, "cannot be combined with "+EnvUsername+"; choose one authentication mode")
	case (managed || hasToken) && trusted:
		l.Fail(EnvTrustedUnauthenticated, "is only for running without credentials; remove it or the credentials")
	case managed:
		s.Auth, s.Password = client.Managed, password
	case hasToken:
		s.Auth = client.Bearer
	case trusted:
		s.Auth = client.Unauthenticated
	case s.Username == "" && !hasPassword:
		l.Fail(EnvUsername, "is required (with "+EnvPassword+"_FILE), or set "+EnvToken+"_FILE, or "+
			EnvTrustedUnauthenticated+"=true to run without credentials on a trusted network")
	}
	if err := l.Err(); err != nil {
		return Settings{}, err
	}
	return s, nil
}
