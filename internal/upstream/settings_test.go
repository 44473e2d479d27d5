package upstream

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
)

func TestAppSettings(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("k3y-value-9f2a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, []byte("not checked here"), 0o600); err != nil {
		t.Fatal(err)
	}
	sonarr := App{Prefix: "SONARR", Name: "Sonarr", Credential: APIKey}
	ha := App{Prefix: "HA", Name: "Home Assistant", Credential: Token, DefaultTimeout: 10 * time.Second}
	frigate := App{Prefix: "FRIGATE", Credential: Token, CredentialOptional: true, MaxTimeout: time.Minute,
		Aliases: Aliases{URL: "FRIGATE_API_ROOT", Credential: "FRIGATE_BEARER_TOKEN", CAFile: "FRIGATE_CA_CERT_FILE",
			AllowHTTP: "FRIGATE_ALLOW_INSECURE_HTTP", TimeoutMS: "FRIGATE_TIMEOUT_MS"}}
	ersatztv := App{Prefix: "ERSATZTV", Credential: APIKey, CredentialOptional: true, MaxTimeout: 5 * time.Minute,
		Aliases: Aliases{TimeoutSeconds: "ERSATZTV_REQUEST_TIMEOUT_SECONDS"}}
	optional := sonarr
	optional.Optional = true

	tests := []struct {
		name       string
		app        App
		env        map[string]string
		unset      bool // an Optional app left unconfigured
		check      func(t *testing.T, s Settings)
		wantErr    []string // each setting named
		notInError string   // a value that must not appear
	}{
		{name: "every setting", app: sonarr, env: map[string]string{
			"SONARR_URL": "https://sonarr.lan:8989/base", "SONARR_API_KEY_FILE": keyFile, "SONARR_CA_FILE": caFile, "SONARR_TIMEOUT": "45s"},
			check: func(t *testing.T, s Settings) {
				c := s.Config()
				if c.BaseURL != "https://sonarr.lan:8989/base" || c.CAFile != caFile || c.Timeout != 45*time.Second || c.AllowHTTP ||
					c.Header.Get("X-Api-Key") != "k3y-value-9f2a" || c.Name != "Sonarr" || string(s.Secret) != "k3y-value-9f2a" {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "token as bearer, default timeout, plain http opted in", app: ha, env: map[string]string{
			"HA_URL": "http://ha.lan:8123", "HA_TOKEN_FILE": keyFile, "HA_ALLOW_HTTP": "true"},
			check: func(t *testing.T, s Settings) {
				c := s.Config()
				if c.Header.Get("Authorization") != "Bearer k3y-value-9f2a" || c.Timeout != 10*time.Second || !c.AllowHTTP || s.Env.Credential != "HA_TOKEN" {
					t.Errorf("config %+v", c)
				}
			}},
		{name: "nothing set", app: sonarr, wantErr: []string{"SONARR_URL", "SONARR_API_KEY_FILE"}},
		{name: "plain http without opt-in", app: sonarr, env: map[string]string{"SONARR_URL": "http://sonarr.lan:8989", "SONARR_API_KEY_FILE": keyFile},
			wantErr: []string{"SONARR_ALLOW_HTTP", "SONARR_URL uses plain http"}},
		{name: "credentials in the URL", app: sonarr, env: map[string]string{"SONARR_URL": "https://admin:pa55-77c1@sonarr.lan", "SONARR_API_KEY_FILE": keyFile},
			wantErr: []string{"SONARR_URL"}, notInError: "pa55-77c1"},
		{name: "query in the URL", app: sonarr, env: map[string]string{"SONARR_URL": "https://sonarr.lan/?apikey=q-51e0", "SONARR_API_KEY_FILE": keyFile},
			wantErr: []string{"SONARR_URL: must not have a query"}, notInError: "q-51e0"},
		{name: "not a URL", app: sonarr, env: map[string]string{"SONARR_URL": "sonarr-4d1c", "SONARR_API_KEY_FILE": keyFile},
			wantErr: []string{"SONARR_URL"}, notInError: "4d1c"},
		{name: "key in the environment", app: sonarr, env: map[string]string{"SONARR_URL": "https://sonarr.lan", "SONARR_API_KEY": "env-key-0b3e"},
			wantErr: []string{"SONARR_API_KEY"}, notInError: "0b3e"},
		{name: "missing key file", app: sonarr, env: map[string]string{"SONARR_URL": "https://sonarr.lan", "SONARR_API_KEY_FILE": filepath.Join(dir, "none-6a6a")},
			wantErr: []string{"SONARR_API_KEY_FILE: names a file that does not exist"}, notInError: "6a6a"},
		{name: "missing CA file", app: sonarr, env: map[string]string{"SONARR_URL": "https://sonarr.lan", "SONARR_API_KEY_FILE": keyFile, "SONARR_CA_FILE": filepath.Join(dir, "ca-5e5e.pem")},
			wantErr: []string{"SONARR_CA_FILE: names a file that does not exist"}, notInError: "5e5e"},
		{name: "bad timeout", app: sonarr, env: map[string]string{"SONARR_URL": "https://sonarr.lan", "SONARR_API_KEY_FILE": keyFile, "SONARR_TIMEOUT": "30-x9"},
			wantErr: []string{"SONARR_TIMEOUT"}, notInError: "x9"},
		{name: "timeout over the maximum", app: frigate, env: map[string]string{"FRIGATE_URL": "https://nvr.lan", "FRIGATE_TIMEOUT": "2m"},
			wantErr: []string{"FRIGATE_TIMEOUT: must be at most 1m0s"}},
		{name: "optional app left unconfigured", app: optional, unset: true},
		{name: "optional app half configured", app: optional, env: map[string]string{"SONARR_API_KEY_FILE": keyFile}, wantErr: []string{"SONARR_URL"}},
		{name: "optional app with a key in the environment", app: optional, env: map[string]string{"SONARR_API_KEY": "env-key-0b3e"},
			wantErr: []string{"SONARR_API_KEY"}, notInError: "0b3e"},
		{name: "optional credential left out", app: frigate, env: map[string]string{"FRIGATE_URL": "https://nvr.lan"},
			check: func(t *testing.T, s Settings) {
				if s.Secret != nil || s.Config().Header.Get("Authorization") != "" {
					t.Errorf("settings %+v", s.Config())
				}
			}},
		{name: "older names", app: frigate, env: map[string]string{
			"FRIGATE_API_ROOT": "http://nvr.lan:5000/api", "FRIGATE_ALLOW_INSECURE_HTTP": "true", "FRIGATE_BEARER_TOKEN_FILE": keyFile,
			"FRIGATE_CA_CERT_FILE": caFile, "FRIGATE_TIMEOUT_MS": "2500"},
			check: func(t *testing.T, s Settings) {
				c := s.Config()
				if c.BaseURL != "http://nvr.lan:5000/api" || !c.AllowHTTP || c.CAFile != caFile || c.Timeout != 2500*time.Millisecond ||
					c.Header.Get("Authorization") != "Bearer k3y-value-9f2a" {
					t.Errorf("config %+v", c)
				}
				if s.Env.URL != "FRIGATE_API_ROOT" || s.Env.Timeout != "FRIGATE_TIMEOUT_MS" || s.Env.Credential != "FRIGATE_BEARER_TOKEN" {
					t.Errorf("env %+v", s.Env)
				}
			}},
		{name: "older credential name in the environment", app: frigate, env: map[string]string{"FRIGATE_URL": "https://nvr.lan", "FRIGATE_BEARER_TOKEN": "jwt-3c3c"},
			wantErr: []string{"FRIGATE_BEARER_TOKEN: must not hold a secret in the environment"}, notInError: "3c3c"},
		{name: "older name beside the new one", app: frigate, env: map[string]string{
			"FRIGATE_URL": "https://nvr.lan", "FRIGATE_CA_FILE": "/a.pem", "FRIGATE_CA_CERT_FILE": "/b.pem"},
			wantErr: []string{"FRIGATE_CA_CERT_FILE: is an older name of FRIGATE_CA_FILE; set only one"}},
		{name: "older timeout name out of range", app: frigate, env: map[string]string{"FRIGATE_URL": "https://nvr.lan", "FRIGATE_TIMEOUT_MS": "60001"},
			wantErr: []string{"FRIGATE_TIMEOUT_MS"}},
		{name: "older timeout name in seconds", app: ersatztv, env: map[string]string{"ERSATZTV_URL": "https://etv.lan", "ERSATZTV_REQUEST_TIMEOUT_SECONDS": "45"},
			check: func(t *testing.T, s Settings) {
				if c := s.Config(); c.Timeout != 45*time.Second || s.Env.Timeout != "ERSATZTV_REQUEST_TIMEOUT_SECONDS" {
					t.Errorf("timeout %v from %s", c.Timeout, s.Env.Timeout)
				}
			}},
		{name: "older timeout name in seconds beside the new one", app: ersatztv, env: map[string]string{"ERSATZTV_URL": "https://etv.lan", "ERSATZTV_TIMEOUT": "5s", "ERSATZTV_REQUEST_TIMEOUT_SECONDS": "45"},
			wantErr: []string{"ERSATZTV_REQUEST_TIMEOUT_SECONDS: is an older name of ERSATZTV_TIMEOUT; set only one"}},
		{name: "older timeout name in seconds over the maximum", app: ersatztv, env: map[string]string{"ERSATZTV_URL": "https://etv.lan", "ERSATZTV_REQUEST_TIMEOUT_SECONDS": "301"},
			wantErr: []string{"ERSATZTV_REQUEST_TIMEOUT_SECONDS"}},
		{name: "plain http named by the older names", app: frigate, env: map[string]string{"FRIGATE_API_ROOT": "http://nvr.lan:5000/api"},
			wantErr: []string{"FRIGATE_ALLOW_HTTP: must be true when FRIGATE_API_ROOT uses plain http"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := config.New(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			s, configured := tt.app.Load(l)
			err := l.Err()
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; settings %v", s)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				if tt.notInError != "" && strings.Contains(err.Error(), tt.notInError) {
					t.Errorf("error %q echoes a value", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if configured == tt.unset {
				t.Fatalf("configured = %v", configured)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

// Printing Settings, as a log line might, never shows the credential.
func TestSettingsHideTheCredential(t *testing.T) {
	s := Settings{Secret: []byte("s3cret-c0de"), name: "Sonarr", Env: Env{URL: "SONARR_URL"}}
	for _, out := range []string{s.String(), fmtV(s), fmtV(&s)} {
		if strings.Contains(out, "s3cret-c0de") {
			t.Fatalf("printed %q", out)
		}
	}
}

func fmtV(v any) string { return fmt.Sprintf("%v %+v", v, v) }
