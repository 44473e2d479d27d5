// Package catalogtest builds the tools of every tool service in the
// repository the way its binary does — its fx modules, every application
// it can front configured, writes on — without reaching any upstream, for
// tests that must cover every service (the catalog byte budget of every
// endpoint a user is told to add). services/stack_test.go fails when a
// service under services/ is missing here.
package catalogtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/fx"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/prowlarr"
	"github.com/toolgate/toolgate/services/arr/radarr"
	"github.com/toolgate/toolgate/services/arr/sonarr"
	"github.com/toolgate/toolgate/services/demo/counter"
	ersatztv "github.com/toolgate/toolgate/services/ersatztv/tools"
	frigate "github.com/toolgate/toolgate/services/frigate/tools"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
	"github.com/toolgate/toolgate/services/homeassistant/reads"
	"github.com/toolgate/toolgate/services/homeassistant/relay"
	"github.com/toolgate/toolgate/services/homeassistant/yamlguard"
	tuliprox "github.com/toolgate/toolgate/services/tuliprox/tools"
	unraidssh "github.com/toolgate/toolgate/services/unraid-ssh/diag"
	unraid "github.com/toolgate/toolgate/services/unraid/tools"
	web "github.com/toolgate/toolgate/services/web/app"
)

// Service is one tool service as its binary assembles it.
type Service struct {
	Name string
	// Env configures every application the service can front. Nothing is
	// contacted; an empty setting ending in _FILE gets a file with a
	// placeholder secret, one ending in _DIR an empty directory.
	Env map[string]string
	// Files are settings whose file needs real content (a key that must
	// parse): each gets a file with what its function returns.
	Files   map[string]func(t *testing.T) []byte
	Modules []fx.Option
	// Runtime adds the tools a service only learns from its application
	// once running (Home Assistant's relayed MCP tools), from that
	// application's fake.
	Runtime func(t *testing.T) []toolkit.Tool
}

// All lists every tool service in the repository.
func All() []Service {
	local := "http://127.0.0.1:1"
	return []Service{
		{Name: "demo", Modules: []fx.Option{counter.Module}},
		{Name: "web", Env: map[string]string{"WEB_SEARXNG_URL": local, "WEB_SEARXNG_ALLOW_HTTP": "true"}, Modules: []fx.Option{web.Module}},
		{Name: "arr", Env: map[string]string{
			"SONARR_URL": local, "SONARR_ALLOW_HTTP": "true", "SONARR_API_KEY_FILE": "",
			"RADARR_URL": local, "RADARR_ALLOW_HTTP": "true", "RADARR_API_KEY_FILE": "",
			"PROWLARR_URL": local, "PROWLARR_ALLOW_HTTP": "true", "PROWLARR_API_KEY_FILE": "",
		}, Modules: []fx.Option{arrapi.Module, sonarr.Module, radarr.Module, prowlarr.Module}},
		{Name: "frigate", Env: map[string]string{
			"FRIGATE_API_ROOT": local + "/api", "FRIGATE_ALLOW_INSECURE_HTTP": "true", "FRIGATE_TRUSTED_UNAUTHENTICATED": "true",
		}, Modules: []fx.Option{frigate.Module}},
		{Name: "homeassistant", Env: map[string]string{
			"HA_URL": local, "HA_ALLOW_HTTP": "true", "HA_TOKEN_FILE": "", "HA_CONFIG_DIR": "", "HA_YAML_WRITE": "true",
		}, Modules: []fx.Option{hass.Module, reads.Module, yamlguard.Module}, Runtime: relayedTools},
		{Name: "unraid", Env: map[string]string{"UNRAID_URL": local, "UNRAID_ALLOW_HTTP": "true", "UNRAID_API_KEY_FILE": "", "UNRAID_ALLOW_WRITES": "true"},
			Modules: []fx.Option{unraid.Module}},
		{Name: "ersatztv", Env: map[string]string{
			"ERSATZTV_URL": local, "ERSATZTV_ALLOW_HTTP": "true", "ERSATZTV_API_KEY_FILE": "", "ERSATZTV_MODE": "v1", "ERSATZTV_ALLOW_WRITES": "true",
		}, Modules: []fx.Option{ersatztv.Module}},
		{Name: "tuliprox", Env: map[string]string{
			"TULIPROX_URL": local, "TULIPROX_ALLOW_HTTP": "true", "TULIPROX_USERNAME_FILE": "", "TULIPROX_PASSWORD_FILE": "", "TULIPROX_ALLOW_WRITES": "true",
		}, Modules: []fx.Option{tuliprox.Module}},
		{Name: "unraid-ssh", Env: map[string]string{"UNRAID_SSH_HOST": "127.0.0.1:1"},
			Files: sshKeyAndPin(), Modules: []fx.Option{unraidssh.Module}},
	}
}

