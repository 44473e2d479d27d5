package services_test

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/arr/prowlarr/fakeprowlarr"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/unraid-ssh/diag/sshdtest"
	"github.com/toolgate/toolgate/services/unraid/fakeunraid"
	"github.com/toolgate/toolgate/services/web/fakesearx"
)

// upstream is a template's fake application and what a user would put
// into the secret files for it.
type upstream struct {
	// set replaces settings with the fake's address (uncommenting the
	// template's line if needed: the stack's default address, such as
	// web's http://searxng:8080, is where the fake stands in).
	set map[string]string
	// ca, when the fake speaks TLS with its own certificate: the docs'
	// private-CA setting (<APP>_CA_FILE, commented in the template) is
	// uncommented and its file holds this PEM.
	ca []byte
	// secrets are the contents of the files the template's _FILE
	// settings name, by setting.
	secrets map[string]string
	// env is what the container gets besides the template (the gateway's
	// compose environment).
	env []string
}

// templateCase is one template, the service that reads it (its compose
// service and its command under services/) and its fake upstream.
type templateCase struct {
	template, service string
	fake              func(t *testing.T) upstream
}

// templateCases are every secrets.example template with its fake; the
// test fails for a template missing here.
var templateCases = []templateCase{
	{"arr.env.example", "arr", func(t *testing.T) upstream {
		const key = "templates-arr-key-0123456789abcdef"
		return upstream{set: map[string]string{
			"SONARR_URL":   serve(t, fakesonarr.NewDemo(key), false).URL,
			"RADARR_URL":   serve(t, fakeradarr.NewDemo(key), false).URL,
			"PROWLARR_URL": serve(t, fakeprowlarr.NewDemo(key), false).URL,
		}, secrets: map[string]string{"SONARR_API_KEY_FILE": key, "RADARR_API_KEY_FILE": key, "PROWLARR_API_KEY_FILE": key}}
	}},
	{"ersatztv.env.example", "ersatztv", func(t *testing.T) upstream {
		srv := serve(t, fakeersatztv.NewV1(fakeersatztv.NewDemoStore(time.Now()), fakeersatztv.DemoAPIKey), false)
		return upstream{set: map[string]string{"ERSATZTV_URL": srv.URL},
			secrets: map[string]string{"ERSATZTV_API_KEY_FILE": fakeersatztv.DemoAPIKey}}
	}},
	{"frigate.env.example", "frigate", func(t *testing.T) upstream {
		srv := serve(t, fakefrigate.Demo(), true)
		return upstream{set: map[string]string{"FRIGATE_URL": srv.URL}, ca: certPEM(srv),
			secrets: map[string]string{"FRIGATE_PASSWORD_FILE": fakefrigate.DemoPassword}}
	}},
	{"gateway.env.example", "gateway", func(t *testing.T) upstream {
		// The compose environment the gateway runs with; its settings
		// file only adds notifications and the approval page.
		_, line, err := auth.NewToken("templates", []string{"users"}, auth.UserNone)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		file := func(name, content string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		return upstream{env: []string{
			"TOOLGATE_ADMIN_LISTEN=" + toolkittest.FreeAddr(t),
			"TOOLGATE_CLIENT_TOKENS_FILE=" + file("client_tokens", line),
			"TOOLGATE_ADMIN_TOKEN_FILE=" + file("admin_token", "templates-admin-token-0123456789abcdef"),
			"TOOLGATE_APPROVAL_KEY_FILE=" + file("approval_key", "templates-approval-key-0123456789abcdef012345"),
			"TOOLGATE_SERVICES=demo=http://127.0.0.1:1/mcp",
			"TOOLGATE_SERVICE_TOKEN_DEMO_FILE=" + file("service_token_demo", "templates-service-token-0123456789"),
			"TOOLGATE_TICKETS_FILE=" + filepath.Join(dir, "tickets.db"),
		}}
	}},
	{"homeassistant.env.example", "homeassistant", func(t *testing.T) upstream {
		const token = "templates-ha-token-0123456789abcdef"
		srv := serve(t, fakehass.New(fakehass.DemoHome(fakehass.Options{Token: token})).Handler(), true)
		return upstream{set: map[string]string{"HA_URL": srv.URL}, ca: certPEM(srv),
			secrets: map[string]string{"HA_TOKEN_FILE": token}}
	}},
	{"tuliprox.env.example", "tuliprox", func(t *testing.T) upstream {
		srv := serve(t, faketuliprox.New(faketuliprox.Options{}), false)
		return upstream{set: map[string]string{"TULIPROX_URL": srv.URL}, secrets: map[string]string{
			"TULIPROX_USERNAME_FILE": faketuliprox.DemoAssistant, "TULIPROX_PASSWORD_FILE": faketuliprox.DemoAssistantPassword}}
	}},
	{"unraid.env.example", "unraid", func(t *testing.T) upstream {
		const key = "templates-unraid-viewer-key-0123456789"
		srv := serve(t, fakeunraid.New(fakeunraid.Options{ViewerKey: key}, fakeunraid.DemoState(time.Now())).Handler(), true)
		return upstream{set: map[string]string{"UNRAID_URL": srv.URL}, ca: certPEM(srv),
			secrets: map[string]string{"UNRAID_API_KEY_FILE": key}}
	}},
	{"unraid-ssh.env.example", "unraid-ssh", func(t *testing.T) upstream {
		srv := sshdtest.Start(t, sshdtest.Options{})
		pins, err := os.ReadFile(srv.KnownHostsFile)
		if err != nil {
			t.Fatal(err)
		}
		// The fake sshd runs as the test's user, not root.
		return upstream{set: map[string]string{"UNRAID_SSH_HOST": srv.Addr, "UNRAID_SSH_USER": srv.User},
			secrets: map[string]string{"UNRAID_SSH_KEY_FILE": string(srv.Key), "UNRAID_SSH_KNOWN_HOSTS_FILE": string(pins)}}
	}},
	{"web.env.example", "web", func(t *testing.T) upstream {
		return upstream{set: map[string]string{"WEB_SEARXNG_URL": serve(t, fakesearx.NewDemo(), false).URL}}
	}},
}

// TestTemplatesFollowedLiterally copies every secrets.example template as
// a user does and fills it in only as the docs say: the application's
// address (here its fake's), and each file a _FILE setting names, created
// where compose mounts it from — a path docs/install.md or
// docs/services/*.md tells the user to create. The service's real binary
// must then become ready against the fake. And every setting a template
// names, commented or not, must be one the service reads: set to a value
// nothing accepts, the service must refuse to start, not get ready, or
// offer other tools (install.sh's own settings excepted).
func TestTemplatesFollowedLiterally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service binary")
	}
	docs := read(t, "docs/install.md")
	pages, _ := filepath.Glob("../docs/services/*.md")
	for _, p := range pages {
		docs += read(t, strings.TrimPrefix(p, "../"))
	}
	services := composeServices(t)
	install := read(t, "install.sh")

	files, _ := filepath.Glob("../secrets.example/*.example")
	for _, f := range files {
		if !slices.ContainsFunc(templateCases, func(c templateCase) bool { return c.template == filepath.Base(f) }) {
			t.Errorf("%s has no case in templateCases", filepath.Base(f))
		}
	}
	for _, tc := range templateCases {
		t.Run(tc.template, func(t *testing.T) {
			t.Parallel()
			tm := parseTemplate(read(t, "secrets.example/"+tc.template))
			up := tc.fake(t)
			f := filler{t: t, tm: tm, up: up, mounts: services[tc.service].mounts, dir: t.TempDir()}
			f.checkPaths(docs)
			// As the user fills it in: what it sets, the fake's address,
			// and for a fake with its own certificate the CA setting.
			chosen := map[string]bool{}
			for _, s := range tm.settings {
				chosen[s.name] = !s.commented || (up.ca != nil && strings.HasSuffix(s.name, "_CA_FILE"))
			}
			for k := range up.set {
				if !slices.ContainsFunc(tm.settings, func(s setting) bool { return s.name == k }) {
					t.Errorf("the template does not name %s, the fake's address", k)
				}
			}
			env := f.env(chosen, "")
			if t.Failed() {
				return
			}
			bin := toolkittest.Build(t, "./"+tc.service)
			base := append(slices.Clone(services[tc.service].defaults), up.env...)
			// The compose defaults may name the fake's address too.
			for i, kv := range base {
				k, _, _ := strings.Cut(kv, "=")
				if v, ok := up.set[k]; ok {
					base[i] = k + "=" + v
				}
			}
			base = append(base, "TOOLGATE_LISTEN="+toolkittest.FreeAddr(t))
			// Tool services list their tools with the gateway's token.
			tools := tc.service != "gateway"
			if tools {
				base = append(base, "TOOLGATE_SERVICE_TOKEN_FILE="+toolkittest.SecretFile(t, serviceToken))
			}
			want := start(t, bin, append(slices.Clone(base), env...), tools, 30*time.Second)
			if want.err != nil {
				t.Fatalf("following %s literally: %v\n%s", tc.template, want.err, want.output)
			}
			for _, s := range tm.settings {
				if strings.Contains(install, s.name) {
					continue // install.sh reads it (HA_CONFIG_HOST_DIR)
				}
				// A commented option is tried with its block (RADARR_URL with
				// RADARR_API_KEY_FILE and RADARR_ALLOW_HTTP), as a user
				// uncomments it.
				with := maps.Clone(chosen)
				for _, o := range tm.settings {
					if o.block == s.block {
						with[o.name] = true
					}
				}
				got := start(t, bin, append(slices.Clone(base), f.env(with, s.name)...), tools, 15*time.Second)
				switch {
				case got.err != nil && strings.Contains(got.output, s.name):
				case got.err == nil && got.tools != want.tools:
				case got.err != nil && strings.Contains(got.err.Error(), "not ready"):
				case got.err != nil:
					t.Errorf("%s: with %s=%s the service fails without naming it: %v\n%s", tc.template, s.name, poison, got.err, got.output)
				default:
					t.Errorf("%s names %s, which the service does not read: with %s=%s it starts, gets ready and offers the same tools",
						tc.template, s.name, s.name, poison)
				}
			}
		})
	}
}

