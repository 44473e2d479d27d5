// Package sshdtest runs a real OpenSSH server (Debian's openssh-server) on
// a loopback port for the unraid-ssh tests: its own host key and config,
// the service's key in authorized_keys bound to the shipped forced-command
// script (deploy/unraid/toolgate-diag.sh), stand-ins for the diagnostics
// the test machine cannot give (smartctl, sensors, docker), and a syslog
// file of the test's making.
package sshdtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/toolgate/toolgate/internal/capture"
)

// Options shape the server.
type Options struct {
	// Unrestricted puts the key into authorized_keys without the forced
	// command (a mistake the service must notice).
	Unrestricted bool
	// Syslog is the content of the syslog the script reads.
	Syslog string
}

// Server is a running sshd.
type Server struct {
	Addr string
	User string
	// Key is the client's private key (OpenSSH PEM).
	Key []byte
	// KnownHostsFile pins this server's host key for Addr.
	KnownHostsFile string
	// HostKey is the server's public host key.
	HostKey ssh.PublicKey
	// Home is the login user's home, where the forced command runs.
	Home string
	// StandIns names the diagnostics replaced by stand-ins.
	StandIns []string
	// Log is sshd's own log.
	Log *capture.Buffer

	dir string
}

// Script is the shipped forced-command script.
func Script(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "deploy", "unraid", "toolgate-diag.sh"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Start runs sshd until the test ends. Without /usr/sbin/sshd the test is
// skipped, unless TOOLGATE_REQUIRE_SSHD is set (scripts/test.sh sets it
// after installing openssh-server), when it fails.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		if os.Getenv("TOOLGATE_REQUIRE_SSHD") != "" {
			t.Fatalf("sshd is required but missing: %v", err)
		}
		t.Skip("no sshd (apt-get install openssh-server); scripts/test.sh installs it")
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		// sshd's privilege separation directory (Debian's package creates
		// it at boot through tmpfiles).
		_ = os.MkdirAll("/run/sshd", 0o755)
	}
	dir := t.TempDir()
	s := &Server{User: u.Username, Home: u.HomeDir, Log: &capture.Buffer{}, dir: dir}

	hostPub, hostPEM := newKey(t)
	s.HostKey = hostPub
	write(t, filepath.Join(dir, "host_ed25519"), hostPEM, 0o600)
	clientPub, clientPEM := newKey(t)
	s.Key = clientPEM
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(clientPub)))
	if !o.Unrestricted {
		// As docs/services/unraid.md installs it: run by /bin/sh, since
		// Unraid's flash drive keeps no execute bit.
		line = fmt.Sprintf("command=\"/bin/sh %s\",restrict %s toolgate", Script(t), line)
	}
	write(t, filepath.Join(dir, "authorized_keys"), []byte(line+"\n"), 0o600)

	bin := filepath.Join(dir, "bin")
	s.StandIns = standIns(t, bin)
	syslog := filepath.Join(dir, "syslog")
	write(t, syslog, []byte(o.Syslog), 0o644)

	port := freePort(t)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	path := bin + ":/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin"
	cfg := strings.Join([]string{
		"Port " + strconv.Itoa(port),
		"ListenAddress 127.0.0.1",
		"HostKey " + filepath.Join(dir, "host_ed25519"),
		"PidFile " + filepath.Join(dir, "sshd.pid"),
		"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
		"StrictModes no",
		"UsePAM no",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"PubkeyAuthentication yes",
		"PermitRootLogin prohibit-password",
		"AllowUsers " + u.Username,
		"SetEnv TOOLGATE_DIAG_PATH=" + path + " TOOLGATE_DIAG_SYSLOG=" + syslog,
		"LogLevel VERBOSE",
		"",
	}, "\n")
	cfgFile := filepath.Join(dir, "sshd_config")
	write(t, cfgFile, []byte(cfg), 0o600)

	cmd := exec.Command(sshd, "-D", "-e", "-f", cfgFile)
	cmd.Stdout, cmd.Stderr = s.Log, s.Log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sshd: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", s.Addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on %s: %s", s.Addr, s.Log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.KnownHostsFile = s.KnownHosts(t, hostPub)
	return s
}

// KnownHosts writes a known_hosts file that pins key for the server's
// address, and returns its path.
func (s *Server) KnownHosts(t testing.TB, key ssh.PublicKey) string {
	t.Helper()
	f, err := os.CreateTemp(s.dir, "known_hosts")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, key)); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// OtherKey returns a fresh public key (a host key that is not this one).
func OtherKey(t testing.TB) ssh.PublicKey {
	pub, _ := newKey(t)
	return pub
}

func newKey(t testing.TB) (ssh.PublicKey, []byte) {
	t.Helper()
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

// standIns writes scripts for the diagnostics this machine lacks or whose
// answer depends on it: smartctl and sensors (no disks or sensors in a
// container), docker (the test must not read a shared daemon), and dmesg
// where the kernel log is not readable.
func standIns(t testing.TB, bin string) []string {
	t.Helper()
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts := map[string]string{
		"smartctl": `printf 'smartctl 7.3 (stand-in)\n=== START OF INFORMATION SECTION ===\nDevice: %s\nSMART overall-health self-assessment test result: PASSED\n194 Temperature_Celsius 0x0022 035 045 000 Old_age Always - 35\n' "$4"`,
		"sensors":  `printf 'coretemp-isa-0000\nAdapter: ISA adapter\nPackage id 0:  +41.0 C  (high = +80.0 C, crit = +100.0 C)\n'`,
		"docker":   `[ "$1 $2" = "stats --no-stream" ] || exit 2; printf 'CONTAINER ID   NAME   CPU %%   MEM USAGE / LIMIT   MEM %%   NET I/O   BLOCK I/O   PIDS\n1f0e5d2c9a8b   plex   3.12%%   512MiB / 31.2GiB   1.60%%   1.2GB / 3.4GB   0B / 0B   42\n'`,
	}
	if exec.Command("dmesg").Run() != nil {
		scripts["dmesg"] = `printf '[    1.234567] ata4: SATA link up 6.0 Gbps (stand-in)\n'`
	}
	var names []string
	for name, body := range scripts {
		write(t, filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)
		names = append(names, name)
	}
	return names
}

func write(t testing.TB, path string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
