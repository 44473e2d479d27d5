package arrapi

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// TestModuleWiring proves the pattern of Example_module works for two
// apps at once: private Clients do not clash, an unconfigured app adds no
// tool, no secret and no check, and Module combines the checks.
func TestModuleWiring(t *testing.T) {
	kf := keyFile(t, testKey)
	env := map[string]string{"SONARR_URL": "http://127.0.0.1:1", "SONARR_ALLOW_HTTP": "true", "SONARR_API_KEY_FILE": kf}
	app := func(name string) fx.Option {
		return fx.Module(name,
			fx.Provide(fx.Private, func(log *slog.Logger) (*Client, error) {
				return fromLoader(loader(env), name, "/api/v3", log)
			}),
			toolkit.ProvideTools(func(c *Client) []toolkit.Tool {
				if c == nil {
					return nil
				}
				return []toolkit.Tool{{Name: c.App() + "_x"}}
			}),
			toolkit.ProvideSecret((*Client).Secret),
			ProvideCheck((*Client).Check),
		)
	}
	var got struct {
		fx.In
		Tools   []toolkit.Tool   `group:"toolgate.tools"`
		Secrets []toolkit.Secret `group:"toolgate.secrets"`
		Ready   toolkit.ReadyFunc
	}
	a := fx.New(fx.NopLogger, fx.Supply(slog.New(slog.DiscardHandler)), Module, app("sonarr"), app("radarr"), fx.Populate(&got))
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "sonarr_x" {
		t.Fatalf("tools: %+v", got.Tools)
	}
	n := 0
	for _, s := range got.Secrets {
		if len(s) > 0 {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d secrets, want 1", n)
	}
	// Nothing listens on port 1: the combined check names sonarr only.
	err := got.Ready(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "sonarr: ") || strings.Contains(err.Error(), "radarr") {
		t.Fatalf("ready: %v", err)
	}
}
