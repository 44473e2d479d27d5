package main

import (
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/arrapi"
	"github.com/toolgate/toolgate/services/arr/prowlarr"
	"github.com/toolgate/toolgate/services/arr/radarr"
	"github.com/toolgate/toolgate/services/arr/sonarr"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
)

const sonarrKey = "arr-main-SECRET-sonarr-key-0123456789"

// wire builds the service's modules from env (set with t.Setenv) the way
// main does and returns the tools they contribute.
func wire(t *testing.T, env map[string]string) []toolkit.Tool {
	t.Helper()
	for _, app := range []string{"SONARR", "RADARR", "PROWLARR"} {
		for _, k := range []string{"_URL", "_API_KEY_FILE", "_ALLOW_HTTP"} {
			t.Setenv(app+k, "")
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	var got struct {
		fx.In
		Tools []toolkit.Tool `group:"toolgate.tools"`
	}
	app := fx.New(fx.NopLogger, fx.Supply(slog.New(slog.DiscardHandler)),
		arrapi.Module, sonarr.Module, radarr.Module, prowlarr.Module, fx.Populate(&got))
	if err := app.Err(); err != nil {
		t.Fatal(err)
	}
	return got.Tools
}

func appEnv(t *testing.T, apps ...string) map[string]string {
	env := map[string]string{}
	for _, a := range apps {
		env[a+"_URL"] = "http://127.0.0.1:1"
		env[a+"_ALLOW_HTTP"] = "true"
		env[a+"_API_KEY_FILE"] = toolkittest.SecretFile(t, strings.ToLower(a)+"-key-0123456789abcdef")
	}
	return env
}

// An unconfigured application contributes no tools.
func TestOnlyConfiguredAppsHaveTools(t *testing.T) {
	tests := []struct {
		name string
		apps []string
		want map[string]bool // prefix → present
	}{
		{"none", nil, map[string]bool{"sonarr_": false, "radarr_": false, "prowlarr_": false}},
		{"sonarr only", []string{"SONARR"}, map[string]bool{"sonarr_": true, "radarr_": false, "prowlarr_": false}},
		{"all", []string{"SONARR", "RADARR", "PROWLARR"}, map[string]bool{"sonarr_": true, "radarr_": true, "prowlarr_": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := wire(t, appEnv(t, tt.apps...))
			for prefix, want := range tt.want {
				has := false
				for _, tl := range tools {
					has = has || strings.HasPrefix(tl.Name, prefix)
				}
				if has != want {
					t.Errorf("%s tools present = %v, want %v", prefix, has, want)
				}
			}
		})
	}
}

// The documented tool table matches tools/list with every app configured
// and writes allowed.
func TestDocTable(t *testing.T) {
	svc := toolkittest.Start(t, "arr", wire(t, appEnv(t, "SONARR", "RADARR", "PROWLARR")))
	svc.CheckDocTable(t, "../../docs/services/arr.md")
}

// TestProcess runs the real binary against a fake Sonarr: configuration
// errors name the setting and never a value; a configured service becomes
// ready, serves the Sonarr read tools only (no writes without
// ARR_ALLOW_WRITES), and neither its answers nor its output show the API
// key or the credentials planted in the fake.
func TestProcess(t *testing.T) {
	key := toolkittest.SecretFile(t, sonarrKey)
	fake := httptest.NewServer(fakesonarr.New(sonarrKey, nil))
	defer fake.Close()
	toolkittest.CheckProcess(t, toolkittest.ProcessSpec{
		Bad: []toolkittest.BadStart{
			{Env: []string{"SONARR_URL=https://sonarr.lan"}, Want: []string{"SONARR_API_KEY_FILE"}},
			{Env: []string{"SONARR_URL=http://sonarr.lan", "SONARR_API_KEY_FILE=" + key}, Want: []string{"SONARR_ALLOW_HTTP"}},
			{Env: []string{"SONARR_API_KEY=" + sonarrKey}, Want: []string{"set SONARR_API_KEY_FILE instead"}},
		},
		Env:     []string{"TOOLGATE_LOG_LEVEL=debug", "SONARR_URL=" + fake.URL, "SONARR_ALLOW_HTTP=true", "SONARR_API_KEY_FILE=" + key},
		Ready:   true,
		Secrets: []string{sonarrKey, fakesonarr.ProwlarrKey, fakesonarr.TrackerPasskey},
		Check: func(t *testing.T, p *toolkittest.Process) {
			list := p.Post(t, "tools/list", nil)
			if !strings.Contains(list, `"name":"sonarr_release_search"`) || strings.Contains(list, `"name":"sonarr_release_grab"`) || strings.Contains(list, `"name":"sonarr_episode_search"`) || strings.Contains(list, `"name":"radarr_`) {
				t.Fatalf("tools/list: %.500s", list)
			}
			out := p.Post(t, "tools/call", map[string]any{"name": "sonarr_release_search", "arguments": map[string]any{"series_id": 1, "season": 1}})
			if !strings.Contains(out, "FuN") {
				t.Fatalf("release search: %.500s", out)
			}
		},
	})
}

// `arr readycheck` (what install.sh and doctor run in the container) prints
// one line: "ready", or what is wrong and which setting to fix, naming no
// value but a host name.
func TestReadycheckNamesTheProblem(t *testing.T) {
	bin := toolkittest.Build(t, ".")
	key := toolkittest.SecretFile(t, sonarrKey)
	wrongKey := toolkittest.SecretFile(t, "arr-main-SECRET-wrong-key-9876543210")
	token := toolkittest.SecretFile(t, "arr-readycheck-token-0123456789")
	fake := httptest.NewServer(fakesonarr.New(sonarrKey, nil))
	defer fake.Close()
	cases := []struct {
		name   string
		env    []string
		ready  bool
		want   []string
		absent []string
	}{
		{name: "reachable, key accepted", env: []string{"SONARR_URL=" + fake.URL, "SONARR_API_KEY_FILE=" + key}, ready: true, want: []string{"ready"}},
		{name: "unresolvable host", env: []string{"SONARR_URL=http://sonarr.invalid:8989/base", "SONARR_API_KEY_FILE=" + key},
			want: []string{"Sonarr host sonarr.invalid cannot be resolved — check SONARR_URL"}, absent: []string{"8989", "/base"}},
		{name: "key rejected", env: []string{"SONARR_URL=" + fake.URL, "SONARR_API_KEY_FILE=" + wrongKey},
			want: []string{"Sonarr rejected the API key", "SONARR_API_KEY_FILE"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := append([]string{"TOOLGATE_LISTEN=" + toolkittest.FreeAddr(t), "TOOLGATE_SERVICE_TOKEN_FILE=" + token, "SONARR_ALLOW_HTTP=true"}, tc.env...)
			toolkittest.StartHealthy(t, bin, env)
			cmd := exec.Command(bin, "readycheck")
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.ready {
				t.Fatalf("readycheck: err %v, want ready %v:\n%s", err, tc.ready, out)
			}
			line := string(out)
			if strings.Count(line, "\n") != 1 {
				t.Errorf("readycheck printed %q, want one line", line)
			}
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("readycheck printed %q, lacking %q", line, w)
				}
			}
			for _, a := range append(tc.absent, sonarrKey, "SECRET") {
				if strings.Contains(line, a) {
					t.Errorf("readycheck printed %q, which shows %q", line, a)
				}
			}
		})
	}
}
