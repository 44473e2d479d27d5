package diag

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/unraid-ssh/diag/sshdtest"
)

func syslogOf(lines, width int) string {
	var b strings.Builder
	for i := 1; i <= lines; i++ {
		line := fmt.Sprintf("Dec  3 05:%02d:%02d tower kernel: line %d ", i/60%60, i%60, i)
		b.WriteString(line + strings.Repeat("x", max(0, width-len(line))) + "\n")
	}
	return b.String()
}

// client connects to srv with the given pins; dials counts connections.
func client(t *testing.T, srv *sshdtest.Server, knownHosts string, maxBytes int) (*Client, *atomic.Int32) {
	t.Helper()
	c, err := NewClient(ClientOptions{Addr: srv.Addr, User: srv.User, Key: srv.Key, KnownHostsFile: knownHosts, MaxBytes: maxBytes, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	base := c.dial
	c.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return base(ctx, network, addr)
	}
	return c, &dials
}

// Every diagnostic runs through the real sshd and the shipped script, as
// a tool of the service; arguments outside a tool's schema never reach
// the server.
func TestDiagnosticsThroughTheForcedCommand(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Syslog: syslogOf(500, 60)})
	t.Logf("stand-ins on the test sshd's PATH: %v", srv.StandIns)
	c, dials := client(t, srv, srv.KnownHostsFile, 64<<10)
	svc := toolkittest.Start(t, "unraid-ssh", New(c).Tools())
	var before int32
	mark := func() { before = dials.Load() }
	none := func(t *testing.T, _ map[string]any) {
		if n := dials.Load() - before; n != 0 {
			t.Errorf("a refused call opened %d SSH connections", n)
		}
	}
	svc.RunReads(t, []toolkittest.ReadCase{
		{Tool: "unraidssh_dmesg", Args: map[string]any{"lines": 5}, Has: []string{`"exit_status":0`, `"command":"dmesg | tail -n 5"`}, HasNot: []string{Protocol}},
		{Tool: "unraidssh_smart", Args: map[string]any{"disk": "sdb"}, Has: []string{"Device: /dev/sdb", "PASSED", `smartctl -n standby -a /dev/sdb`}},
		{Name: "smart of an nvme disk", Tool: "unraidssh_smart", Args: map[string]any{"disk": "nvme0n1"}, Has: []string{"Device: /dev/nvme0n1"}},
		{Tool: "unraidssh_sensors", Has: []string{"coretemp-isa-0000"}},
		{Tool: "unraidssh_df", Has: []string{"Filesystem", "Mounted on"}},
		{Tool: "unraidssh_free", Has: []string{"Mem:"}},
		{Tool: "unraidssh_ip_addr", Has: []string{"lo ", "127.0.0.1/8"}},
		{Tool: "unraidssh_docker_stats", Has: []string{"CONTAINER ID", "plex"}},
		{Name: "syslog tail", Tool: "unraidssh_syslog", Args: map[string]any{"lines": 3}, Has: []string{"line 498 ", "line 500 ", `"truncated":false`}, HasNot: []string{"line 497 "}},
		{Name: "syslog window", Tool: "unraidssh_syslog", Args: map[string]any{"lines": 2, "start_line": 10}, Has: []string{"line 10 ", "line 11 "}, HasNot: []string{"line 12 ", "line 9 "}},
		{Name: "a partition is no disk", Tool: "unraidssh_smart", Args: map[string]any{"disk": "sda1"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Name: "a command in the disk", Tool: "unraidssh_smart", Args: map[string]any{"disk": "sda;reboot"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Name: "a path as disk", Tool: "unraidssh_smart", Args: map[string]any{"disk": "../../etc/shadow"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Name: "too many lines", Tool: "unraidssh_dmesg", Args: map[string]any{"lines": 5000}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
		{Name: "no command field", Tool: "unraidssh_df", Args: map[string]any{"command": "rm -rf /"}, Code: toolerr.InvalidArgument, Before: mark, Check: none},
	}, string(srv.Key))
}

// The script itself refuses anything but its diagnostics — whatever a
// client holding the key sends: shell metacharacters, command
// substitution, newlines, extra arguments, other commands, no command.
// Nothing of it runs (the marker file never appears).
func TestScriptRefusesEverythingElse(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Syslog: "one\n"})
	c, _ := client(t, srv, srv.KnownHostsFile, 64<<10)
	marker := filepath.Join(srv.Home, "toolgatepwned")
	t.Cleanup(func() { os.Remove(marker) })
	for _, req := range []string{
		"dmesg; touch toolgatepwned",
		"dmesg && touch toolgatepwned",
		"dmesg | touch toolgatepwned",
		"dmesg $(touch toolgatepwned)",
		"dmesg `touch toolgatepwned`",
		"dmesg\ntouch toolgatepwned",
		"dmesg 10\ntouch toolgatepwned",
		"dmesg > toolgatepwned",
		"touch toolgatepwned",
		"sh -c id",
		"bash",
		"smartctl sda1",
		"smartctl sda sdb",
		"smartctl nvme0",
		"smartctl -a",
		"smartctl ../sda",
		"df -h",
		"free -h",
		"ip link set lo down",
		"docker-stats --all",
		"docker ps",
		"dmesg 0",
		"dmesg 2001",
		"dmesg 12345678901234567890",
		"dmesg -1",
		"syslog 10 x",
		"syslog 1 2 3",
		"SYSLOG",
		"version now",
		"",
		" ",
	} {
		// In parallel: each request is its own SSH connection.
		t.Run(fmt.Sprintf("%q", req), func(t *testing.T) {
			t.Parallel()
			_, err := c.Run(t.Context(), req)
			if err == nil || toolerr.CodeOf(err) != toolerr.UpstreamUnavailable || !strings.Contains(err.Error(), "refused") {
				t.Errorf("%q: %v", req, err)
			}
		})
	}
	t.Cleanup(func() {
		if _, err := os.Stat(marker); err == nil {
			t.Error("a refused request ran a command")
		}
	})
}

// A client that asks for a shell instead of a command gets the script's
// refusal too: the key runs nothing else.
func TestNoShellBehindTheKey(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{})
	signer, err := ssh.ParsePrivateKey(srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ssh.Dial("tcp", srv.Addr, &ssh.ClientConfig{User: srv.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.FixedHostKey(srv.HostKey), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, pty := range []bool{false, true} {
		sess, err := conn.NewSession()
		if err != nil {
			t.Fatal(err)
		}
		out := &capture.Buffer{} // stdout and stderr are copied concurrently
		sess.Stdout, sess.Stderr = out, out
		if pty {
			// restrict forbids a pty; the request fails or is ignored.
			_ = sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{})
		}
		if err := sess.Shell(); err != nil {
			t.Fatal(err)
		}
		err = sess.Wait()
		var exit *ssh.ExitError
		if !errorsAs(err, &exit) || exit.ExitStatus() != 126 || !strings.Contains(out.String(), "refused: no command") {
			t.Errorf("shell (pty %v): %v, %q", pty, err, out.String())
		}
		sess.Close()
	}
}

// The host key is pinned: a changed key and an unknown host are refused
// before the key is even offered, never trusted on first use.
func TestHostKeyIsPinned(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{})
	other := filepath.Join(t.TempDir(), "other_known_hosts")
	line := strings.Replace(strings.TrimSpace(string(mustRead(t, srv.KnownHostsFile))), "[127.0.0.1]", "[tower.lan]", 1)
	if err := os.WriteFile(other, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, want string
	}{
		{"changed host key", srv.KnownHosts(t, sshdtest.OtherKey(t)), "does NOT match"},
		{"unknown host", other, "not pinned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := client(t, srv, tc.file, 64<<10)
			_, err := c.Run(t.Context(), "version")
			if toolerr.CodeOf(err) != toolerr.AuthFailed || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want auth_failed %q", err, tc.want)
			}
			if strings.Contains(srv.Log.String(), "Accepted publickey") {
				t.Fatal("the key was offered to a server whose host key did not match")
			}
		})
	}
	if _, err := NewClient(ClientOptions{Addr: srv.Addr, User: srv.User, Key: srv.Key, KnownHostsFile: writeTemp(t, "# nothing pinned\n")}); err == nil || !strings.Contains(err.Error(), "pins no host key") {
		t.Fatalf("empty known_hosts: %v", err)
	}
}

