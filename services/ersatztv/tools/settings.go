package tools

import (
	"log/slog"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

// The service's own settings; ERSATZTV_URL, ERSATZTV_API_KEY_FILE,
// ERSATZTV_CA_FILE, ERSATZTV_ALLOW_HTTP and ERSATZTV_TIMEOUT are App's.
const (
	EnvMode             = "ERSATZTV_MODE"
	EnvMaxResponseBytes = "ERSATZTV_MAX_RESPONSE_BYTES"
	EnvAllowWrites      = "ERSATZTV_ALLOW_WRITES"
	// EnvTimeoutSeconds is the seed's name of ERSATZTV_TIMEOUT, in seconds.
	EnvTimeoutSeconds = "ERSATZTV_REQUEST_TIMEOUT_SECONDS"
)

// Defaults and bounds.
const (
	DefaultMaxResponseBytes = 1 << 20
	MinMaxResponseBytes     = 4 << 10
	MaxMaxResponseBytes     = 16 << 20
)

// App names ErsatzTV's upstream settings. The key is optional here: the
// unversioned API of upstream ErsatzTV takes none; the /api/v1 API needs
// it, which detection (or ERSATZTV_MODE=v1) insists on.
var App = upstream.App{
	Prefix: "ERSATZTV", Name: "ErsatzTV", Credential: upstream.APIKey, CredentialOptional: true,
	MaxTimeout: 5 * time.Minute,
	Aliases:    upstream.Aliases{TimeoutSeconds: EnvTimeoutSeconds},
}

// Mode setting values.
const (
	ModeAuto   = "auto"
	ModeV1     = string(client.V1)
	ModeLegacy = string(client.Legacy)
)

// Settings are the ersatztv service's settings.
type Settings struct {
	Upstream upstream.Settings
	// Mode is auto (detect at start), v1 or legacy.
	Mode             string
	MaxResponseBytes int
	AllowWrites      bool
}

// LoadSettings reads the settings through l, reporting every problem at
// once by name and never with its value.
func LoadSettings(l *config.Loader) (Settings, error) {
	up, _ := App.Load(l)
	s := Settings{
		Upstream:         up,
		Mode:             l.String(EnvMode, ModeAuto),
		MaxResponseBytes: l.Int(EnvMaxResponseBytes, DefaultMaxResponseBytes, MinMaxResponseBytes, MaxMaxResponseBytes),
		AllowWrites:      l.Bool(EnvAllowWrites, false),
	}
	switch s.Mode {
	case ModeAuto, ModeLegacy:
	case ModeV1:
		if up.Secret == nil {
			l.Fail(up.Env.Credential+"_FILE", "is required with "+EnvMode+"=v1: the /api/v1 API needs ErsatzTV's machine key")
		}
	default:
		l.Fail(EnvMode, "must be auto, v1 or legacy")
	}
	return s, l.Err()
}

// clients builds the upstream client that sends the machine key (for
// /api/v1) and one that does not (for upstream ErsatzTV, which takes
// none: a key it never asked for is not sent).
func (s Settings) clients(log *slog.Logger) (keyed, plain *upstream.Client, err error) {
	cfg := s.Upstream.Config()
	cfg.MaxBytes = int64(s.MaxResponseBytes)
	cfg.UserAgent = "toolgate-ersatztv"
	cfg.Logger = log
	if keyed, err = upstream.New(cfg); err != nil {
		return nil, nil, err
	}
	cfg.Header = cfg.Header.Clone()
	cfg.Header.Del("X-Api-Key")
	plain, err = upstream.New(cfg)
	return keyed, plain, err
}
