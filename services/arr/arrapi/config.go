package arrapi

import (
	"log/slog"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
)

// Defaults for the optional settings of an application.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultSearchTimeout = 75 * time.Second
)

// Config describes one *arr application. Build it with LoadConfig or fill
// it directly (tests).
type Config struct {
	// App is the lower-case application name ("sonarr"); it prefixes the
	// settings (SONARR_URL) and, capitalised, names the app in messages.
	App string
	// APIRoot is the versioned API path every request is relative to:
	// "/api/v3" for Sonarr and Radarr (default), "/api/v1" for Prowlarr.
	APIRoot string
	// URL is the application's base URL including any URL base
	// (https://sonarr.lan:8989 or http://nas:8989/sonarr).
	URL string
	// APIKey is sent as X-Api-Key on every request, never in the URL.
	APIKey []byte
	// CAFile is an optional PEM bundle for a private CA.
	CAFile string
	// AllowHTTP permits a plain http:// URL (usual in a home lab, but an
	// explicit choice: the API key then travels unencrypted).
	AllowHTTP bool
	// Timeout bounds an ordinary request (default 30s).
	Timeout time.Duration
	// SearchTimeout bounds requests that make the application query its
	// indexers, such as an interactive release search (default 75s, below
	// the gateway's default 90s call deadline).
	SearchTimeout time.Duration
	// Logger receives debug lines (never a key); nil discards them.
	Logger *slog.Logger
}

// Env names the settings of app ("sonarr"): SONARR_URL, SONARR_API_KEY
// (read from SONARR_API_KEY_FILE), SONARR_CA_FILE, SONARR_ALLOW_HTTP,
// SONARR_TIMEOUT and SONARR_SEARCH_TIMEOUT.
type Env struct {
	URL, APIKey, CAFile, AllowHTTP, Timeout, SearchTimeout string
}

// EnvFor returns the setting names of app.
func EnvFor(app string) Env {
	p := strings.ToUpper(app) + "_"
	return Env{
		URL: p + "URL", APIKey: p + "API_KEY", CAFile: p + "CA_FILE", AllowHTTP: p + "ALLOW_HTTP",
		Timeout: p + "TIMEOUT", SearchTimeout: p + "SEARCH_TIMEOUT",
	}
}

// LoadConfig reads the settings of app through l. ok is false when the
// application is not configured at all (neither <APP>_URL nor
// <APP>_API_KEY_FILE set): it then contributes no tools. A missing
// counterpart (URL without key file or the reverse) and malformed values
// are recorded in l; the returned error reports what l cannot express: a
// plain http:// URL without <APP>_ALLOW_HTTP=true. apiRoot is "/api/v3"
// or "/api/v1".
func LoadConfig(l *config.Loader, app, apiRoot string) (cfg Config, ok bool, err error) {
	env := EnvFor(app)
	if l.String(env.URL, "") == "" && l.String(env.APIKey+"_FILE", "") == "" {
		// A plain <APP>_API_KEY is still refused: it must never sit in
		// the environment, configured or not.
		l.OptionalSecret(env.APIKey)
		return Config{}, false, nil
	}
	cfg = Config{
		App:           app,
		APIRoot:       apiRoot,
		APIKey:        l.Secret(env.APIKey),
		CAFile:        l.String(env.CAFile, ""),
		AllowHTTP:     l.Bool(env.AllowHTTP, false),
		Timeout:       l.Duration(env.Timeout, DefaultTimeout),
		SearchTimeout: l.Duration(env.SearchTimeout, DefaultSearchTimeout),
	}
	if l.String(env.URL, "") == "" {
		l.Required(env.URL)
	} else if u := l.URL(env.URL, ""); u != nil {
		cfg.URL = u.String()
		if u.Scheme == "http" && !cfg.AllowHTTP {
			err = &config.SettingError{Name: env.AllowHTTP, Problem: "must be true when " + env.URL +
				" uses plain http:// (the API key then travels unencrypted); or use https://"}
		}
	}
	return cfg, true, err
}