// A key that is not bound to the forced command is refused by the
// service: without the script's protocol line nothing is used.
func TestUnrestrictedKeyIsRefused(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Unrestricted: true})
	c, _ := client(t, srv, srv.KnownHostsFile, 64<<10)
	_, err := c.Run(t.Context(), "version")
	if toolerr.CodeOf(err) != toolerr.Forbidden || !strings.Contains(err.Error(), "not restricted") {
		t.Fatalf("got %v", err)
	}
}

// Output is bounded: the service keeps at most its cap and says so.
func TestOutputIsBounded(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Syslog: syslogOf(2000, 300)}) // ~600 KB
	c, _ := client(t, srv, srv.KnownHostsFile, 16<<10)
	r, err := c.Run(t.Context(), "syslog 2000")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || len(r.Output) != 16<<10 || !strings.HasPrefix(r.Output, "Dec  3") {
		t.Fatalf("truncated %v, %d bytes", r.Truncated, len(r.Output))
	}
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeTemp(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A successful readiness check is trusted for a while (no SSH login every
// probe); a failure is not cached.
func TestReadinessIsCachedOnlyWhenGood(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{})
	c, dials := client(t, srv, srv.KnownHostsFile, 64<<10)
	now := time.Unix(1_000_000, 0)
	s := New(c)
	s.now = func() time.Time { return now }
	for i, step := range []time.Duration{0, time.Minute, readyFor} {
		now = now.Add(step)
		if err := s.Ready(t.Context()); err != nil {
			t.Fatal(err)
		}
		if want := []int32{1, 1, 2}[i]; dials.Load() != want {
			t.Fatalf("after %v: %d connections, want %d", step, dials.Load(), want)
		}
	}
	bad, badDials := client(t, srv, srv.KnownHosts(t, sshdtest.OtherKey(t)), 64<<10)
	b := New(bad)
	for range 2 {
		if err := b.Ready(t.Context()); err == nil {
			t.Fatal("ready with a wrong host key")
		}
	}
	if badDials.Load() != 2 {
		t.Fatalf("a failure was cached: %d connections", badDials.Load())
	}
}
