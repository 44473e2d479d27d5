package app

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/services/gateway/auth"
)

// Environment settings of the gateway. Secrets are read from the files
// named by NAME_FILE.
const (
	EnvListen             = "TOOLGATE_LISTEN"
	EnvAdminListen        = "TOOLGATE_ADMIN_LISTEN"
	EnvClientTokensFile   = "TOOLGATE_CLIENT_TOKENS_FILE"
	EnvAdminToken         = "TOOLGATE_ADMIN_TOKEN"
	EnvApprovalKey        = "TOOLGATE_APPROVAL_KEY"
	EnvServices           = "TOOLGATE_SERVICES"
	EnvAllowedOrigins     = "TOOLGATE_ALLOWED_ORIGINS"
	EnvPublicURL          = "TOOLGATE_PUBLIC_URL"
	EnvPolicyMode         = "POLICY_MODE"
	EnvPolicyURL          = "POLICY_URL"
	EnvPolicyDir          = "POLICY_DIR"
	EnvPinsFile           = "TOOLGATE_PINS_FILE"
	EnvTicketsFile        = "TOOLGATE_TICKETS_FILE"
	EnvCallTimeout        = "TOOLGATE_CALL_TIMEOUT"
	EnvMaxResultBytes     = "TOOLGATE_MAX_RESULT_BYTES"
	EnvServiceConcurrency = "TOOLGATE_SERVICE_CONCURRENCY"
	EnvRefreshInterval    = "TOOLGATE_REFRESH_INTERVAL"
	EnvLogLevel           = "TOOLGATE_LOG_LEVEL"
)

// ServiceTokenSetting is the secret setting of one service's token:
// TOOLGATE_SERVICE_TOKEN_<NAME>, read from TOOLGATE_SERVICE_TOKEN_<NAME>_FILE.
func ServiceTokenSetting(service string) string {
	return "TOOLGATE_SERVICE_TOKEN_" + strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

var serviceName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)

// LoadConfig reads the gateway's configuration; the error lists every bad
// or missing setting by name, never a value.
func LoadConfig(l *config.Loader) (Config, error) {
	cfg := Config{
		Listen:             l.String(EnvListen, ":8080"),
		AdminListen:        l.String(EnvAdminListen, "127.0.0.1:8081"),
		ApprovalKey:        l.Secret(EnvApprovalKey),
		PolicyMode:         l.String(EnvPolicyMode, "embedded"),
		PolicyDir:          l.String(EnvPolicyDir, ""),
		PinsFile:           l.String(EnvPinsFile, ""),
		TicketsFile:        l.String(EnvTicketsFile, ""),
		CallTimeout:        l.Duration(EnvCallTimeout, 90*time.Second),
		MaxResultBytes:     l.Int(EnvMaxResultBytes, 512<<10, 4<<10, 64<<20),
		ServiceConcurrency: l.Int(EnvServiceConcurrency, 16, 1, 1024),
		RefreshInterval:    l.Duration(EnvRefreshInterval, time.Minute),
	}
	cfg.AdminToken, _ = l.OptionalSecret(EnvAdminToken)
	if cfg.PolicyMode == "remote" {
		if u := l.URL(EnvPolicyURL, ""); u != nil {
			cfg.PolicyURL = u.String()
		} else {
			l.Required(EnvPolicyURL)
		}
	}
	for _, o := range strings.Split(l.String(EnvAllowedOrigins, ""), ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, o)
		}
	}
	var problems []error
	if u := l.URL(EnvPublicURL, ""); u != nil {
		if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.Contains(u.String(), "#") {
			problems = append(problems, &config.SettingError{Name: EnvPublicURL, Problem: "must not have a query or a fragment"})
		}
		cfg.PublicURL = strings.TrimRight(u.String(), "/")
	}
	tokensPath := l.Required(EnvClientTokensFile)
	for _, item := range strings.Split(l.String(EnvServices, ""), ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, rawURL, ok := strings.Cut(item, "=")
		if !ok || !serviceName.MatchString(name) {
			problems = append(problems, &config.SettingError{Name: EnvServices, Problem: "must be a comma-separated list of name=url (names: lower-case letters, digits, dashes)"})
			continue
		}
		one := config.New(func(string) (string, bool) { return rawURL, true })
		u := one.URL(EnvServices+"["+name+"]", "")
		if one.Err() != nil || u == nil {
			problems = append(problems, &config.SettingError{Name: EnvServices, Problem: "service " + name + " needs an absolute http or https URL"})
			continue
		}
		cfg.Services = append(cfg.Services, ServiceConfig{Name: name, URL: u.String(), Token: l.Secret(ServiceTokenSetting(name))})
	}
	err := l.Err()
	if tokensPath != "" {
		tokens, terr := auth.LoadTokens(tokensPath)
		if terr != nil {
			problems = append(problems, &config.SettingError{Name: EnvClientTokensFile, Problem: tokenProblem(terr)})
		}
		cfg.Tokens = tokens
	}
	if err != nil || len(problems) > 0 {
		return Config{}, fmt.Errorf("gateway configuration: %w", errors.Join(append([]error{err}, problems...)...))
	}
	return cfg, nil
}

func tokenProblem(err error) string {
	var pe *auth.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
	}
	return "names a file that cannot be read"
}
