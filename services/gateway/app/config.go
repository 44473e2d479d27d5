package app

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/services/gateway/approvals"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/console"
	"github.com/toolgate/toolgate/services/gateway/sessions"
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
	EnvPolicyToken        = "TOOLGATE_POLICY_TOKEN"
	EnvPolicyDir          = "POLICY_DIR"
	EnvPinsFile           = "TOOLGATE_PINS_FILE"
	EnvTicketsFile        = "TOOLGATE_TICKETS_FILE"
	EnvApproversFile      = "TOOLGATE_APPROVERS_FILE"
	EnvApprovalURL        = "TOOLGATE_APPROVAL_URL"
	EnvNotifyWebhookURL   = "TOOLGATE_NOTIFY_WEBHOOK_URL"
	EnvNotifyNtfyURL      = "TOOLGATE_NOTIFY_NTFY_URL"
	EnvNotifyNtfyToken    = "TOOLGATE_NOTIFY_NTFY_TOKEN"
	EnvNotifyHomeAssist   = "TOOLGATE_NOTIFY_HOMEASSISTANT"
	EnvUserJWTSecret      = "TOOLGATE_USER_JWT_SECRET"
	EnvUserJWTHeader      = "TOOLGATE_USER_JWT_HEADER"
	EnvUserJWTIssuer      = "TOOLGATE_USER_JWT_ISSUER"
	EnvUserJWTAudience    = "TOOLGATE_USER_JWT_AUDIENCE"
	EnvCallTimeout        = "TOOLGATE_CALL_TIMEOUT"
	EnvMaxResultBytes     = "TOOLGATE_MAX_RESULT_BYTES"
	EnvServiceConcurrency = "TOOLGATE_SERVICE_CONCURRENCY"
	EnvRefreshInterval    = "TOOLGATE_REFRESH_INTERVAL"
	EnvLogLevel           = "TOOLGATE_LOG_LEVEL"
	EnvAuditBatch         = "TOOLGATE_AUDIT_BATCH"
	EnvAuditFile          = "TOOLGATE_AUDIT_FILE"
	EnvAuditFileMax       = "TOOLGATE_AUDIT_FILE_MAX_BYTES"
	EnvConsoleEntries     = "TOOLGATE_CONSOLE_ENTRIES"
	EnvSessionsPerClient  = "TOOLGATE_SESSIONS_PER_CLIENT"
	EnvSessionsMax        = "TOOLGATE_SESSIONS_MAX"
	EnvInitializeRate     = "TOOLGATE_INITIALIZE_PER_MINUTE"
	EnvInitializeBurst    = "TOOLGATE_INITIALIZE_BURST"
	EnvToolsets           = "TOOLGATE_TOOLSETS"
)