// poison is a value no setting accepts: not a URL, number, duration,
// switch, path of an existing file, host or name.
const poison = "%%not a value%%"

const serviceToken = "templates-service-token-0123456789abcdef"

// setting is one NAME=value line of a template. Consecutive lines that are
// all set or all commented out form a block (an application's URL, key
// file and switch), which a user uncomments together.
type setting struct {
	name, value string
	commented   bool
	block       int
}

type template struct{ settings []setting }

var settingLine = regexp.MustCompile(`^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$`)

func parseTemplate(text string) template {
	var tm template
	block, prev := 0, ""
	for _, line := range strings.Split(text, "\n") {
		m := settingLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			prev = ""
			continue
		}
		kind := "set"
		if m[1] != "" {
			kind = "commented"
		}
		if kind != prev {
			block++
		}
		prev = kind
		tm.settings = append(tm.settings, setting{name: m[2], value: m[3], commented: m[1] != "", block: block})
	}
	return tm
}

// filler turns a template's settings into the service's environment.
type filler struct {
	t      *testing.T
	tm     template
	up     upstream
	mounts map[string]string // container path → path under secrets/
	dir    string            // stands for the secrets directory
}

// hostPath is where compose mounts a /run/secrets path from, as
// secrets/<dir>/<file>, or "" when it mounts nothing there.
func (f filler) hostPath(v string) string {
	for dst, src := range f.mounts {
		if strings.HasPrefix(v, dst+"/") {
			return "secrets/" + src + strings.TrimPrefix(v, dst)
		}
	}
	return ""
}

