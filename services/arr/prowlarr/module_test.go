package prowlarr_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/prowlarr"
)

func TestModule(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(apiKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		env     map[string]string
		tools   int
		secrets int
		fails   bool
	}{
		{"not configured", map[string]string{}, 0, 0, false},
		{"configured", map[string]string{"PROWLARR_URL": "https://prowlarr.lan:9696", "PROWLARR_API_KEY_FILE": keyFile}, 6, 1, false},
		{"plain http needs opt-in", map[string]string{"PROWLARR_URL": "http://prowlarr:9696", "PROWLARR_API_KEY_FILE": keyFile}, 0, 0, true},
		{"plain http with opt-in", map[string]string{"PROWLARR_URL": "http://prowlarr:9696", "PROWLARR_API_KEY_FILE": keyFile, "PROWLARR_ALLOW_HTTP": "true"}, 6, 1, false},
		{"key without URL", map[string]string{"PROWLARR_API_KEY_FILE": keyFile}, 0, 0, true},
		{"key in the environment", map[string]string{"PROWLARR_URL": "https://prowlarr.lan", "PROWLARR_API_KEY": apiKey}, 0, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"PROWLARR_URL", "PROWLARR_API_KEY_FILE", "PROWLARR_API_KEY", "PROWLARR_ALLOW_HTTP"} {
				t.Setenv(k, tc.env[k])
			}
			var got struct {
				fx.In
				Tools   []toolkit.Tool   `group:"toolgate.tools"`
				Secrets []toolkit.Secret `group:"toolgate.secrets"`
			}
			app := fx.New(fx.NopLogger, fx.Supply(slog.New(slog.DiscardHandler)), prowlarr.Module, fx.Populate(&got))
			if err := app.Err(); (err != nil) != tc.fails {
				t.Fatalf("err = %v", err)
			} else if err != nil {
				if s := err.Error(); contains(s, apiKey) {
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
			if len(got.Tools) != tc.tools || nonEmpty != tc.secrets {
				t.Fatalf("tools %d, secrets %d", len(got.Tools), nonEmpty)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
