package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/unraid/fakeunraid"
)

const demoKey = "demo-viewer-key-Planted-0451"

// TestProcess runs the real binary: bad settings are named without their
// values; against the fake it is healthy and ready (the key works), lists
// only reads without UNRAID_ALLOW_WRITES, and stops on SIGTERM.
func TestProcess(t *testing.T) {
	fake := httptest.NewServer(fakeunraid.New(fakeunraid.Options{ViewerKey: demoKey}, fakeunraid.DemoState(time.Now())).Handler())
	t.Cleanup(fake.Close)
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{{
			Name: "plain http, key in the environment, bad budget",
			Env:  []string{"UNRAID_URL=http://tower.lan", "UNRAID_API_KEY=leaked-key-value-xyz", "UNRAID_MAX_REQUESTS_PER_10S=500"},
			Want: []string{"UNRAID_ALLOW_HTTP", "UNRAID_API_KEY_FILE"},
		}, {
			Name: "budget over Unraid's throttle",
			Env:  []string{"UNRAID_URL=https://tower.lan", "UNRAID_API_KEY_FILE=" + toolkittest.SecretFile(t, demoKey), "UNRAID_MAX_REQUESTS_PER_10S=500"},
			Want: []string{"UNRAID_MAX_REQUESTS_PER_10S"},
		}},
		Env:     []string{"UNRAID_URL=" + fake.URL, "UNRAID_ALLOW_HTTP=true", "UNRAID_API_KEY_FILE=" + toolkittest.SecretFile(t, demoKey)},
		Ready:   true,
		Secrets: []string{demoKey, "leaked-key-value-xyz"},
		Check: func(t *testing.T, p *toolkittest.Process) {
			list := p.Post(t, "tools/list", nil)
			if !strings.Contains(list, `"unraid_array_status"`) || strings.Contains(list, `"unraid_container_control"`) {
				t.Errorf("tools/list without UNRAID_ALLOW_WRITES: %.300s", list)
			}
		},
	})
}