// relayedTools are the tools the homeassistant relay offers for the demo
// home's MCP server (the fake answers as Home Assistant's /api/mcp).
func relayedTools(t *testing.T) []toolkit.Tool {
	const token = "catalogtest-ha-token-0123456789"
	fake := fakehass.New(fakehass.DemoHome(fakehass.Options{Token: token, ToolNames: fakehass.PrefixedNames}))
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	up, err := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: srv.URL, AllowHTTP: true,
		Header: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatal(err)
	}
	m := relay.NewMCP(up, relay.DefaultPath)
	if _, err := m.Initialize(t.Context()); err != nil {
		t.Fatal(err)
	}
	list, err := m.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := relay.New(relay.Settings{Path: relay.DefaultPath}, hass.New(up), nil).Tools(list)
	return tools
}

// sshKeyAndPin returns the files unraid-ssh needs to start: a fresh
// private key and a known_hosts line pinning a fresh host key.
func sshKeyAndPin() map[string]func(t *testing.T) []byte {
	newKey := func(t *testing.T) (ssh.PublicKey, []byte) {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		block, err := ssh.MarshalPrivateKey(priv, "")
		if err != nil {
			t.Fatal(err)
		}
		sp, err := ssh.NewPublicKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		return sp, pem.EncodeToMemory(block)
	}
	return map[string]func(t *testing.T) []byte{
		"UNRAID_SSH_KEY_FILE": func(t *testing.T) []byte { _, key := newKey(t); return key },
		"UNRAID_SSH_KNOWN_HOSTS_FILE": func(t *testing.T) []byte {
			host, _ := newKey(t)
			return []byte(knownhosts.Line([]string{"127.0.0.1:1"}, host) + "\n")
		},
	}
}

// Tools builds s's tools (with t.Setenv, so not in parallel tests) and the
// instructions it gives clients.
func Tools(t *testing.T, s Service) ([]toolkit.Tool, string) {
	t.Helper()
	for k, v := range s.Env {
		if strings.HasSuffix(k, "_FILE") && v == "" {
			v = filepath.Join(t.TempDir(), strings.ToLower(k))
			if err := os.WriteFile(v, []byte("catalogtest-placeholder-secret-0123456789\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasSuffix(k, "_DIR") && v == "" {
			v = t.TempDir()
		}
		t.Setenv(k, v)
	}
	for k, content := range s.Files {
		path := filepath.Join(t.TempDir(), strings.ToLower(k))
		if err := os.WriteFile(path, content(t), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, path)
	}
	var got struct {
		fx.In
		Tools        []toolkit.Tool       `group:"toolgate.tools"`
		Instructions toolkit.Instructions `optional:"true"`
	}
	app := fx.New(append([]fx.Option{
		fx.NopLogger, fx.Supply(slog.New(slog.DiscardHandler), toolkit.Name(s.Name)), toolkit.LimitsModule, fx.Populate(&got),
	}, s.Modules...)...)
	if err := app.Err(); err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	tools := got.Tools
	if s.Runtime != nil {
		tools = append(tools, s.Runtime(t)...)
	}
	return tools, string(got.Instructions)
}
