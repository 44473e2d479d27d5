package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
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
// ARR_ALLOW_WRITES), and its output never shows the API key.
func TestProcess(t *testing.T) {
	bin := toolkittest.Build(t, ".")
	token := toolkittest.SecretFile(t, "arr-service-token-0123456789abcdef")
	key := toolkittest.SecretFile(t, sonarrKey)

	t.Run("bad settings", func(t *testing.T) {
		tests := []struct {
			env  []string
			want []string
		}{
			{[]string{"SONARR_URL=https://sonarr.lan"}, []string{"SONARR_API_KEY_FILE"}},
			{[]string{"SONARR_URL=http://sonarr.lan", "SONARR_API_KEY_FILE=" + key}, []string{"SONARR_ALLOW_HTTP"}},
			{[]string{"SONARR_API_KEY=" + sonarrKey}, []string{"set SONARR_API_KEY_FILE instead"}},
		}
		for _, tt := range tests {
			cmd := exec.Command(bin)
			cmd.Env = append([]string{"TOOLGATE_LISTEN=" + toolkittest.FreeAddr(t), "TOOLGATE_SERVICE_TOKEN_FILE=" + token}, tt.env...)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("started with %v", tt.env)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%v: output does not mention %s:\n%s", tt.env, w, out)
				}
			}
			if strings.Contains(string(out), sonarrKey) {
				t.Errorf("output shows the key:\n%s", out)
			}
		}
	})

	t.Run("serves sonarr", func(t *testing.T) {
		fake := httptest.NewServer(fakesonarr.New(sonarrKey, nil))
		defer fake.Close()
		addr := toolkittest.FreeAddr(t)
		env := []string{"TOOLGATE_LISTEN=" + addr, "TOOLGATE_SERVICE_TOKEN_FILE=" + token, "TOOLGATE_LOG_LEVEL=debug",
			"SONARR_URL=" + fake.URL, "SONARR_ALLOW_HTTP=true", "SONARR_API_KEY_FILE=" + key}
		p := toolkittest.StartHealthy(t, bin, env)
		res, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("readyz: HTTP %d %s", res.StatusCode, body)
		}
		list := mcpCall(t, addr, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if !strings.Contains(list, `"name":"sonarr_release_search"`) || strings.Contains(list, `"name":"sonarr_release_grab"`) || strings.Contains(list, `"name":"sonarr_episode_search"`) || strings.Contains(list, `"name":"radarr_`) {
			t.Fatalf("tools/list: %.500s", list)
		}
		out := mcpCall(t, addr, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sonarr_release_search","arguments":{"series_id":1,"season":1}}}`)
		if !strings.Contains(out, "FuN") {
			t.Fatalf("release search: %.500s", out)
		}
		p.Terminate(t)
		for what, s := range map[string]string{"result": out, "log": p.Output.String()} {
			for _, secret := range []string{sonarrKey, fakesonarr.ProwlarrKey, fakesonarr.TrackerPasskey} {
				if strings.Contains(s, secret) {
					t.Errorf("%s shows %q", what, secret)
				}
			}
		}
	})
}

// mcpCall sends one stateless JSON-RPC request to the service.
func mcpCall(t *testing.T, addr, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer arr-service-token-0123456789abcdef")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !json.Valid(trimSSE(b)) {
		t.Fatalf("HTTP %d: %.300s", res.StatusCode, b)
	}
	return string(b)
}

// trimSSE returns the JSON of a single-event SSE body, or b itself.
func trimSSE(b []byte) []byte {
	s := string(b)
	if i := strings.Index(s, "data: "); i >= 0 {
		s = s[i+6:]
		if j := strings.Index(s, "\n"); j >= 0 {
			s = s[:j]
		}
	}
	return []byte(strings.TrimSpace(s))
}
