package app_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/sessions"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, line, _ := auth.NewToken("openwebui", []string{"users"}, auth.UserHeaders)
	tokens := write("tokens", line+"\n")
	badTokens := write("bad-tokens", "sha256:zz openwebui users\n")
	_, jwtLine, _ := auth.NewToken("owui", []string{"users"}, auth.UserJWT)
	jwtTokens := write("jwt-tokens", jwtLine+"\n")
	shortSecret := write("short-secret", "tooshort\n")
	key := write("key", approvalKey+"\n")
	svcTok := write("svc", serviceToken)
	base := map[string]string{
		app.EnvClientTokensFile:            tokens,
		app.EnvApprovalKey + "_FILE":       key,
		app.EnvServices:                    "demo=http://demo:8000/mcp, web=http://web:8000/mcp",
		"TOOLGATE_SERVICE_TOKEN_DEMO_FILE": svcTok,
		"TOOLGATE_SERVICE_TOKEN_WEB_FILE":  svcTok,
	}
	with := func(changes map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range changes {
			if v == "-" {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	cases := []struct {
		name    string
		env     map[string]string
		wantErr []string
	}{
		{"complete", base, nil},
		{"nothing set", map[string]string{}, []string{app.EnvClientTokensFile, app.EnvApprovalKey + "_FILE"}},
		{"secret in plain env", with(map[string]string{app.EnvApprovalKey: approvalKey}), []string{app.EnvApprovalKey}},
		{"service without its token", with(map[string]string{"TOOLGATE_SERVICE_TOKEN_WEB_FILE": "-"}), []string{"TOOLGATE_SERVICE_TOKEN_WEB_FILE"}},
		{"malformed services", with(map[string]string{app.EnvServices: "demo http://demo"}), []string{app.EnvServices}},
		{"service URL not http", with(map[string]string{app.EnvServices: "demo=ftp://demo/mcp"}), []string{"service demo"}},
		{"bad tokens file", with(map[string]string{app.EnvClientTokensFile: badTokens}), []string{app.EnvClientTokensFile, "line 1"}},
		{"remote policy without URL and token", with(map[string]string{app.EnvPolicyMode: "remote"}), []string{app.EnvPolicyURL, app.EnvPolicyToken + "_FILE"}},
		{"remote policy without token", with(map[string]string{app.EnvPolicyMode: "remote", app.EnvPolicyURL: "http://policy:8181"}), []string{app.EnvPolicyToken + "_FILE"}},
		{"policy token in plain env", with(map[string]string{app.EnvPolicyMode: "remote", app.EnvPolicyURL: "http://policy:8181", app.EnvPolicyToken: approvalKey}), []string{app.EnvPolicyToken}},
		{"JWT client without the secret", with(map[string]string{app.EnvClientTokensFile: jwtTokens}), []string{app.EnvUserJWTSecret + "_FILE", "client owui has user=jwt"}},
		{"JWT secret too short", with(map[string]string{app.EnvUserJWTSecret + "_FILE": shortSecret}), []string{app.EnvUserJWTSecret + "_FILE", "at least 32 bytes"}},
		{"JWT secret in plain env", with(map[string]string{app.EnvUserJWTSecret: "openwebui-forward-jwt-secret-0123456789abcdef"}), []string{app.EnvUserJWTSecret}},
		{"JWT header not a header name", with(map[string]string{app.EnvUserJWTHeader: "X User: Jwt"}), []string{app.EnvUserJWTHeader}},
		{"approval URL with a path", with(map[string]string{app.EnvApprovalURL: "http://127.0.0.1:8081/approvals"}), []string{app.EnvApprovalURL}},
		{"unreadable approvers file", with(map[string]string{app.EnvApproversFile: badTokens}), []string{app.EnvApproversFile, "line 1"}},
		{"missing approvers file", with(map[string]string{app.EnvApproversFile: "/nonexistent/approvers"}), []string{app.EnvApproversFile, "cannot be read"}},
		{"Home Assistant notifications without the service", with(map[string]string{app.EnvNotifyHomeAssist: "true"}), []string{app.EnvNotifyHomeAssist, "homeassistant"}},
		{"notification URL not http", with(map[string]string{app.EnvNotifyWebhookURL: "ftp://hooks/x"}), []string{app.EnvNotifyWebhookURL}},
		{"bad duration and int", with(map[string]string{app.EnvCallTimeout: "soon", app.EnvMaxResultBytes: "lots"}), []string{app.EnvCallTimeout, app.EnvMaxResultBytes}},
		{"bad audit batch", with(map[string]string{app.EnvAuditBatch: "0"}), []string{app.EnvAuditBatch}},
		{"session and initialize bounds out of range", with(map[string]string{
			app.EnvSessionsPerClient: "0", app.EnvSessionsMax: "many", app.EnvInitializeRate: "-1", app.EnvInitializeBurst: "100000",
		}), []string{app.EnvSessionsPerClient, app.EnvSessionsMax, app.EnvInitializeRate, app.EnvInitializeBurst}},
		{"public URL not absolute", with(map[string]string{app.EnvPublicURL: "gateway:8080"}), []string{app.EnvPublicURL}},
		{"public URL with a query", with(map[string]string{app.EnvPublicURL: "https://lab.example/tg?x=1"}), []string{app.EnvPublicURL}},
		{"public URL with credentials", with(map[string]string{app.EnvPublicURL: "https://u:p@lab.example/"}), []string{app.EnvPublicURL}},
	}
	t.Run("remote policy with its token", func(t *testing.T) {
		env := with(map[string]string{app.EnvPolicyMode: "remote", app.EnvPolicyURL: "http://policy:8181", app.EnvPolicyToken + "_FILE": svcTok})
		cfg, err := app.LoadConfig(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
		if err != nil || cfg.PolicyURL != "http://policy:8181" || string(cfg.PolicyToken) != serviceToken {
			t.Fatalf("got %q, %q, %v", cfg.PolicyURL, cfg.PolicyToken, err)
		}
	})
	t.Run("public URL keeps a proxy's path prefix", func(t *testing.T) {
		env := with(map[string]string{app.EnvPublicURL: "https://lab.example/toolgate/"})
		cfg, err := app.LoadConfig(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
		if err != nil || cfg.PublicURL != "https://lab.example/toolgate" {
			t.Fatalf("got %q, %v", cfg.PublicURL, err)
		}
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := app.LoadConfig(config.New(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }))
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(cfg.Services) != 2 || cfg.Services[1].Name != "web" || string(cfg.Services[0].Token) != serviceToken ||
					cfg.CallTimeout != 90*time.Second || cfg.Listen != ":8080" || cfg.AdminListen != "127.0.0.1:8081" || cfg.Tokens == nil ||
					cfg.AuditBatch != 200*time.Millisecond ||
					cfg.Sessions.PerClient != sessions.DefaultPerClient || cfg.Sessions.Total != sessions.DefaultTotal ||
					cfg.Sessions.InitializesPerMinute != sessions.DefaultInitializesPerMin || cfg.Sessions.InitializeBurst != sessions.DefaultInitializeBurst {
					t.Fatalf("unexpected config: %+v", cfg)
				}
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
			}
			for _, secret := range []string{approvalKey, serviceToken, dir} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error leaks %q: %v", secret, err)
				}
			}
		})
	}
}