// ServiceTokenSetting is the secret setting of one service's token:
// TOOLGATE_SERVICE_TOKEN_<NAME>, read from TOOLGATE_SERVICE_TOKEN_<NAME>_FILE.
func ServiceTokenSetting(service string) string {
	return "TOOLGATE_SERVICE_TOKEN_" + strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

var (
	serviceName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	headerName  = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
)

// LoadConfig reads the gateway's configuration; the error lists every bad
// or missing setting by name, never a value.
func LoadConfig(l *config.Loader) (Config, error) {
	var problems []error
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
		AuditBatch:         l.Duration(EnvAuditBatch, 200*time.Millisecond),
		AuditFile:          l.String(EnvAuditFile, ""),
		AuditFileMax:       int64(l.Int(EnvAuditFileMax, audit.DefaultFileMax, audit.MinFileMax, 1<<30)),
		ConsoleEntries:     l.Int(EnvConsoleEntries, console.DefaultEntries, 100, 100_000),
		Sessions: sessions.Config{
			PerClient:            l.Int(EnvSessionsPerClient, sessions.DefaultPerClient, 1, 10_000),
			Total:                l.Int(EnvSessionsMax, sessions.DefaultTotal, 1, 100_000),
			InitializesPerMinute: l.Int(EnvInitializeRate, sessions.DefaultInitializesPerMin, 1, 60_000),
			InitializeBurst:      l.Int(EnvInitializeBurst, sessions.DefaultInitializeBurst, 1, 10_000),
		},
	}
	cfg.AdminToken, _ = l.OptionalSecret(EnvAdminToken)
	if u := l.URL(EnvApprovalURL, ""); u != nil {
		if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			problems = append(problems, &config.SettingError{Name: EnvApprovalURL, Problem: "must be scheme://host[:port] without a path"})
		}
		cfg.ApprovalURL = strings.TrimRight(u.String(), "/")
	}
	if u := l.URL(EnvNotifyWebhookURL, ""); u != nil {
		cfg.NotifyWebhookURL = u.String()
	}
	if u := l.URL(EnvNotifyNtfyURL, ""); u != nil {
		cfg.NotifyNtfyURL = u.String()
	}
	cfg.NotifyNtfyToken, _ = l.OptionalSecret(EnvNotifyNtfyToken)
	cfg.NotifyHomeAssistant = l.Bool(EnvNotifyHomeAssist, false)
	if path := l.String(EnvApproversFile, ""); path != "" {
		a, err := approvals.LoadApprovers(path)
		if err != nil {
			problems = append(problems, &config.SettingError{Name: EnvApproversFile, Problem: approversProblem(err)})
		}
		cfg.Approvers = a
	}
	cfg.UserTokens = auth.UserTokens{
		Header:   l.String(EnvUserJWTHeader, auth.DefaultUserTokenHeader),
		Issuer:   l.String(EnvUserJWTIssuer, auth.DefaultUserTokenIssuer),
		Audience: l.String(EnvUserJWTAudience, ""),
	}
	cfg.UserTokens.Secret, _ = l.OptionalSecret(EnvUserJWTSecret)
	if s := bytes.TrimSpace(cfg.UserTokens.Secret); len(cfg.UserTokens.Secret) > 0 {
		// OpenWebUI strips its secret too; the file's newline is not part of it.
		cfg.UserTokens.Secret = s
		if len(s) < auth.MinUserTokenSecret {
			problems = append(problems, &config.SettingError{Name: EnvUserJWTSecret + "_FILE", Problem: fmt.Sprintf("must hold at least %d bytes (the same secret as OpenWebUI's FORWARD_USER_INFO_HEADER_JWT_SECRET)", auth.MinUserTokenSecret)})
		}
	}
	if !headerName.MatchString(cfg.UserTokens.Header) {
		problems = append(problems, &config.SettingError{Name: EnvUserJWTHeader, Problem: "must be an HTTP header name"})
	}
	if cfg.PolicyMode == "remote" {
		if u := l.URL(EnvPolicyURL, ""); u != nil {
			cfg.PolicyURL = u.String()
		} else {
			l.Required(EnvPolicyURL)
		}
		// The sidecar serves nothing without it (policies/system/authz.rego).
		cfg.PolicyToken = l.Secret(EnvPolicyToken)
	}
	for _, o := range strings.Split(l.String(EnvAllowedOrigins, ""), ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, o)
		}
	}
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
	var names []string
	for _, s := range cfg.Services {
		names = append(names, s.Name)
	}
	if cfg.NotifyHomeAssistant && !slices.Contains(names, homeAssistant) {
		problems = append(problems, &config.SettingError{Name: EnvNotifyHomeAssist, Problem: "needs the homeassistant service in " + EnvServices})
	}
	toolsets, terr := parseToolsets(l.String(EnvToolsets, ""), names)
	if terr != nil {
		problems = append(problems, &config.SettingError{Name: EnvToolsets, Problem: terr.Error()})
	}
	cfg.Toolsets = toolsets
	err := l.Err()
	if tokensPath != "" {
		tokens, terr := auth.LoadTokens(tokensPath)
		if terr != nil {
			problems = append(problems, &config.SettingError{Name: EnvClientTokensFile, Problem: tokenProblem(terr)})
		}
		cfg.Tokens, cfg.TokensFile = tokens, tokensPath
		if names := tokens.Names(auth.UserJWT); len(names) > 0 && len(cfg.UserTokens.Secret) == 0 {
			problems = append(problems, &config.SettingError{Name: EnvUserJWTSecret + "_FILE",
				Problem: "is required: client " + strings.Join(names, ", ") + " has user=jwt (the same secret as OpenWebUI's FORWARD_USER_INFO_HEADER_JWT_SECRET)"})
		}
	}
	if err != nil || len(problems) > 0 {
		return Config{}, fmt.Errorf("gateway configuration: %w", errors.Join(append([]error{err}, problems...)...))
	}
	return cfg, nil
}

// approversProblem names what is wrong with the approvers file: its line
// number, never its content.
func approversProblem(err error) string {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return "names a file that cannot be read"
	}
	return strings.TrimPrefix(err.Error(), "approvers ")
}

func tokenProblem(err error) string {
	var pe *auth.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("line %d: %s", pe.Line, pe.Msg)
	}
	return "names a file that cannot be read"
}
