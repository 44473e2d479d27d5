package diag

import (
	"errors"
	"net"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
)

// The service's settings. Secrets and pins come from files.
const (
	EnvHost       = "UNRAID_SSH_HOST"
	EnvUser       = "UNRAID_SSH_USER"
	EnvKey        = "UNRAID_SSH_KEY" // read from UNRAID_SSH_KEY_FILE
	EnvKnownHosts = "UNRAID_SSH_KNOWN_HOSTS_FILE"
	EnvTimeout    = "UNRAID_SSH_TIMEOUT"
	EnvMaxOutput  = "UNRAID_SSH_MAX_OUTPUT_BYTES"
)

// Settings are the loaded settings.
type Settings struct {
	Addr           string
	User           string
	Key            []byte
	KnownHostsFile string
	Timeout        time.Duration
	MaxOutputBytes int
}

var (
	userName = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)
	hostName = regexp.MustCompile(`^[A-Za-z0-9.:\[\]-]{1,255}$`)
)

// LoadSettings reads the settings through l; every problem is named,
// never with its value.
func LoadSettings(l *config.Loader) (Settings, error) {
	s := Settings{
		User:           l.String(EnvUser, "root"),
		Key:            l.Secret(EnvKey),
		Timeout:        l.Duration(EnvTimeout, 30*time.Second),
		MaxOutputBytes: l.Int(EnvMaxOutput, 64<<10, 4<<10, 256<<10),
	}
	host := l.Required(EnvHost)
	if host != "" {
		if !hostName.MatchString(host) || strings.Contains(host, "@") {
			l.Fail(EnvHost, "must be a host name or address, optionally with :port (no user@ or ssh://)")
		} else if _, _, err := net.SplitHostPort(host); err == nil {
			s.Addr = host
		} else {
			s.Addr = net.JoinHostPort(strings.Trim(host, "[]"), "22")
		}
	}
	if !userName.MatchString(s.User) {
		l.Fail(EnvUser, "must be a user name (lower-case letters, digits, _ and -)")
	}
	if l.Set(EnvKnownHosts) {
		s.KnownHostsFile = l.File(EnvKnownHosts)
	} else {
		l.Fail(EnvKnownHosts, "is required: a file with the server's host key (ssh-keyscan output); an unknown host key is never trusted")
	}
	if s.Timeout <= 0 || s.Timeout > 5*time.Minute {
		l.Fail(EnvTimeout, "must be between 1s and 5m")
	}
	if err := l.Err(); err != nil {
		return Settings{}, err
	}
	if s.Addr == "" {
		return Settings{}, errors.New(EnvHost + ": is required")
	}
	return s, nil
}
