package toolkittest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
)

// Build compiles the command in pkgDir (e.g. ".") into a temporary binary.
func Build(t testing.TB, pkgDir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "service")
	cmd := exec.Command("go", "build", "-o", bin, pkgDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkgDir, err, out)
	}
	return bin
}

// FreeAddr returns a loopback address with a port that was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// SecretFile writes value to a fresh file (mode 0600) and returns its path.
func SecretFile(t testing.TB, value string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// WaitHealthy runs `bin healthcheck` with env until it succeeds or the
// deadline passes.
func WaitHealthy(t testing.TB, bin string, env []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		cmd := exec.Command(bin, "healthcheck")
		cmd.Env = env
		if cmd.Run() == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s healthcheck never succeeded", filepath.Base(bin))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Process is a service binary running under a test.
type Process struct {
	cmd  *exec.Cmd
	done chan error
	// Output holds what the process wrote to stdout and stderr.
	Output *capture.Buffer
}

// StartHealthy starts bin with env, waits until its healthcheck subcommand
// succeeds, and kills it when the test ends if it is still running.
func StartHealthy(t testing.TB, bin string, env []string) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(bin), done: make(chan error, 1), Output: &capture.Buffer{}}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = env, p.Output, p.Output
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	WaitHealthy(t, bin, env, 10*time.Second)
	return p
}

// Terminate sends SIGTERM and fails the test unless the process exits
// with status 0 within 10 seconds.
func (p *Process) Terminate(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.Output.String())
		}
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatal("did not stop after SIGTERM")
	}
}

// Kill ends the process at once (SIGKILL), as a crash or an OOM kill
// would, and waits for it.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("did not die after SIGKILL")
	}
}
