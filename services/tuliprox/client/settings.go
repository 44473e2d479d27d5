package client

import (
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/upstream"
)

// The service's own settings; TULIPROX_URL, TULIPROX_CA_FILE,
// TULIPROX_ALLOW_HTTP and TULIPROX_TIMEOUT are App's.
const (
	// EnvUsername and EnvPassword name the Web UI user the service signs
	// in as; both are read from their _FILE, never from the environment.
	EnvUsername = "TULIPROX_USERNAME"
	EnvPassword = "TULIPROX_PASSWORD"
	// EnvTokenTTL is the token lifetime assumed when a token carries no
	// readable expiry: Tuliprox's web_ui.auth.token_ttl_mins.
	EnvTokenTTL = "TULIPROX_TOKEN_TTL"
	// EnvAllowWrites is the toolkit's switch for the two write tools.
	EnvAllowWrites = "TULIPROX_ALLOW_WRITES"
)

// DefaultTokenTTL is Tuliprox's default web_ui.auth.token_ttl_mins (30).
const DefaultTokenTTL = 30 * time.Minute

// App names Tuliprox's upstream settings. TULIPROX_URL is the base URL of
// the Web UI including its path prefix (web_ui.path), as the seed's
// --mcp-url: the service appends /auth/token and /api/v1/….
var App = upstream.App{Prefix: "TULIPROX", Name: "Tuliprox", Credential: upstream.NoCredential}

// Settings are the tuliprox service's settings.
type Settings struct {
	Upstream upstream.Settings
	// Username and Password are nil when Tuliprox runs without web
	// authentication (then the service is read-only whatever it is told).
	Username, Password []byte
	TokenTTL           time.Duration
	AllowWrites        bool
}

// LoadSettings reads the settings through l, reporting every problem at
// once by name and never with its value.
func LoadSettings(l *config.Loader) (Settings, error) {
	up, _ := App.Load(l)
	s := Settings{
		Upstream:    up,
		TokenTTL:    l.Duration(EnvTokenTTL, DefaultTokenTTL),
		AllowWrites: l.Bool(EnvAllowWrites, false),
	}
	var hasUser, hasPass bool
	s.Username, hasUser = l.OptionalSecret(EnvUsername)
	s.Password, hasPass = l.OptionalSecret(EnvPassword)
	switch {
	case hasUser && !hasPass:
		l.Fail(EnvPassword+"_FILE", "is required with "+EnvUsername+"_FILE")
	case hasPass && !hasUser:
		l.Fail(EnvUsername+"_FILE", "is required with "+EnvPassword+"_FILE")
	}
	if s.TokenTTL < time.Minute || s.TokenTTL > 24*time.Hour*366 {
		l.Fail(EnvTokenTTL, "must be between 1m and 8784h")
	}
	return s, l.Err()
}

// Secret is the value the redactor must mask wherever it appears: the
// password. The user name is not masked everywhere (a short or common
// name would mangle unrelated text); it is never sent anywhere but the
// sign-in.
func (s Settings) Secret() []byte { return s.Password }
