package toolkittest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
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
