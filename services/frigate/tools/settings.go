package tools

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/services/frigate/client"
)

// The service's environment variables. Secrets are read from NAME_FILE.
const (
	EnvAPIRoot                = "FRIGATE_API_ROOT"
	EnvUsername               = "FRIGATE_USERNAME"
	EnvPassword               = "FRIGATE_PASSWORD"     // FRIGATE_PASSWORD_FILE
	EnvBearerToken            = "FRIGATE_BEARER_TOKEN" // FRIGATE_BEARER_TOKEN_FILE
	EnvCookieName             = "FRIGATE_AUTH_COOKIE_NAME"
	EnvCameras                = "FRIGATE_CAMERAS"
	EnvCAFile                 = "FRIGATE_CA_FILE"
	EnvCACertFile             = "FRIGATE_CA_CERT_FILE" // the seed's name, accepted as an alias
	EnvTrustedUnauthenticated = "FRIGATE_TRUSTED_UNAUTHENTICATED"
	EnvAllowInsecureHTTP      = "FRIGATE_ALLOW_INSECURE_HTTP"
	EnvTimeoutMS              = "FRIGATE_TIMEOUT_MS"
	EnvMaxResponseBytes       = "FRIGATE_MAX_RESPONSE_BYTES"
	EnvMaxConcurrent          = "FRIGATE_MAX_CONCURRENT"
	EnvEventsPageSize         = "FRIGATE_EVENTS_PAGE_SIZE"
	EnvEventsMaxWindow        = "FRIGATE_EVENTS_MAX_WINDOW_SECONDS"
	EnvMaxResultBytes         = "FRIGATE_MAX_RESULT_BYTES"
	EnvImageMaxBytes          = "FRIGATE_IMAGE_MAX_BYTES"
	EnvImageMaxHeight         = "FRIGATE_IMAGE_MAX_HEIGHT"
)

// Defaults and bounds of the numeric settings.
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
	MaxConcurrent    int
	PageSize         int
	MaxWindow        time.Duration
	MaxResultBytes   int
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
	var errs []error
	bad := func(name, problem string) { errs = append(errs, &config.SettingError{Name: name, Problem: problem}) }

	s := Settings{
		APIRoot:          l.URL(EnvAPIRoot, ""),
		Username:         strings.TrimSpace(l.String(EnvUsername, "")),
		CookieName:       l.String(EnvCookieName, client.DefaultCookieName),
		AllowHTTP:        l.Bool(EnvAllowInsecureHTTP, false),
		Timeout:          time.Duration(l.Int(EnvTimeoutMS, int(DefaultTimeout/time.Millisecond), 1, 60000)) * time.Millisecond,
		MaxResponseBytes: l.Int(EnvMaxResponseBytes, DefaultMaxResponseBytes, 1024, DefaultMaxResponseBytes),
		MaxConcurrent:    l.Int(EnvMaxConcurrent, DefaultMaxConcurrent, 1, 32),
		PageSize:         l.Int(EnvEventsPageSize, DefaultPageSize, 1, MaxPageSize),
		MaxWindow:        time.Duration(l.Int(EnvEventsMaxWindow, int(DefaultMaxWindow/time.Second), 60, 31*24*3600)) * time.Second,
		MaxResultBytes:   l.Int(EnvMaxResultBytes, DefaultMaxResultBytes, 4096, 4<<20),
		ImageMaxBytes:    l.Int(EnvImageMaxBytes, DefaultImageMaxBytes, 8<<10, 4<<20),
		ImageMaxHeight:   l.Int(EnvImageMaxHeight, DefaultImageMaxHeight, 64, 2160),
	}
	trusted := l.Bool(EnvTrustedUnauthenticated, false)
	password, hasPassword := l.OptionalSecret(EnvPassword)
	token, hasToken := l.OptionalSecret(EnvBearerToken)

	if s.APIRoot == nil {
		if strings.TrimSpace(l.String(EnvAPIRoot, "")) == "" {
			bad(EnvAPIRoot, "is required: the exact API root including /api, e.g. https://frigate.lan:8971/api")
		}
	} else {
		if s.APIRoot.RawQuery != "" || s.APIRoot.ForceQuery || s.APIRoot.Fragment != "" {
			bad(EnvAPIRoot, "must not have a query or a fragment")
		}
		if s.APIRoot.Scheme == "http" && !s.AllowHTTP {
			bad(EnvAPIRoot, "uses plain http; use https or set "+EnvAllowInsecureHTTP+"=true for a trusted network")
		}
	}

	ca, alias := l.String(EnvCAFile, ""), l.String(EnvCACertFile, "")
	switch {
	case ca != "" && alias != "":
		bad(EnvCACertFile, "is an alias of "+EnvCAFile+"; set only one")
	case ca == "":
		ca = alias
	}
	s.CAFile = ca

	if !cookieName.MatchString(s.CookieName) {
		bad(EnvCookieName, "must be a cookie name (letters, digits and !#$%&'*+.^_`|~-)")
	}

	if raw := l.String(EnvCameras, ""); strings.TrimSpace(raw) != "" {
		seen := map[string]bool{}
		for _, c := range strings.Split(raw, ",") {
			c = strings.TrimSpace(c)
			if c == "" {
				continue
			}
			if !cameraName.MatchString(c) {
				bad(EnvCameras, "must be a comma-separated list of Frigate camera names (letters, digits, _ and -)")
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
		bad(EnvPassword+"_FILE", "is required with "+EnvUsername)
	case s.Username == "" && hasPassword:
		bad(EnvUsername, "is required with "+EnvPassword+"_FILE")
	}
	managed := s.Username != "" && hasPassword
	switch {
	case managed && hasToken, s.Username != "" && hasToken:
		bad(EnvBearerToken+"_FILE", "cannot be combined with "+EnvUsername+"; choose one authentication mode")
	case (managed || hasToken) && trusted:
		bad(EnvTrustedUnauthenticated, "is only for running without credentials; remove it or the credentials")
	case managed:
		s.Auth, s.Password = client.Managed, password
	case hasToken:
		s.Auth, s.Token = client.Bearer, token
	case trusted:
		s.Auth = client.Unauthenticated
	case s.Username == "" && !hasPassword:
		bad(EnvUsername, "is required (with "+EnvPassword+"_FILE), or set "+EnvBearerToken+"_FILE, or "+
			EnvTrustedUnauthenticated+"=true to run without credentials on a trusted network")
	}
	if err := errors.Join(append([]error{l.Err()}, errs...)...); err != nil {
		return Settings{}, err
	}
	return s, nil
}
