package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
)

const procKey = "etv-Planted-process-key-91aa02"

// The real binary: every bad setting named without its value, a server it
// cannot place stops the start with what to fix, and a good start serves
// the v1 tools, is ready, and stops cleanly on SIGTERM.
func TestProcess(t *testing.T) {
	store := fakeersatztv.NewDemoStore(gwNow)
	v1 := httptest.NewServer(fakeersatztv.NewV1(store, procKey))
	defer v1.Close()
	streaming := httptest.NewServer(fakeersatztv.NewLegacy(store).Handler(false))
	defer streaming.Close()
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(procKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := []string{"ERSATZTV_URL=" + v1.URL, "ERSATZTV_ALLOW_HTTP=true", "ERSATZTV_API_KEY_FILE=" + keyFile}
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{
			{Name: "no URL", Want: []string{"ERSATZTV_URL"}},
			{Name: "key in the environment", Env: []string{"ERSATZTV_URL=" + v1.URL, "ERSATZTV_ALLOW_HTTP=true", "ERSATZTV_API_KEY=" + procKey},
				Want: []string{"ERSATZTV_API_KEY"}},
			{Name: "plain http without opt-in", Env: []string{"ERSATZTV_URL=" + v1.URL, "ERSATZTV_API_KEY_FILE=" + keyFile}, Want: []string{"ERSATZTV_ALLOW_HTTP"}},
			{Name: "unknown mode", Env: append([]string{"ERSATZTV_MODE=newest"}, good...), Want: []string{"ERSATZTV_MODE: must be auto, v1 or legacy"}},
			{Name: "v1 mode without a key", Env: []string{"ERSATZTV_URL=" + v1.URL, "ERSATZTV_ALLOW_HTTP=true", "ERSATZTV_MODE=v1"},
				Want: []string{"ERSATZTV_API_KEY_FILE: is required with ERSATZTV_MODE=v1"}},
			{Name: "response cap out of range", Env: append([]string{"ERSATZTV_MAX_RESPONSE_BYTES=12"}, good...), Want: []string{"ERSATZTV_MAX_RESPONSE_BYTES"}},
			{Name: "a v1 server and no key", Env: []string{"ERSATZTV_URL=" + v1.URL, "ERSATZTV_ALLOW_HTTP=true"},
				Want: []string{"cannot tell which ErsatzTV API", "ERSATZTV_API_KEY_FILE"}},
			{Name: "upstream ErsatzTV's streaming port", Env: []string{"ERSATZTV_URL=" + streaming.URL, "ERSATZTV_ALLOW_HTTP=true"},
				Want: []string{"UI port", "ERSATZTV_MODE"}},
			{Name: "writes without the approval key", Env: append([]string{"ERSATZTV_ALLOW_WRITES=true"}, good...), Want: []string{"TOOLGATE_APPROVAL_KEY"}},
		},
		Env:     good,
		Ready:   true,
		Secrets: []string{procKey},
		Check: func(t *testing.T, p *toolkittest.Process) {
			list := p.Post(t, "tools/list", map[string]any{})
			if n := strings.Count(list, `"name":"ersatztv_`); n != 25 {
				t.Errorf("%d tools listed, want the 25 reads", n)
			}
			got := p.Post(t, "tools/call", map[string]any{"name": "ersatztv_get_version", "arguments": map[string]any{}})
			if !strings.Contains(got, `\"mode\":\"v1\"`) {
				t.Errorf("get_version: %s", got)
			}
		},
	})
}