// checkPaths fails for every /run/secrets path the template names that
// compose does not mount, or that the docs never tell the user to create.
func (f filler) checkPaths(docs string) {
	for _, s := range f.tm.settings {
		if !strings.HasPrefix(s.value, "/run/secrets/") {
			continue
		}
		switch rel := f.hostPath(s.value); {
		case rel == "":
			f.t.Errorf("%s=%s: compose mounts nothing there", s.name, s.value)
		case !strings.Contains(docs, rel):
			f.t.Errorf("%s=%s: the docs never tell the user to create %s", s.name, s.value, rel)
		}
	}
}

// env returns the chosen settings with the fake's addresses, each file a
// _FILE setting names created where compose mounts it from (the path
// handed to the service in its place), and poisoned, if named, set to
// poison.
func (f filler) env(chosen map[string]bool, poisoned string) []string {
	f.t.Helper()
	var env []string
	for _, s := range f.tm.settings {
		if !chosen[s.name] {
			continue
		}
		v := s.value
		if fake, ok := f.up.set[s.name]; ok {
			v = fake
		}
		if s.name == poisoned {
			v = poison
		} else if strings.HasSuffix(s.name, "_FILE") && strings.HasPrefix(v, "/run/secrets/") {
			content, ok := f.up.secrets[s.name]
			if strings.HasSuffix(s.name, "_CA_FILE") {
				content, ok = string(f.up.ca), f.up.ca != nil
			}
			if !ok {
				f.t.Errorf("%s: no content for %s in templateCases", s.name, f.hostPath(v))
				continue
			}
			p := filepath.Join(f.dir, filepath.FromSlash(f.hostPath(v)))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				f.t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
				f.t.Fatal(err)
			}
			v = p
		}
		env = append(env, s.name+"="+v)
	}
	return env
}

