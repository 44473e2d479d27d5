package arrapi

import (
	"log/slog"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/upstream"
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

// App is the upstream.App of one *arr application ("sonarr"):
// SONARR_URL, SONARR_API_KEY_FILE, SONARR_CA_FILE, SONARR_ALLOW_HTTP and
// SONARR_TIMEOUT, read the same way as every service's; an unconfigured
// app is allowed (it contributes no tools).
func App(app string) upstream.App {
	return upstream.App{
		Prefix: strings.ToUpper(app), Name: DisplayName(app), Credential: upstream.APIKey,
		Optional: true, DefaultTimeout: DefaultTimeout, Reason: Reason,
	}
}

// Env names the settings of app ("sonarr"): those of App plus
// SONARR_SEARCH_TIMEOUT.
type Env struct {
	upstream.Env
	SearchTimeout string
}

// EnvFor returns the setting names of app.
func EnvFor(app string) Env {
	return Env{Env: App(app).Env(), SearchTimeout: strings.ToUpper(app) + "_SEARCH_TIMEOUT"}
}

// LoadConfig reads the settings of app through l, which records every
// problem (a missing counterpart — URL without key file or the reverse —,
// plain http:// without <APP>_ALLOW_HTTP=true, malformed values). ok is
// false when the application is not configured at all (neither <APP>_URL
// nor <APP>_API_KEY_FILE set): it then contributes no tools. apiRoot is
// "/api/v3" or "/api/v1".
func LoadConfig(l *config.Loader, app, apiRoot string) (cfg Config, ok bool) {
	s, configured := App(app).Load(l)
	if !configured {
		return Config{}, false
	}
	return Config{
		App:           app,
		APIRoot:       apiRoot,
		URL:           s.URL,
		APIKey:        s.Secret,
		CAFile:        s.CAFile,
		AllowHTTP:     s.AllowHTTP,
		Timeout:       s.Timeout,
		SearchTimeout: l.Duration(EnvFor(app).SearchTimeout, DefaultSearchTimeout),
	}, true
}
