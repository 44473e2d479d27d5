package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
)

const haToken = "ha-process-token-PLANTED-0123456789"

// TestProcess runs the real binary: bad settings are named without their
// values; a configured service is ready against a fake Home Assistant,
// lists its tools and stops cleanly on SIGTERM.
func TestProcess(t *testing.T) {
	fake := fakehass.New(fakehass.DemoHome(fakehass.Options{Token: haToken}))
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	tokenFile := toolkittest.SecretFile(t, haToken)
	configDir := t.TempDir()
	if err := fakehass.SeedConfig(configDir); err != nil {
		t.Fatal(err)
	}
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{
			{Name: "nothing set", Want: []string{"HA_URL", "HA_TOKEN_FILE"}},
			{Name: "token in the environment", Env: []string{"HA_URL=https://ha.lan:8123", "HA_TOKEN=" + haToken}, Want: []string{"HA_TOKEN_FILE"}},
			{Name: "plain http without opt-in", Env: []string{"HA_URL=" + srv.URL, "HA_TOKEN_FILE=" + tokenFile}, Want: []string{"HA_ALLOW_HTTP"}},
			{Name: "relay path and refresh", Env: []string{"HA_URL=https://ha.lan", "HA_TOKEN_FILE=" + tokenFile, "HA_MCP_PATH=../x", "HA_MCP_REFRESH=1s"},
				Want: []string{"HA_MCP_PATH", "HA_MCP_REFRESH"}},
			{Name: "notify service not a name", Env: []string{"HA_URL=https://ha.lan", "HA_TOKEN_FILE=" + tokenFile, "HA_NOTIFY_SERVICE=../lock/unlock"},
				Want: []string{"HA_NOTIFY_SERVICE"}},
			{Name: "YAML settings", Env: []string{"HA_URL=https://ha.lan", "HA_TOKEN_FILE=" + tokenFile, "HA_CONFIG_DIR=" + configDir + "/missing", "HA_YAML_WRITE=perhaps", "HA_YAML_BACKUP_DIR=backups"},
				Want: []string{"HA_CONFIG_DIR", "HA_YAML_WRITE", "HA_YAML_BACKUP_DIR"}},
		},
		Env:     []string{"HA_URL=" + srv.URL, "HA_ALLOW_HTTP=true", "HA_TOKEN_FILE=" + tokenFile, "HA_CONFIG_DIR=" + configDir, "HA_YAML_WRITE=true"},
		Ready:   true,
		Secrets: []string{haToken},
		Check: func(t *testing.T, p *toolkittest.Process) {
			// The relay lists Home Assistant's MCP tools right after start.
			deadline := time.Now().Add(10 * time.Second)
			list := p.Post(t, "tools/list", nil)
			for !strings.Contains(list, `"ha_GetLiveContext"`) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				list = p.Post(t, "tools/list", nil)
			}
			for _, want := range []string{`"ha_entity_list"`, `"ha_config_check"`, `"ha_GetLiveContext"`, `"ha_yaml_list"`, `"ha_yaml_find_source"`} {
				if !strings.Contains(list, want) {
					t.Errorf("tools/list lacks %s: %.300s", want, list)
				}
			}
			if strings.Contains(list, `"ha_HassTurnOn"`) || strings.Contains(list, `"ha_yaml_update"`) {
				t.Error("a write is offered without HOMEASSISTANT_ALLOW_WRITES")
			}
			got := p.Post(t, "tools/call", map[string]any{"name": "ha_entity_get", "arguments": map[string]any{"entity_id": "lock.front_door"}})
			if !strings.Contains(got, `locked`) {
				t.Errorf("ha_entity_get: %.300s", got)
			}
		},
	})
}
