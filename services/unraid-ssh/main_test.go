package main

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/unraid-ssh/diag/sshdtest"
)

// TestProcess runs the real binary: missing pins and a key in the
// environment are named without values; against a real sshd with the
// forced command it is healthy and ready, lists only the fixed
// diagnostics, and stops on SIGTERM.
func TestProcess(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Syslog: "Dec  3 05:00:00 tower kernel: hello\n"})
	keyFile := toolkittest.SecretFile(t, string(srv.Key))
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{{
			Name: "no host pin, key in the environment, a URL as host",
			Env:  []string{"UNRAID_SSH_HOST=ssh://root@tower", "UNRAID_SSH_KEY=leaked-private-key-xyz"},
			Want: []string{"UNRAID_SSH_KNOWN_HOSTS_FILE", "UNRAID_SSH_KEY_FILE instead", "UNRAID_SSH_HOST"},
		}},
		Env:     []string{"UNRAID_SSH_HOST=" + srv.Addr, "UNRAID_SSH_USER=" + srv.User, "UNRAID_SSH_KEY_FILE=" + keyFile, "UNRAID_SSH_KNOWN_HOSTS_FILE=" + srv.KnownHostsFile},
		Ready:   true,
		Secrets: []string{string(srv.Key), "leaked-private-key-xyz"},
		Check: func(t *testing.T, p *toolkittest.Process) {
			list := p.Post(t, "tools/list", nil)
			for _, want := range []string{"unraidssh_dmesg", "unraidssh_smart", "unraidssh_syslog"} {
				if !strings.Contains(list, want) {
					t.Errorf("tools/list lacks %s", want)
				}
			}
			if strings.Contains(list, `"command"`) {
				t.Error("a tool takes a command")
			}
		},
	})
}
