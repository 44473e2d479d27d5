package toolkittest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// Addr and Token, when known (CheckProcess sets them), are the
	// service's address and the gateway token it accepts.
	Addr, Token string
	answers     capture.Buffer // what Post returned
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

// ProcessSpec is what CheckProcess runs: a service's real binary with bad
// settings, then healthy, then stopped.
type ProcessSpec struct {
	// Dir is the command's package directory (default ".").
	Dir string
	// Bad are starts that must fail with a readable message.
	Bad []BadStart
	// Env configures the healthy start; TOOLGATE_LISTEN and
	// TOOLGATE_SERVICE_TOKEN_FILE are added.
	Env []string
	// Ready also waits for /readyz to answer 200 (the upstream reached
	// with the credentials accepted).
	Ready bool
	// Check runs against the healthy process before SIGTERM: list the
	// tools, call one (Process.Post).
	Check func(t *testing.T, p *Process)
	// Secrets must appear in no output of any start, nor in what Check
	// returns through Process.Post; the service token is always checked.
	Secrets []string
}

// BadStart is a start that must fail: its output names each of Want
// (settings, hints) and none of the secrets.
type BadStart struct {
	Name string
	// Env is the whole environment besides TOOLGATE_LISTEN and, unless
	// NoToken, TOOLGATE_SERVICE_TOKEN_FILE.
	Env     []string
	NoToken bool
	Want    []string
}

// processToken is the gateway token CheckProcess gives the binary.
const processToken = "toolkittest-process-token-0123456789"

// CheckProcess is a service's TestProcess: it builds the binary, checks
// that every bad start fails naming its settings without their values,
// that the configured service becomes healthy (and ready, if asked), runs
// Check, stops it with SIGTERM (exit status 0), and that its healthcheck
// then fails and its log holds no secret.
func CheckProcess(t *testing.T, spec ProcessSpec) {
	t.Helper()
	dir := spec.Dir
	if dir == "" {
		dir = "."
	}
	bin := Build(t, dir)
	token := SecretFile(t, processToken)
	secrets := append([]string{processToken}, spec.Secrets...)
	for i, b := range spec.Bad {
		name := b.Name
		if name == "" {
			name = fmt.Sprintf("bad start %d", i+1)
		}
		t.Run(name, func(t *testing.T) {
			env := append([]string{"TOOLGATE_LISTEN=" + FreeAddr(t)}, b.Env...)
			if !b.NoToken {
				env = append(env, "TOOLGATE_SERVICE_TOKEN_FILE="+token)
			}
			cmd := exec.Command(bin)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("started with %v", b.Env)
			}
			for _, w := range b.Want {
				if !strings.Contains(string(out), w) {
					t.Errorf("start-up error does not mention %s:\n%s", w, out)
				}
			}
			NoLeaks(t, secrets, map[string]string{"the start-up error": string(out)})
		})
	}
	t.Run("healthy, then SIGTERM", func(t *testing.T) {
		addr := FreeAddr(t)
		env := append([]string{"TOOLGATE_LISTEN=" + addr, "TOOLGATE_SERVICE_TOKEN_FILE=" + token}, spec.Env...)
		p := StartHealthy(t, bin, env)
		p.Addr, p.Token = addr, processToken
		if spec.Ready {
			waitReady(t, addr)
		}
		if spec.Check != nil {
			spec.Check(t, p)
		}
		p.Terminate(t)
		// Unset GOMAXPROCS: the service runs on one P (toolkit/procs.go).
		if !strings.Contains(p.Output.String(), `"msg":"scheduler","procs":1,`) {
			t.Errorf("the service did not report running on one P:\n%s", p.Output.String())
		}
		hc := exec.Command(bin, "healthcheck")
		hc.Env = env
		if hc.Run() == nil {
			t.Error("healthcheck succeeded with the service stopped")
		}
		NoLeaks(t, secrets, map[string]string{"the log": p.Output.String(), "the answers": p.answers.String()})
	})
}

func waitReady(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("readyz: HTTP %d %s", res.StatusCode, body)
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("readyz: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Post sends one stateless JSON-RPC request (tools/list, tools/call) to
// the running service with its token and returns the JSON answer.
func (p *Process) Post(t testing.TB, method string, params any) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+p.Addr+"/mcp", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := sseData(raw)
	if res.StatusCode != http.StatusOK || !json.Valid(out) {
		t.Fatalf("%s: HTTP %d: %.300s", method, res.StatusCode, raw)
	}
	_, _ = p.answers.Write(out)
	return string(out)
}

// sseData returns the JSON of a single-event SSE body, or b itself.
func sseData(b []byte) []byte {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			return bytes.TrimSpace(rest)
		}
	}
	return bytes.TrimSpace(b)
}