// composeService is what compose/toolgate.yaml gives one service that a
// template builds on.
type composeService struct {
	// mounts are the directories mounted from the secrets directory:
	// container path → path under it.
	mounts map[string]string
	// defaults are the settings of its env_file entries in the repository
	// (compose/env/web.env), which the template's file overrides.
	defaults []string
}

// The secrets directory has no default: compose before install.sh says to run it.
const secretsDir = "${TOOLGATE_SECRETS_DIR:?run ./install.sh first}"

func composeServices(t *testing.T) map[string]composeService {
	t.Helper()
	var c struct {
		Services map[string]struct {
			Volumes []string    `yaml:"volumes"`
			EnvFile []yaml.Node `yaml:"env_file"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "compose/toolgate.yaml")), &c); err != nil {
		t.Fatal(err)
	}
	out := map[string]composeService{}
	for name, s := range c.Services {
		cs := composeService{mounts: map[string]string{}}
		for _, v := range s.Volumes {
			rest, ok := strings.CutPrefix(v, secretsDir+"/")
			if !ok {
				continue
			}
			parts := strings.Split(rest, ":")
			if len(parts) >= 2 {
				cs.mounts[strings.TrimRight(parts[1], "/")] = strings.TrimRight(parts[0], "/")
			}
		}
		for _, n := range s.EnvFile {
			path := n.Value
			if n.Kind == yaml.MappingNode {
				var f struct{ Path string }
				if err := n.Decode(&f); err != nil {
					t.Fatal(err)
				}
				path = f.Path
			}
			// ${VAR:-default} is its default; the secrets directory's
			// files are the user's.
			if m := regexp.MustCompile(`^\$\{[A-Z_]+:-(.*)\}$`).FindStringSubmatch(path); m != nil && !strings.HasPrefix(path, secretsDir) {
				path = m[1]
			}
			if strings.HasPrefix(path, "$") {
				continue
			}
			for _, line := range strings.Split(read(t, path), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
					cs.defaults = append(cs.defaults, line)
				}
			}
		}
		out[name] = cs
	}
	return out
}

// outcome is how one start of a service went: it failed (err, with its
// output), or it got ready and offered these tools.
type outcome struct {
	err    error
	output string
	tools  string
}

// start runs bin with env until it is ready (and, with tools, has listed
// its tools), or fails to start, or is not ready within the time given;
// then stops it.
func start(t *testing.T, bin string, env []string, tools bool, within time.Duration) outcome {
	t.Helper()
	var addr string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "TOOLGATE_LISTEN="); ok {
			addr = v
		}
	}
	var out capture.Buffer
	cmd := exec.Command(bin)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	deadline := time.Now().Add(within)
	for {
		select {
		case err := <-exited:
			exited <- err
			return outcome{err: fmt.Errorf("exited: %v", err), output: out.String()}
		case <-time.After(100 * time.Millisecond):
		}
		if status, _ := get("http://"+addr+"/readyz", ""); status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			return outcome{err: fmt.Errorf("not ready within %s", within), output: out.String()}
		}
	}
	if tools {
		_, list := post("http://"+addr+"/mcp", serviceToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		return outcome{tools: list}
	}
	return outcome{}
}

func get(url, token string) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return do(req, token)
}

func post(url, token, body string) (int, string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	return do(req, token)
}

func do(req *http.Request, token string) (int, string) {
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 5 * time.Second}
	res, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// serve runs h until the test ends, over TLS with its own certificate
// when tls is set.
func serve(t *testing.T, h http.Handler, tls bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	// Probes of readiness end TLS handshakes early; not worth a line.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// certPEM is a TLS fake's self-signed certificate, the CA a user would
// give the service.
func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
