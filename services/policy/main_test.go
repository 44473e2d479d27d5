package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

func TestHealthcheckProbesOPA(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		want   int
	}{
		{"healthy", http.StatusOK, 0},
		{"not ready", http.StatusInternalServerError, 1},
		{"token refused", http.StatusUnauthorized, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/health" {
					t.Errorf("probed %s, want /health", r.URL.Path)
				}
				if got := r.Header.Get("Authorization"); got != "Bearer the-policy-token" {
					t.Errorf("Authorization %q, want the policy token", got)
				}
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			if got := toolkit.ProbeBearer(t.Context(), srv.URL+"/health", []byte("the-policy-token")); got != tc.want {
				t.Fatalf("exit code %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("nothing listening", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL + "/health"
		srv.Close()
		if got := toolkit.ProbeBearer(t.Context(), url, []byte("t")); got != 1 {
			t.Fatalf("exit code %d, want 1", got)
		}
	})
}

func TestPolicyTokenIsReadFromItsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "policy_token")
	if err := os.WriteFile(file, []byte("the-policy-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"from the file, line ending trimmed", map[string]string{EnvToken + "_FILE": file}, "the-policy-token", ""},
		{"none configured", map[string]string{}, "", ""},
		{"missing file", map[string]string{EnvToken + "_FILE": filepath.Join(dir, "absent")}, "", EnvToken + "_FILE"},
		{"token pasted into the environment", map[string]string{EnvToken: "the-policy-token"}, "", EnvToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := loadToken(config.New(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "the-policy-token") {
					t.Fatalf("err = %v, want one naming %s and no value", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestServerRunsOnOnePUnlessTold: the real binary, started as the image
// starts it, says it runs on one P, or on what GOMAXPROCS asks.
func TestServerRunsOnOnePUnlessTold(t *testing.T) {
	bin := toolkittest.Build(t, ".")
	policies, err := filepath.Abs("../../policies")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, `"msg":"scheduler","procs":1,`},
		{[]string{"GOMAXPROCS=3"}, `"msg":"scheduler","procs":3,`},
	} {
		t.Run(strings.Join(append([]string{"env"}, tc.env...), " "), func(t *testing.T) {
			cmd := exec.Command(bin, "run", "--server", "--addr="+toolkittest.FreeAddr(t), "--skip-version-check", policies)
			cmd.Env = tc.env
			out := &capture.Buffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(out.String(), tc.want) {
				if time.Now().After(deadline) {
					t.Fatalf("no %s in the output:\n%s", tc.want, out.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
