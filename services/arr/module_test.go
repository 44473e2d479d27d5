package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/prowlarr"
	"github.com/toolgate/toolgate/services/arr/radarr"
	"github.com/toolgate/toolgate/services/arr/sonarr"
)

// TestAppModules checks each application's fx module on its own against
// its <APP>_* settings: tools and the API key for the redactor only when
// configured, refusals of a plain http:// URL without opt-in, of a key
// file without URL and of a key in the environment, and no start-up error
// that quotes the key.
func TestAppModules(t *testing.T) {
	const apiKey = "arr-module-SECRET-api-key-5e2d"
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(apiKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	apps := []struct {
		prefix  string // settings prefix
		host    string // host:port of the configured URLs
		module  fx.Option
		tools   int // tools when configured (the writes included; the toolkit drops them later)
		secrets int
	}{
		{"PROWLARR", "prowlarr.lan:9696", prowlarr.Module, 6, 1},
		{"RADARR", "radarr.lan:7878", radarr.Module, 13, 1},
		{"SONARR", "sonarr.lan:8989", sonarr.Module, 13, 1},
	}
	for _, app := range apps {
		p := app.prefix + "_"
		cases := []struct {
			name  string
			env   map[string]string
			tools int
			fails bool
		}{
			{"not configured", map[string]string{}, 0, false},
			{"configured", map[string]string{p + "URL": "https://" + app.host, p + "API_KEY_FILE": keyFile}, app.tools, false},
			{"plain http needs opt-in", map[string]string{p + "URL": "http://" + app.host, p + "API_KEY_FILE": keyFile}, 0, true},
			{"plain http with opt-in", map[string]string{p + "URL": "http://" + app.host, p + "API_KEY_FILE": keyFile, p + "ALLOW_HTTP": "true"}, app.tools, false},
			{"key without URL", map[string]string{p + "API_KEY_FILE": keyFile}, 0, true},
			{"key in the environment", map[string]string{p + "URL": "https://" + app.host, p + "API_KEY": apiKey}, 0, true},
		}
		for _, tc := range cases {
			t.Run(strings.ToLower(app.prefix)+"/"+tc.name, func(t *testing.T) {
				for _, k := range []string{"URL", "API_KEY_FILE", "API_KEY", "ALLOW_HTTP"} {
					t.Setenv(p+k, tc.env[p+k])
				}
				var got struct {
					fx.In
					Tools   []toolkit.Tool   `group:"toolgate.tools"`
					Secrets []toolkit.Secret `group:"toolgate.secrets"`
				}
				fxApp := fx.New(fx.NopLogger, fx.Supply(slog.New(slog.DiscardHandler)), app.module, fx.Populate(&got))
				if err := fxApp.Err(); (err != nil) != tc.fails {
					t.Fatalf("err = %v", err)
				} else if err != nil {
					if strings.Contains(err.Error(), apiKey) {
						t.Fatal("the start-up error quotes the API key")
					}
					return
				}
				var nonEmpty int
				for _, s := range got.Secrets {
					if len(s) > 0 {
						nonEmpty++
					}
				}
				wantSecrets := 0
				if tc.tools > 0 {
					wantSecrets = app.secrets
				}
				if len(got.Tools) != tc.tools || nonEmpty != wantSecrets {
					t.Fatalf("tools %d, secrets %d; want %d, %d", len(got.Tools), nonEmpty, tc.tools, wantSecrets)
				}
			})
		}
	}
}
