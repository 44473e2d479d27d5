package main

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// TestProcess runs the real binary: a configuration error is one readable
// line naming the setting (never a value); a configured service answers its
// healthcheck, lists its tools and stops cleanly on SIGTERM.
func TestProcess(t *testing.T) {
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{{
			Name:    "missing and misplaced settings",
			Env:     []string{"DEMO_ALLOW_WRITES=true", "TOOLGATE_SERVICE_TOKEN=leaked-value-xyz"},
			NoToken: true,
			Want:    []string{"TOOLGATE_SERVICE_TOKEN_FILE", "TOOLGATE_APPROVAL_KEY_FILE", "set TOOLGATE_SERVICE_TOKEN_FILE instead"},
		}},
		Secrets: []string{"leaked-value-xyz"},
		Check: func(t *testing.T, p *toolkittest.Process) {
			if list := p.Post(t, "tools/list", nil); !strings.Contains(list, `"demo_counter_get"`) || strings.Contains(list, `"demo_counter_add"`) {
				t.Errorf("tools/list without DEMO_ALLOW_WRITES: %.300s", list)
			}
		},
	})
}