func TestLoadConfigReadsTheOpenWebUISecret(t *testing.T) {
	dir := t.TempDir()
	_, line, _ := auth.NewToken("owui", []string{"users"}, auth.UserJWT)
	files := map[string]string{"tokens": line + "\n", "key": approvalKey, "jwt": "  openwebui-forward-jwt-secret-0123456789abcdef\n"}
	for n, c := range files {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o600)
	}
	env := map[string]string{
		app.EnvClientTokensFile: filepath.Join(dir, "tokens"), app.EnvApprovalKey + "_FILE": filepath.Join(dir, "key"),
		app.EnvUserJWTSecret + "_FILE": filepath.Join(dir, "jwt"), app.EnvUserJWTHeader: "X-Home-Jwt",
	}
	cfg, err := app.LoadConfig(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	// OpenWebUI strips its secret; so does toolgate, or the two would differ.
	if string(cfg.UserTokens.Secret) != "openwebui-forward-jwt-secret-0123456789abcdef" ||
		cfg.UserTokens.Header != "X-Home-Jwt" || cfg.UserTokens.Issuer != "open-webui" {
		t.Fatalf("user tokens: header %q issuer %q secret of %d bytes", cfg.UserTokens.Header, cfg.UserTokens.Issuer, len(cfg.UserTokens.Secret))
	}
}

func TestToolsetsSetting(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, line, _ := auth.NewToken("openwebui", []string{"users"}, auth.UserNone)
	base := map[string]string{
		app.EnvClientTokensFile:            file("tokens", line+"\n"),
		app.EnvApprovalKey + "_FILE":       file("key", approvalKey+"\n"),
		app.EnvServices:                    "demo=http://demo:8000/mcp,arr=http://arr:8000/mcp",
		"TOOLGATE_SERVICE_TOKEN_DEMO_FILE": file("svc", serviceToken),
		"TOOLGATE_SERVICE_TOKEN_ARR_FILE":  file("svc", serviceToken),
	}
	load := func(setting, services string) (app.Config, error) {
		env := map[string]string{app.EnvToolsets: setting}
		for k, v := range base {
			env[k] = v
		}
		if services != "" {
			env[app.EnvServices] = services
		}
		return app.LoadConfig(config.New(func(k string) (string, bool) { v, ok := env[k]; return v, ok }))
	}
	names := func(cfg app.Config) string {
		var out []string
		for _, ts := range cfg.Toolsets {
			out = append(out, ts.Name+"="+ts.Service+":"+strings.Join(ts.Tools, ","))
		}
		return strings.Join(out, ";")
	}
	ok := []struct{ name, setting, services, want string }{
		{"defaults for arr", "", "", "sonarr=arr:sonarr_*;radarr=arr:radarr_*;prowlarr=arr:prowlarr_*"},
		{"no arr, no defaults", "", "demo=http://demo:8000/mcp", ""},
		{"one more", "counter=demo:demo_counter_*, demo_echo", "demo=http://demo:8000/mcp", "counter=demo:demo_counter_*,demo_echo"},
		{"a default replaced", "sonarr=arr:sonarr_series_list", "", "sonarr=arr:sonarr_series_list;radarr=arr:radarr_*;prowlarr=arr:prowlarr_*"},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := load(tc.setting, tc.services)
			if err != nil || names(cfg) != tc.want {
				t.Fatalf("got %q, %v; want %q", names(cfg), err, tc.want)
			}
		})
	}
	for _, bad := range []string{"counter", "counter=demo", "x=nosuch:a_*", "arr=demo:demo_*", "discover=demo:demo_*", "x=demo:", "x=demo:Demo x", "a=demo:demo_x;a=demo:demo_y"} {
		t.Run("refused "+bad, func(t *testing.T) {
			if _, err := load(bad, ""); err == nil || !strings.Contains(err.Error(), app.EnvToolsets) {
				t.Fatalf("got %v", err)
			}
		})
	}
}
