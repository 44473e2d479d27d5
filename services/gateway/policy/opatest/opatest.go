// Package opatest starts a real OPA server for tests, the way compose starts
// the policy sidecar: the command line is read from compose/toolgate.yaml,
// so the flags the tests exercise (token authentication, the system
// authorization policy) are the ones deployed and cannot drift from them.
package opatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/policies"
)

// Compose's policy container serves these; Start moves them.
const (
	composeAddrFlag    = "--addr="
	composePoliciesDir = "/policies"
)

// Binary finds opa in PATH or at the go-install location.
func Binary(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("opa"); err == nil {
		return p
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, "go", "bin", "opa")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("opa binary not found (PATH, ~/go/bin/opa); it is required in CI")
	}
	t.Skip("opa binary not found; install it to run the sidecar comparison")
	return ""
}

// ComposeArgs returns the policy container's command from
// compose/toolgate.yaml (the arguments after the binary).
func ComposeArgs(t testing.TB) []string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "compose", "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatalf("compose/toolgate.yaml: %v", err)
	}
	args := file.Services["policy"].Command
	if len(args) == 0 {
		t.Fatal("compose/toolgate.yaml: the policy service has no command")
	}
	return args
}

// Server is a running sidecar.
type Server struct {
	URL string
	// Token is the gateway's policy token the sidecar accepts.
	Token []byte
	// Log is everything opa wrote to stdout and stderr (docker logs).
	Log  *capture.Buffer
	stop func()
}

// Start runs opa with the compose command line on dir, at a free loopback
// port and with a fresh policy token, and returns once /health answers 200.
func Start(t testing.TB, dir string) Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	return start(t, dir, addr, []byte(hex.EncodeToString(raw)))
}

// Restart stops s and starts opa on dir at s's address with s's token, as
// a restart of the compose container with changed files would.
func Restart(t testing.TB, s Server, dir string) Server {
	t.Helper()
	s.Stop()
	return start(t, dir, strings.TrimPrefix(s.URL, "http://"), s.Token)
}

// Stop ends the sidecar and waits until it has exited; the test's cleanup
// would, at its end.
func (s Server) Stop() { s.stop() }

func start(t testing.TB, dir, addr string, token []byte) Server {
	t.Helper()
	bin := Binary(t)

	args := ComposeArgs(t)
	movedAddr, movedDir := false, false
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, composeAddrFlag):
			args[i], movedAddr = composeAddrFlag+addr, true
		case a == composePoliciesDir:
			args[i], movedDir = dir, true
		}
	}
	if !movedAddr || !movedDir {
		t.Fatalf("the policy command in compose/toolgate.yaml no longer has %sHOST:PORT and %s; update opatest: %q", composeAddrFlag, composePoliciesDir, args)
	}

	ctx, cancel := context.WithCancel(context.Background())
	// opa's output; exec writes it from another goroutine.
	out := &capture.Buffer{}
	cmd := exec.CommandContext(ctx, bin, args...)
	// What services/policy does with TOOLGATE_POLICY_TOKEN_FILE in the image.
	cmd.Env = append(os.Environ(), policies.SidecarTokenHashEnv+"="+policies.SidecarTokenHash(token))
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start opa: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := sync.OnceFunc(func() {
		cancel()
		<-exited
	})
	t.Cleanup(stop)

	base := "http://" + addr
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("opa exited before becoming healthy: %v\n%s", err, out.String())
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/health", nil)
		req.Header.Set("Authorization", "Bearer "+string(token))
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return Server{URL: base, Token: token, Log: out, stop: stop}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("opa at %s not healthy after 20s\n%s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// repoRoot is the directory holding go.mod, above the test's directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("opatest: no go.mod above the working directory")
		}
		dir = parent
	}
}
