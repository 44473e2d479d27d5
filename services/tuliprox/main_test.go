package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
)

func secretFile(t *testing.T, name, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The real binary: every bad setting named without its value, a good start
// signs in (ready), serves the 14 reads, and stops cleanly on SIGTERM; the
// password is in no output.
func TestProcess(t *testing.T) {
	srv := httptest.NewServer(faketuliprox.New(faketuliprox.Options{WebPath: "/tv"}))
	defer srv.Close()
	user := secretFile(t, "user", faketuliprox.DemoAssistant)
	pass := secretFile(t, "pass", faketuliprox.DemoAssistantPassword)
	good := []string{"TULIPROX_URL=" + srv.URL + "/tv", "TULIPROX_ALLOW_HTTP=true", "TULIPROX_USERNAME_FILE=" + user, "TULIPROX_PASSWORD_FILE=" + pass}
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{
			{Name: "no URL", Want: []string{"TULIPROX_URL"}},
			{Name: "password in the environment", Env: []string{"TULIPROX_URL=" + srv.URL, "TULIPROX_ALLOW_HTTP=true", "TULIPROX_USERNAME_FILE=" + user,
				"TULIPROX_PASSWORD=" + faketuliprox.DemoAssistantPassword}, Want: []string{"TULIPROX_PASSWORD"}},
			{Name: "user without password", Env: []string{"TULIPROX_URL=" + srv.URL, "TULIPROX_ALLOW_HTTP=true", "TULIPROX_USERNAME_FILE=" + user},
				Want: []string{"TULIPROX_PASSWORD_FILE"}},
			{Name: "plain http without opt-in", Env: []string{"TULIPROX_URL=" + srv.URL, "TULIPROX_USERNAME_FILE=" + user, "TULIPROX_PASSWORD_FILE=" + pass},
				Want: []string{"TULIPROX_ALLOW_HTTP"}},
			{Name: "writes without the approval key", Env: append([]string{"TULIPROX_ALLOW_WRITES=true"}, good...), Want: []string{"TOOLGATE_APPROVAL_KEY"}},
		},
		Env:     good,
		Ready:   true,
		Secrets: []string{faketuliprox.DemoAssistantPassword},
		Check: func(t *testing.T, p *toolkittest.Process) {
			list := p.Post(t, "tools/list", map[string]any{})
			if n := strings.Count(list, `"name":"tuliprox_`); n != 14 {
				t.Errorf("%d tools listed, want the 14 reads", n)
			}
			got := p.Post(t, "tools/call", map[string]any{"name": "tuliprox_list_playlist_sources", "arguments": map[string]any{}})
			if !strings.Contains(got, `\"name\":\"main\"`) {
				t.Errorf("list_playlist_sources: %s", got)
			}
		},
	})
}
