// Package opatest starts a real OPA server for tests, so the sidecar path is
// exercised against the same Rego the gateway embeds.
package opatest

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
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

// Start runs `opa run --server` on dir at a free loopback port and returns
// its base URL once /health answers 200.
func Start(t testing.TB, dir string) string {
	t.Helper()
	bin := Binary(t)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	ctx, cancel := context.WithCancel(context.Background())
	// opa's output; exec writes it from another goroutine.
	var stderr capture.Buffer
	cmd := exec.CommandContext(ctx, bin, "run", "--server",
		"--addr", addr,
		"--skip-version-check", // no call home: tests stay on loopback
		"--log-level", "error",
		dir)
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start opa: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})

	base := "http://" + addr
	hc := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("opa exited before becoming healthy: %v\n%s", err, stderr.String())
		default:
		}
		if resp, err := hc.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("opa at %s not healthy after 20s\n%s", addr, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
