package compose_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fakeDocker stands in for the docker CLI so install.sh runs here without
// an engine: it logs every call, answers `compose config --services` with
// FAKE_ACTIVE, `ps` (the project's containers) with FAKE_PS, `compose ps`
// with FAKE_RUNNING, `compose exec SVC /app readycheck` with
// FAKE_READY_<SVC> (exit 1 unless "ready"), and `compose exec gateway /app
// endpoints list` with FAKE_ENDPOINTS (CLIENT GROUPS ENDPOINT TOOLS lines;
// unset: the gateway cannot be asked). The failures of a switch:
// FAKE_CONFIG_ERROR fails `compose config --quiet`, FAKE_MISSING names the
// images `image inspect` does not find among `compose config --images`
// (FAKE_IMAGES), FAKE_PULL_ERROR fails `pull`, FAKE_UP_ERROR fails the
// run's first `compose up`; `compose ps -a --format …` answers FAKE_STATUS.
const fakeDocker = `#!/usr/bin/env bash
printf '%s\n' "$*" >>"$FAKE_LOG"
if [ -n "${COMPOSE_PROFILES:-}" ]; then echo "environment: COMPOSE_PROFILES=$COMPOSE_PROFILES" >>"$FAKE_LOG"; fi
case $1 in
info) exit 0 ;;
ps) printf '%s\n' $FAKE_PS; exit 0 ;;
image)
	for m in ${FAKE_MISSING:-}; do [ "$3" = "$m" ] && exit 1; done
	exit 0
	;;
pull)
	if [ -n "${FAKE_PULL_ERROR:-}" ]; then printf '%s\n' "$FAKE_PULL_ERROR" >&2; exit 1; fi
	exit 0
	;;
compose)
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--env-file | --project-name | --project-directory | --profile | -f) shift 2 ;;
		*) break ;;
		esac
	done
	case $1 in
	config)
		case $2 in
		--services) printf '%s\n' $FAKE_ACTIVE ;;
		--images) printf '%s\n' ${FAKE_IMAGES:-} ;;
		--quiet) if [ -n "${FAKE_CONFIG_ERROR:-}" ]; then printf '%s\n' "$FAKE_CONFIG_ERROR" >&2; exit 1; fi ;;
		esac
		;;
	ps) if [ "$2" = -a ]; then printf '%s\n' "${FAKE_STATUS:-}"; else printf '%s\n' $FAKE_RUNNING; fi ;;
	up)
		if [ -n "${FAKE_UP_ERROR:-}" ] && [ ! -e "$FAKE_LOG.up-failed" ]; then
			: >"$FAKE_LOG.up-failed"
			printf '%s\n' "$FAKE_UP_ERROR" >&2
			exit 1
		fi
		;;
	exec)
		if [ "$5" = endpoints ]; then
			# The gateway's endpoint listing; unset: no gateway to ask.
			[ -n "${FAKE_ENDPOINTS:-}" ] || { echo "service \"gateway\" is not running" >&2; exit 1; }
			printf 'CLIENT  GROUPS  ENDPOINT  TOOLS\n%s\n' "$FAKE_ENDPOINTS"
			exit 0
		fi
		var=FAKE_READY_${3//-/_}
		msg=${!var:-ready}
		printf '%s\n' "$msg"
		[ "$msg" = ready ]
		exit
		;;
	esac
	exit 0
	;;
esac
exit 1
`

type installRun struct {
	out, stderr, log string
	env              map[string]string // .env as written
}

// standIn makes dir a stand-in for the repo root: install.sh and what it
// reads are links into this tree, so what it writes by default (./secrets,
// ./.env) lands in dir, never in the checkout. compose/.build is the
// checkout's, as for a real run: the gateway binary there is relinked only
// when the code changed.
func standIn(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "compose"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(".build", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"install.sh", "go.mod", "go.sum", "internal", "services", "policies", "scripts", "secrets.example", "compose/.build",
		"compose.yaml", "compose/toolgate.yaml", "compose/publish.yaml", "compose/approvals.yaml", "compose/searxng-dns.yaml", "compose/env"} {
		abs, err := filepath.Abs(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
}

// runInstall runs install.sh --no-build as a user would (no other flag
// unless args has it) in the stand-in repo dir with the fake docker; fake
// holds the FAKE_* answers. It fails the test when install.sh fails, says
// "command not found", or prints a value of any file under the secrets
// directory it used.
func runInstall(t *testing.T, dir string, fake map[string]string, args ...string) installRun {
	t.Helper()
	r, err := tryInstall(t, dir, fake, args...)
	if err != nil {
		t.Fatalf("install.sh %v: %v\n%s%s", args, err, r.out, r.stderr)
	}
	return r
}

// tryInstall is runInstall for a run that may fail.
func tryInstall(t *testing.T, dir string, fake map[string]string, args ...string) (installRun, error) {
	t.Helper()
	standIn(t, dir)
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fakeDocker), 0o755); err != nil {
		t.Fatal(err)
	}
	logFile, envFile := filepath.Join(dir, "docker.log"), filepath.Join(dir, ".env")
	_ = os.Remove(logFile)
	_ = os.Remove(logFile + ".up-failed")
	cmd := exec.Command(filepath.Join(dir, "install.sh"), append([]string{"--no-build"}, args...)...)
	// Nothing from this shell's environment: install.sh reads TOOLGATE_*.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, "TOOLGATE_") || strings.HasPrefix(e, "COMPOSE_") || strings.HasPrefix(e, "PATH=")
	})
	cmd.Env = append(cmd.Env, "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_LOG="+logFile)
	for k, v := range fake {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	log, _ := os.ReadFile(logFile)
	r := installRun{out: stdout.String(), stderr: stderr.String(), log: string(log), env: map[string]string{}}
	b, _ := os.ReadFile(envFile)
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			r.env[k] = v
		}
	}
	if strings.Contains(r.stderr, "command not found") {
		t.Errorf("install.sh %v calls a command that does not exist:\n%s", args, r.stderr)
	}
	secretsDir := r.env["TOOLGATE_SECRETS_DIR"]
	if secretsDir == "" {
		secretsDir = filepath.Join(dir, "secrets")
	}
	noSecretPrinted(t, secretsDir, r.out+r.stderr+r.log)
	return r, err
}

// noSecretPrinted fails if text holds the content of a file under dir
// (every secret install.sh generates is at least 16 bytes).
func noSecretPrinted(t *testing.T, dir, text string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); len(l) >= 16 && !strings.HasPrefix(l, "#") && strings.Contains(text, l) {
				t.Errorf("install.sh printed the content of %s", p)
			}
		}
		return nil
	})
}

// install.sh writes the bundled SearXNG's settings.yml once: JSON on,
// limiter off, a secret key of its own that it never prints; and turns
// the searxng profile on only when web.env names no other SearXNG and
// never with the demo.
func TestInstallSearXNG(t *testing.T) {
	cases := []struct {
		name    string
		webEnv  string
		args    []string
		bundled bool
	}{
		{name: "default", bundled: true},
		{name: "web.env names the bundled one", webEnv: "WEB_SEARXNG_URL=http://searxng:8080\n", bundled: true},
		{name: "web.env names another SearXNG", webEnv: "WEB_SEARXNG_URL=https://search.lan\n"},
		{name: "demo", args: []string{"--demo"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.webEnv != "" {
				if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "secrets", "web.env"), []byte(tc.webEnv), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			r := runInstall(t, dir, nil, tc.args...)
			profiles := strings.Split(r.env["COMPOSE_PROFILES"], ",")
			settingsFile := filepath.Join(dir, "secrets", "searxng", "settings.yml")
			raw, err := os.ReadFile(settingsFile)
			if !tc.bundled {
				if slices.Contains(profiles, "searxng") || err == nil {
					t.Fatalf("searxng profile on (%v) or settings written (%v) although not bundled", profiles, err == nil)
				}
				return
			}
			if !slices.Contains(profiles, "searxng") {
				t.Errorf("COMPOSE_PROFILES=%q lacks searxng", r.env["COMPOSE_PROFILES"])
			}
			if err != nil {
				t.Fatalf("no settings.yml: %v", err)
			}
			var s struct {
				UseDefaultSettings bool `yaml:"use_default_settings"`
				Server             struct {
					SecretKey string `yaml:"secret_key"`
					Limiter   *bool  `yaml:"limiter"`
				} `yaml:"server"`
				Search struct {
					Formats []string `yaml:"formats"`
				} `yaml:"search"`
			}
			if err := yaml.Unmarshal(raw, &s); err != nil {
				t.Fatalf("settings.yml does not parse: %v\n%s", err, raw)
			}
			key := s.Server.SecretKey
			switch {
			case !s.UseDefaultSettings:
				t.Error("use_default_settings is not true: SearXNG would run without its engines")
			case !slices.Contains(s.Search.Formats, "json"):
				t.Errorf("search.formats = %v, want json in it", s.Search.Formats)
			case s.Server.Limiter == nil || *s.Server.Limiter:
				t.Error("server.limiter is not false")
			case !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(key) || key == "ultrasecretkey":
				t.Errorf("secret_key %q is not a generated 32-byte key", key)
			case strings.Contains(r.out, key) || strings.Contains(r.log, key):
				t.Error("install.sh printed the secret key")
			}
			if fi, err := os.Stat(settingsFile); err != nil || fi.Mode().Perm()&0o007 != 0 {
				t.Errorf("settings.yml is readable by others: %v", fi.Mode())
			}
			// A re-run keeps the file (and its key).
			runInstall(t, dir, nil, tc.args...)
			if again, _ := os.ReadFile(settingsFile); string(again) != string(raw) {
				t.Error("a re-run rewrote settings.yml")
			}
		})
	}
}

// Profile switches are exact: the containers of services outside the
// active profiles are stopped and removed before the start, nothing else.
// Readiness is printed per service without failing the install, and no
// sentence refers to a token that was not printed.
func TestInstallSwitchesAndReadiness(t *testing.T) {
	dir := t.TempDir()
	first := runInstall(t, dir, map[string]string{"FAKE_RUNNING": "gateway policy web"})
	if !strings.Contains(first.out, "Client token openwebui") || !strings.Contains(first.out, "the openwebui token above") {
		t.Fatalf("the first run printed no token or does not refer to it:\n%s", first.out)
	}

	fake := map[string]string{
		"FAKE_ACTIVE":    "gateway policy web arr searxng",
		"FAKE_PS":        "gateway policy web arr-demo fakes demo frigate-demo",
		"FAKE_RUNNING":   "gateway policy web arr searxng",
		"FAKE_READY_arr": "Sonarr host sonarr.lan cannot be resolved — check SONARR_URL",
	}
	r := runInstall(t, dir, fake)
	rm := regexp.MustCompile(`(?m)^compose .*--profile \* rm --stop --force (.*)$`).FindStringSubmatch(r.log)
	if rm == nil || rm[1] != "arr-demo demo fakes frigate-demo" {
		t.Errorf("removed %q, want exactly the demo's containers:\n%s", rm, r.log)
	}
	if up, rmAt := strings.Index(r.log, " up -d"), strings.Index(r.log, " rm --stop"); up < rmAt {
		t.Error("the stale containers were removed after the start, not before it")
	}
	for _, want := range []string{
		"  arr: Sonarr host sonarr.lan cannot be resolved — check SONARR_URL",
		"  web: OK",
		"1 service(s) are not ready",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("install.sh did not print %q:\n%s", want, r.out)
		}
	}
	for _, notExec := range []string{"exec -T gateway /app readycheck", "exec -T policy", "exec -T searxng"} {
		if strings.Contains(r.log, notExec) {
			t.Errorf("install.sh ran %q: that container has no readiness of its own", notExec)
		}
	}
	if strings.Contains(r.out, "token above") {
		t.Errorf("a re-run refers to output it did not print:\n%s", r.out)
	}

	// Nothing stale: nothing removed.
	fake["FAKE_PS"] = "gateway policy web arr searxng"
	if r := runInstall(t, dir, fake); strings.Contains(r.log, " rm ") {
		t.Errorf("removed containers although none was stale:\n%s", r.log)
	}
}

// Home Assistant's configuration directory (the YAML tools): install.sh
// mounts HA_CONFIG_HOST_DIR at /config, read-only unless HA_YAML_WRITE=true,
// and says the YAML tools stay off only when HA_CONFIG_DIR, where the
// service looks, is unset.
func TestInstallHomeAssistantConfig(t *testing.T) {
	dir, haDir := t.TempDir(), t.TempDir()
	const note = "YAML tools stay off"
	cases := []struct {
		name, env     string
		mount, mode   string
		note, refused bool
	}{
		{name: "no configuration directory", env: "HA_URL=https://ha.lan\n", mode: "ro"},
		{name: "mounted read-only", env: "HA_CONFIG_HOST_DIR=" + haDir + "\nHA_CONFIG_DIR=/config\n", mount: haDir, mode: "ro"},
		{name: "mounted writable", env: "HA_CONFIG_HOST_DIR=" + haDir + "\nHA_CONFIG_DIR=/config\nHA_YAML_WRITE=true\n", mount: haDir, mode: "rw"},
		{name: "quoted values", env: `HA_CONFIG_HOST_DIR="` + haDir + `"` + "\nHA_CONFIG_DIR='/config'\n", mount: haDir, mode: "ro"},
		{name: "HA_CONFIG_DIR unset", env: "HA_CONFIG_HOST_DIR=" + haDir + "\n# HA_CONFIG_DIR=/config\n", mount: haDir, mode: "ro", note: true},
		{name: "host directory missing", env: "HA_CONFIG_HOST_DIR=" + filepath.Join(haDir, "nope") + "\nHA_CONFIG_DIR=/config\n", refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "secrets", "homeassistant.env"), []byte(tc.env), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := tryInstall(t, dir, nil)
			if tc.refused {
				if err == nil || !strings.Contains(r.stderr, "HA_CONFIG_HOST_DIR") {
					t.Fatalf("a missing HA_CONFIG_HOST_DIR was not refused by name: %v\n%s", err, r.stderr)
				}
				return
			}
			if err != nil {
				t.Fatalf("install.sh: %v\n%s%s", err, r.out, r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("install.sh wrote to stderr:\n%s", r.stderr)
			}
			if got := r.env["TOOLGATE_HA_CONFIG_DIR"]; got != tc.mount {
				t.Errorf("TOOLGATE_HA_CONFIG_DIR=%q, want %q", got, tc.mount)
			}
			if got := r.env["TOOLGATE_HA_CONFIG_MODE"]; got != tc.mode {
				t.Errorf("TOOLGATE_HA_CONFIG_MODE=%q, want %q", got, tc.mode)
			}
			if !slices.Contains(strings.Split(r.env["COMPOSE_PROFILES"], ","), "homeassistant") {
				t.Errorf("COMPOSE_PROFILES=%q lacks homeassistant", r.env["COMPOSE_PROFILES"])
			}
			if got := strings.Contains(r.out, note); got != tc.note {
				t.Errorf("note %q printed: %v, want %v:\n%s", note, got, tc.note, r.out)
			}
		})
	}
}

// A re-run keeps what the last run was told (docs/install.md: "Run it
// again whenever you change settings"): --publish, --approvals with its
// URL, --secrets and --project come back from the .env install.sh wrote.
// A flag given now wins; --no-publish and --no-approvals turn them off,
// and off is kept too.
func TestInstallRerunKeepsSettings(t *testing.T) {
	dir := t.TempDir()
	custom := filepath.Join(dir, "custom-secrets")
	first := runInstall(t, dir, nil, "--publish", "127.0.0.1:18080", "--approvals", "127.0.0.1:18081", "--secrets", custom, "--project", "tgkeep")
	tokens, err := os.ReadFile(filepath.Join(custom, "gateway", "client_tokens"))
	if err != nil || !strings.Contains(first.out, "tg_") {
		t.Fatalf("the first run made no client token: %v\n%s", err, first.out)
	}
	expect := func(t *testing.T, r installRun, want map[string]string) {
		t.Helper()
		for k, v := range want {
			if r.env[k] != v {
				t.Errorf(".env %s=%q, want %q", k, r.env[k], v)
			}
		}
	}

	// The user fills in secrets/arr.env (in the directory they chose) and
	// runs ./install.sh, nothing else.
	if err := os.WriteFile(filepath.Join(custom, "arr.env"), []byte("SONARR_URL=https://sonarr.lan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runInstall(t, dir, nil)
	expect(t, r, map[string]string{
		"COMPOSE_PROJECT_NAME":  "tgkeep",
		"TOOLGATE_SECRETS_DIR":  custom,
		"TOOLGATE_PUBLISH":      "127.0.0.1:18080",
		"TOOLGATE_APPROVALS":    "127.0.0.1:18081",
		"TOOLGATE_APPROVAL_URL": "http://127.0.0.1:18081",
		"COMPOSE_FILE":          "compose.yaml:compose/publish.yaml:compose/approvals.yaml",
	})
	if !slices.Contains(strings.Split(r.env["COMPOSE_PROFILES"], ","), "arr") {
		t.Errorf("COMPOSE_PROFILES=%q lacks arr", r.env["COMPOSE_PROFILES"])
	}
	if strings.Contains(r.log, "--project-name toolgate") || !regexp.MustCompile(`--project-name tgkeep --project-directory \S+ up -d`).MatchString(r.log) {
		t.Errorf("the re-run did not start project tgkeep:\n%s", r.log)
	}
	if _, err := os.Stat(filepath.Join(dir, "secrets")); err == nil {
		t.Error("the re-run made a fresh ./secrets beside the chosen directory")
	}
	if again, _ := os.ReadFile(filepath.Join(custom, "gateway", "client_tokens")); string(again) != string(tokens) || strings.Contains(r.out, "tg_") {
		t.Errorf("the re-run made a new client token:\n%s", r.out)
	}
	for _, want := range []string{"--publish 127.0.0.1:18080", "--approvals 127.0.0.1:18081", "--secrets " + custom, "--project tgkeep", "--no-publish", "--no-approvals"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the re-run does not say it kept %q (or how to turn it off):\n%s", want, r.out)
		}
	}

	steps := []struct {
		name string
		env  map[string]string
		args []string
		want map[string]string
	}{
		{name: "--no-publish", args: []string{"--no-publish"}, want: map[string]string{
			"TOOLGATE_PUBLISH": "", "TOOLGATE_APPROVALS": "127.0.0.1:18081", "COMPOSE_FILE": "compose.yaml:compose/approvals.yaml"}},
		{name: "off is kept", want: map[string]string{
			"TOOLGATE_PUBLISH": "", "TOOLGATE_APPROVALS": "127.0.0.1:18081", "COMPOSE_FILE": "compose.yaml:compose/approvals.yaml"}},
		{name: "flags win", args: []string{"--publish", "127.0.0.1:19090", "--no-approvals"}, want: map[string]string{
			"TOOLGATE_PUBLISH": "127.0.0.1:19090", "TOOLGATE_APPROVALS": "", "TOOLGATE_APPROVAL_URL": "", "COMPOSE_FILE": "compose.yaml:compose/publish.yaml"}},
		{name: "TOOLGATE_PUBLISH wins", env: map[string]string{"TOOLGATE_PUBLISH": "127.0.0.1:17070"}, want: map[string]string{
			"TOOLGATE_PUBLISH": "127.0.0.1:17070"}},
		{name: "an approval URL set by hand", env: map[string]string{"TOOLGATE_APPROVAL_URL": "https://approve.lan"}, args: []string{"--approvals", "127.0.0.1:18081"},
			want: map[string]string{"TOOLGATE_APPROVALS": "127.0.0.1:18081", "TOOLGATE_APPROVAL_URL": "https://approve.lan"}},
		{name: "is kept", want: map[string]string{"TOOLGATE_APPROVALS": "127.0.0.1:18081", "TOOLGATE_APPROVAL_URL": "https://approve.lan"}},
		{name: "and kept when the address changes", args: []string{"--approvals", "127.0.0.1:18082"},
			want: map[string]string{"TOOLGATE_APPROVALS": "127.0.0.1:18082", "TOOLGATE_APPROVAL_URL": "https://approve.lan"}},
		{name: "--secrets and --project win", args: []string{"--secrets", filepath.Join(dir, "other"), "--project", "tgother"},
			want: map[string]string{"TOOLGATE_SECRETS_DIR": filepath.Join(dir, "other"), "COMPOSE_PROJECT_NAME": "tgother"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { expect(t, runInstall(t, dir, s.env, s.args...), s.want) })
	}

	// --down stops the project the last run started.
	if r := runInstall(t, dir, nil, "--down"); !strings.Contains(r.log, "--project-name tgother --project-directory") || !strings.Contains(r.log, " down ") {
		t.Errorf("--down did not stop project tgother:\n%s", r.log)
	}

	// Only what install.sh wrote is read back: a .env of the user's own
	// publishes nothing.
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("COMPOSE_PROJECT_NAME=mine\nTOOLGATE_PUBLISH=0.0.0.0:80\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(t, runInstall(t, dir, nil), map[string]string{"COMPOSE_PROJECT_NAME": "toolgate", "TOOLGATE_PUBLISH": "", "COMPOSE_FILE": "compose.yaml"})
}

// --help names every option install.sh takes.
func TestInstallHelpNamesEveryOption(t *testing.T) {
	t.Parallel()
	script, err := os.ReadFile("../install.sh")
	if err != nil {
		t.Fatal(err)
	}
	help, err := exec.Command("../install.sh", "--help").Output()
	if err != nil {
		t.Fatalf("install.sh --help: %v", err)
	}
	options := regexp.MustCompile(`(?m)^\t(--[a-z-]+)(?: \| -h \| --help)?\)`).FindAllStringSubmatch(string(script), -1)
	if len(options) < 10 {
		t.Fatalf("found only %d options in install.sh's case statement", len(options))
	}
	for _, m := range options {
		if !regexp.MustCompile(regexp.QuoteMeta(m[1]) + `\b`).Match(help) {
			t.Errorf("install.sh --help does not mention %s:\n%s", m[1], help)
		}
	}
}

// The extended Unraid diagnosis (unraid-ssh, profile extended) starts only
// when asked for (seed 004: "wird nur mit --profile extended gestartet"),
// never because secrets/unraid-ssh.env exists; once asked for, re-runs keep
// it until --no-extended. The demo has no unraid-ssh and keeps the setting
// for the next real run.
func TestInstallExtendedOnlyWhenAskedFor(t *testing.T) {
	if p := load(t)["unraid-ssh"].Profiles; !slices.Equal(p, []string{"extended"}) {
		t.Fatalf("unraid-ssh has profiles %v in compose/toolgate.yaml, want only extended (what --extended turns on)", p)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	sshEnv := filepath.Join(dir, "secrets", "unraid-ssh.env")
	if err := os.WriteFile(sshEnv, []byte("UNRAID_SSH_HOST=tower.lan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		args []string
		on   bool
		says string
	}{
		{name: "the settings file alone", says: "--extended"},
		{name: "--extended", args: []string{"--extended"}, on: true},
		{name: "kept", on: true, says: "--no-extended"},
		{name: "--no-extended", args: []string{"--no-extended"}},
		{name: "off is kept"},
		{name: "--profile extended", args: []string{"--profile", "extended"}, on: true},
		{name: "the demo", args: []string{"--demo"}},
		{name: "after the demo", on: true},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := runInstall(t, dir, nil, s.args...)
			on := slices.Contains(strings.Split(r.env["COMPOSE_PROFILES"], ","), "extended")
			if on != s.on || strings.Contains(r.out, "/mcp/unraid-ssh") != s.on {
				t.Errorf("COMPOSE_PROFILES=%q, want extended %v (and /mcp/unraid-ssh printed as much):\n%s", r.env["COMPOSE_PROFILES"], s.on, r.out)
			}
			if !strings.Contains(r.out, s.says) {
				t.Errorf("install.sh did not mention %s:\n%s", s.says, r.out)
			}
		})
	}

	// The settings file gone: unraid-ssh stays off, and asking for it
	// names the file it needs.
	if err := os.Remove(sshEnv); err != nil {
		t.Fatal(err)
	}
	if r := runInstall(t, dir, nil); strings.Contains(r.env["COMPOSE_PROFILES"], "extended") {
		t.Errorf("profile extended on without secrets/unraid-ssh.env: %q", r.env["COMPOSE_PROFILES"])
	}
	if r, err := tryInstall(t, dir, nil, "--extended"); err == nil || !strings.Contains(r.stderr, "unraid-ssh.env") {
		t.Errorf("--extended without secrets/unraid-ssh.env: %v\n%s", err, r.stderr)
	}
}

// printedToken is one token install.sh printed, with its MCP URLs.
type printedToken struct {
	group, token string
	endpoints    []string // the <name> of each http://gateway:8080/mcp/<name>, sorted
}

// printedTokens reads the "Client token NAME, group GROUP" blocks of
// install.sh's output.
func printedTokens(t *testing.T, out string) map[string]printedToken {
	t.Helper()
	tokens := map[string]printedToken{}
	for _, block := range strings.Split(out, "\n\n") {
		m := regexp.MustCompile(`(?m)^Client token (\S+), group (\S+) \(shown once.*\n  (tg_[A-Za-z0-9_-]+)$`).FindStringSubmatch(block)
		if m == nil {
			continue
		}
		p := printedToken{group: m[2], token: m[3]}
		for _, u := range regexp.MustCompile(`(?m)^    http://gateway:8080/mcp/(\S+)$`).FindAllStringSubmatch(block, -1) {
			p.endpoints = append(p.endpoints, u[1])
		}
		slices.Sort(p.endpoints)
		tokens[m[1]] = p
	}
	return tokens
}

// endpointsFor is what a client of group may use among services, from
// the policy's data (groups.json) and the gateway's default toolsets, plus
// the discovery endpoint: what install.sh should print for its token.
func endpointsFor(t *testing.T, group string, services []string) []string {
	t.Helper()
	b, err := os.ReadFile("../policies/data/toolgate/groups.json")
	if err != nil {
		t.Fatal(err)
	}
	var data struct {
		Groups map[string]struct {
			Services []string `json:"services"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	g, ok := data.Groups[group]
	if !ok {
		t.Fatalf("groups.json has no group %q", group)
	}
	toolsets, err := os.ReadFile("../services/gateway/app/toolsets.go")
	if err != nil {
		t.Fatal(err)
	}
	split := map[string][]string{}
	for _, m := range regexp.MustCompile(`\{Name: "([a-z-]+)", Service: "([a-z-]+)"`).FindAllStringSubmatch(string(toolsets), -1) {
		split[m[2]] = append(split[m[2]], m[1])
	}
	if len(split) < 3 {
		t.Fatalf("found the default toolsets of only %v in toolsets.go", split)
	}
	out := []string{"discover"}
	for _, s := range services {
		if !slices.Contains(g.Services, "*") && !slices.Contains(g.Services, s) {
			continue
		}
		if parts, ok := split[s]; ok {
			out = append(out, parts...)
		} else {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// --demo prints two new tokens once: openwebui (group users; every call
// needs OpenWebUI's signed user token) and demo-admin (group admins, no end
// user, for curl, MCP Inspector, Hermes, Claude Desktop), each with exactly
// the endpoints its group may use, and a curl to try that names no token.
// The tokens file holds their hashes only; a re-run prints no token; a real
// install afterwards removes the demo's admin token.
func TestInstallDemoTokens(t *testing.T) {
	dir := t.TempDir()
	r := runInstall(t, dir, nil, "--demo")
	demoServices := []string{"web", "arr", "frigate", "ersatztv", "tuliprox", "homeassistant", "unraid", "demo"}
	tokens := printedTokens(t, r.out)
	if len(tokens) != 2 {
		t.Fatalf("printed tokens %v, want openwebui and demo-admin:\n%s", tokens, r.out)
	}
	lines, err := os.ReadFile(filepath.Join(dir, "secrets", "gateway", "client_tokens"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct{ group, mode string }{"openwebui": {"users", " user=jwt"}, "demo-admin": {"admins", ""}} {
		p, ok := tokens[name]
		if !ok || p.group != want.group {
			t.Errorf("token %s: printed %v, want group %s", name, p, want.group)
			continue
		}
		sum := sha256.Sum256([]byte(p.token))
		line := "sha256:" + hex.EncodeToString(sum[:]) + " " + name + " " + want.group + want.mode
		if !slices.Contains(strings.Split(string(lines), "\n"), line) {
			t.Errorf("the tokens file lacks %q:\n%s", line, lines)
		}
		if strings.Count(r.out, p.token) != 1 || strings.Contains(r.log, p.token) || strings.Contains(string(lines), p.token) {
			t.Errorf("token %s is shown more than once, or written somewhere", name)
		}
		if want := endpointsFor(t, want.group, demoServices); !slices.Equal(p.endpoints, want) {
			t.Errorf("token %s (group %s) lists %v, want %v", name, p.group, p.endpoints, want)
		}
	}
	// The shipped data: users may not use unraid, admins may use it all.
	if slices.Contains(tokens["openwebui"].endpoints, "unraid") || !slices.Contains(tokens["demo-admin"].endpoints, "unraid") {
		t.Errorf("unraid listed for openwebui %v or not for demo-admin %v", tokens["openwebui"].endpoints, tokens["demo-admin"].endpoints)
	}
	if !strings.Contains(r.out, "missing end-user token") {
		t.Errorf("install.sh does not say what the openwebui token does with other clients:\n%s", r.out)
	}
	curl := regexp.MustCompile(`(?m)^  curl -s http://127\.0\.0\.1:8080/mcp/demo -H "Authorization: Bearer \$TOOLGATE_TOKEN" .*tools/call.*$`).FindString(r.out)
	if curl == "" || !slices.Contains(tokens["demo-admin"].endpoints, "demo") || !strings.Contains(r.out, "--publish 127.0.0.1:8080") {
		t.Errorf("no curl against the demo with $TOOLGATE_TOKEN, or no word on publishing the gateway:\n%s", r.out)
	}

	// A re-run prints no token; a published gateway is tried where it is.
	r = runInstall(t, dir, nil, "--demo", "--publish", "127.0.0.1:18080")
	if len(printedTokens(t, r.out)) != 0 || strings.Contains(r.out, "tg_") {
		t.Errorf("a re-run printed a token:\n%s", r.out)
	}
	again, _ := os.ReadFile(filepath.Join(dir, "secrets", "gateway", "client_tokens"))
	if string(again) != string(lines) {
		t.Errorf("a re-run changed the tokens file:\n%s", again)
	}

	// A real install afterwards removes the demo's admin token, keeps the
	// file's other lines and its mode; the next run has nothing to remove.
	path := filepath.Join(dir, "secrets", "gateway", "client_tokens")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	r = runInstall(t, dir, nil)
	after, _ := os.ReadFile(path)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if !strings.Contains(l, " demo-admin ") {
			want = append(want, l)
		}
	}
	if strings.TrimSpace(string(after)) != strings.Join(want, "\n") || len(want) != 1 || st.Mode() != before.Mode() {
		t.Errorf("after a real install the tokens file (mode %v, was %v) reads:\n%s\nwant only:\n%s", st.Mode(), before.Mode(), after, strings.Join(want, "\n"))
	}
	// The gateway follows the file (services/gateway/auth.TokenFile):
	// nothing is restarted for it, so nothing hangs on this run finishing.
	if strings.Contains(r.log, "restart") || !strings.Contains(r.out, "removed the demo's admin token") {
		t.Errorf("the gateway was restarted, or the removal not said:\n%s\n%s", r.out, r.log)
	}
	if r := runInstall(t, dir, nil); strings.Contains(r.log, "restart") || strings.Contains(r.out, "demo-admin") {
		t.Errorf("a second real install removed something again:\n%s\n%s", r.out, r.log)
	}
}

// A real first install prints only the openwebui token, with the endpoints
// of the services it runs that group users may use: not /mcp/unraid.
func TestInstallFirstTokenEndpoints(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"arr.env", "unraid.env"} {
		if err := os.WriteFile(filepath.Join(dir, "secrets", f), []byte("# set\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := runInstall(t, dir, nil)
	tokens := printedTokens(t, r.out)
	if _, ok := tokens["demo-admin"]; ok || len(tokens) != 1 {
		t.Fatalf("printed tokens %v, want only openwebui:\n%s", tokens, r.out)
	}
	if got, want := tokens["openwebui"].endpoints, endpointsFor(t, "users", []string{"web", "arr", "unraid"}); !slices.Equal(got, want) {
		t.Errorf("openwebui lists %v, want %v:\n%s", got, want, r.out)
	}
	if !regexp.MustCompile(`(?m)^  Not for this token .*/mcp/unraid `).MatchString(r.out) {
		t.Errorf("install.sh does not say that /mcp/unraid is not for this token:\n%s", r.out)
	}
}

// A profile turned on with --profile stays on for later plain re-runs,
// through a demo, until --no-profile NAME; profiles that a settings file
// turns on are unaffected and --no-profile says so.
func TestInstallRerunKeepsProfiles(t *testing.T) {
	dir := t.TempDir()
	steps := []struct {
		name       string
		args       []string
		on, off    []string
		says, kept string
	}{
		{name: "--profile frigate", args: []string{"--profile", "frigate"}, on: []string{"frigate"}},
		{name: "kept", on: []string{"frigate"}, says: "--profile frigate", kept: "frigate"},
		{name: "--profile tuliprox adds", args: []string{"--profile", "tuliprox"}, on: []string{"frigate", "tuliprox"}, kept: "frigate,tuliprox"},
		{name: "the demo", args: []string{"--demo"}, on: []string{"demo"}, off: []string{"frigate", "tuliprox"}, kept: "frigate,tuliprox"},
		{name: "after the demo", on: []string{"frigate", "tuliprox"}, off: []string{"demo"}},
		{name: "--no-profile frigate", args: []string{"--no-profile", "frigate"}, on: []string{"tuliprox"}, off: []string{"frigate"}, kept: "tuliprox"},
		{name: "off is kept", on: []string{"tuliprox"}, off: []string{"frigate"}, says: "--no-profile NAME"},
		{name: "--no-profile tuliprox", args: []string{"--no-profile", "tuliprox"}, off: []string{"frigate", "tuliprox"}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := runInstall(t, dir, nil, s.args...)
			profiles := strings.Split(r.env["COMPOSE_PROFILES"], ",")
			for _, p := range s.on {
				if !slices.Contains(profiles, p) {
					t.Errorf("COMPOSE_PROFILES=%q lacks %s", r.env["COMPOSE_PROFILES"], p)
				}
			}
			for _, p := range s.off {
				if slices.Contains(profiles, p) {
					t.Errorf("COMPOSE_PROFILES=%q has %s", r.env["COMPOSE_PROFILES"], p)
				}
			}
			if !strings.Contains(r.out, s.says) {
				t.Errorf("install.sh did not mention %q:\n%s", s.says, r.out)
			}
			if s.kept != "" && r.env["TOOLGATE_PROFILES"] != s.kept {
				t.Errorf(".env TOOLGATE_PROFILES=%q, want %q", r.env["TOOLGATE_PROFILES"], s.kept)
			}
		})
	}

	// A profile from a settings file stays as it was: --no-profile says so.
	if err := os.WriteFile(filepath.Join(dir, "secrets", "arr.env"), []byte("SONARR_URL=https://sonarr.lan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runInstall(t, dir, nil, "--no-profile", "arr")
	if !slices.Contains(strings.Split(r.env["COMPOSE_PROFILES"], ","), "arr") || !strings.Contains(r.out, "profile arr stays on") {
		t.Errorf("COMPOSE_PROFILES=%q, want arr still on and said so:\n%s", r.env["COMPOSE_PROFILES"], r.out)
	}

	// .env keeps the names comma-separated: a name with a comma is refused.
	if r, err := tryInstall(t, dir, nil, "--profile", "arr,demo"); err == nil || !strings.Contains(r.stderr, "not a profile name") {
		t.Errorf("--profile arr,demo: %v\n%s", err, r.stderr)
	}
}

// --profile and --no-profile take only the profiles the compose files
// define: a typo (frigatte) fails before anything is written or started,
// naming it and every valid profile, exactly those of compose/toolgate.yaml.
// A remembered profile that no longer exists (renamed in a later version)
// does not stop a re-run: it is dropped, and install.sh says so.
func TestInstallProfileMustExist(t *testing.T) {
	var defined []string
	for _, s := range load(t) {
		for _, p := range s.Profiles {
			if !slices.Contains(defined, p) {
				defined = append(defined, p)
			}
		}
	}
	slices.Sort(defined)
	if len(defined) < 5 {
		t.Fatalf("found only the profiles %v in compose/toolgate.yaml", defined)
	}
	validList := regexp.MustCompile(`valid profiles: ([a-z, -]+)`)

	dir := t.TempDir()
	for _, args := range [][]string{{"--profile", "frigatte"}, {"--profile", "frigate", "--profile", "frigatte"}, {"--demo", "--profile", "frigatte"}, {"--no-profile", "frigatte"}} {
		r, err := tryInstall(t, dir, nil, args...)
		if err == nil || !strings.Contains(r.stderr, "unknown profile frigatte") {
			t.Errorf("install.sh %v: %v, want refused naming frigatte:\n%s%s", args, err, r.out, r.stderr)
			continue
		}
		m := validList.FindStringSubmatch(r.stderr)
		if m == nil || !slices.Equal(strings.Split(m[1], ", "), defined) {
			t.Errorf("install.sh %v lists %q as valid, want %v (compose/toolgate.yaml):\n%s", args, m, defined, r.stderr)
		}
		if strings.Contains(r.log, "compose") {
			t.Errorf("install.sh %v ran compose before refusing:\n%s", args, r.log)
		}
		for _, f := range []string{".env", "secrets"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("install.sh %v wrote %s before refusing", args, f)
			}
		}
	}

	// Every defined profile is taken (extended needs its settings file).
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets", "unraid-ssh.env"), []byte("UNRAID_SSH_HOST=tower.lan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, p := range defined {
		if p != "demo" { // it stands in for the real services: not beside them
			args = append(args, "--profile", p)
		}
	}
	runInstall(t, dir, nil, args...)
	r := runInstall(t, dir, nil, "--no-profile", "searxng", "--no-profile", "extended", "--profile", "frigate")

	// An earlier install.sh took any name and kept it: a typo stays
	// refused on the command line and .env is left as it was.
	envFile := filepath.Join(dir, ".env")
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	kept := r.env["TOOLGATE_PROFILES"]
	old := strings.Replace(string(b), "\nTOOLGATE_PROFILES="+kept+"\n", "\nTOOLGATE_PROFILES="+kept+",frigatte,unraid-api\n", 1)
	if old == string(b) {
		t.Fatalf(".env has no line TOOLGATE_PROFILES=%s:\n%s", kept, b)
	}
	if err := os.WriteFile(envFile, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := tryInstall(t, dir, nil, "--profile", "frigatee"); err == nil || !strings.Contains(r.stderr, "unknown profile frigatee") {
		t.Errorf("--profile frigatee with a .env that remembers other unknown names: %v\n%s", err, r.stderr)
	}
	if again, _ := os.ReadFile(envFile); string(again) != old {
		t.Errorf("a refused run rewrote .env:\n%s", again)
	}
	// A plain re-run drops the names that no longer exist and says so.
	r = runInstall(t, dir, nil)
	for _, bad := range []string{"frigatte", "unraid-api"} {
		if !regexp.MustCompile(`(?m)^install\.sh: warning: .*\b` + bad + `\b.*dropped`).MatchString(r.stderr) {
			t.Errorf("the re-run did not say it dropped %s:\n%s", bad, r.stderr)
		}
		if strings.Contains(r.env["COMPOSE_PROFILES"]+r.env["TOOLGATE_PROFILES"], bad) || strings.Contains(r.out, "--profile "+bad) {
			t.Errorf("%s is still on or kept: COMPOSE_PROFILES=%q TOOLGATE_PROFILES=%q\n%s", bad, r.env["COMPOSE_PROFILES"], r.env["TOOLGATE_PROFILES"], r.out)
		}
	}
	if r.env["TOOLGATE_PROFILES"] != kept {
		t.Errorf(".env TOOLGATE_PROFILES=%q, want %q (the valid ones kept)", r.env["TOOLGATE_PROFILES"], kept)
	}
	if r := runInstall(t, dir, nil); strings.Contains(r.stderr, "warning") {
		t.Errorf("the next run warns again:\n%s", r.stderr)
	}

	// --no-profile may name a remembered profile that no longer exists.
	if err := os.WriteFile(envFile, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runInstall(t, dir, nil, "--no-profile", "frigatte")
	if r.env["TOOLGATE_PROFILES"] != kept || strings.Contains(r.stderr, "frigatte") {
		t.Errorf("--no-profile frigatte (remembered): TOOLGATE_PROFILES=%q, want %q, and no warning about it:\n%s", r.env["TOOLGATE_PROFILES"], kept, r.stderr)
	}
}

// With --approvals, compose/approvals.yaml sets TOOLGATE_APPROVAL_URL in
// the gateway's environment from .env, which hides gateway.env's value:
// install.sh carries the one in secrets/gateway.env (a TLS proxy's
// address) into .env, afresh on every run, so deleting it there takes
// effect on the next run. TOOLGATE_APPROVAL_URL given now wins and, given
// by hand, is kept by later runs (below gateway.env's) until --no-approvals.
func TestInstallApprovalURLFromGatewayEnv(t *testing.T) {
	approvals, err := os.ReadFile("approvals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(approvals), "TOOLGATE_APPROVAL_URL: ${TOOLGATE_APPROVAL_URL") {
		t.Fatalf("compose/approvals.yaml no longer takes TOOLGATE_APPROVAL_URL from .env:\n%s", approvals)
	}
	dir := t.TempDir()
	gatewayEnv := filepath.Join(dir, "secrets", "gateway.env")
	if err := os.MkdirAll(filepath.Dir(gatewayEnv), 0o700); err != nil {
		t.Fatal(err)
	}
	const deleted = "# TLS proxy gone\n#TOOLGATE_APPROVAL_URL=https://approve.lan\n"
	type step struct {
		name, gatewayEnv string
		env              map[string]string
		args             []string
		want             string // "" with the approval page off
		says             string
	}
	run := func(t *testing.T, s step) {
		t.Helper()
		if s.gatewayEnv != "" {
			if err := os.WriteFile(gatewayEnv, []byte(s.gatewayEnv), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		r := runInstall(t, dir, s.env, s.args...)
		if got := r.env["TOOLGATE_APPROVAL_URL"]; got != s.want || strings.HasSuffix(r.env["COMPOSE_FILE"], ":compose/approvals.yaml") != (s.want != "") {
			t.Errorf(".env TOOLGATE_APPROVAL_URL=%q (COMPOSE_FILE=%q), want %q, approvals.yaml %v", got, r.env["COMPOSE_FILE"], s.want, s.want != "")
		}
		if !strings.Contains(r.out, s.says) {
			t.Errorf("install.sh did not say %q:\n%s", s.says, r.out)
		}
	}
	steps := []step{
		{name: "the published address by default", args: []string{"--approvals", "127.0.0.1:18081"}, want: "http://127.0.0.1:18081"},
		{name: "gateway.env's", gatewayEnv: "# TLS proxy\nTOOLGATE_APPROVAL_URL=https://approve.lan\n", want: "https://approve.lan"},
		{name: "gateway.env's when changed", gatewayEnv: "TOOLGATE_APPROVAL_URL=\"https://toolgate.lan/approve\"\n", want: "https://toolgate.lan/approve"},
		{name: "deleted from gateway.env: the published address", gatewayEnv: deleted, want: "http://127.0.0.1:18081"},
		{name: "given now wins", gatewayEnv: "TOOLGATE_APPROVAL_URL=https://approve.lan\n", env: map[string]string{"TOOLGATE_APPROVAL_URL": "https://now.lan"}, want: "https://now.lan"},
		{name: "gateway.env's wins over one given earlier", want: "https://approve.lan"},
		{name: "deleted from gateway.env: the one given by hand", gatewayEnv: deleted, want: "https://now.lan", says: "TOOLGATE_APPROVAL_URL=https://now.lan"},
		{name: "and kept when the address changes", args: []string{"--approvals", "127.0.0.1:18082"}, want: "https://now.lan"},
		{name: "--no-approvals forgets it", args: []string{"--no-approvals"}},
		{name: "--approvals again: the published address", args: []string{"--approvals", "127.0.0.1:18081"}, want: "http://127.0.0.1:18081"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { run(t, s) })
	}

	// A .env of an earlier install.sh holds the URL in use but not where it
	// came from: one that gateway.env still has is taken as gateway.env's
	// (deleting it there then takes effect), another one as given by hand
	// (kept, and said).
	envFile := filepath.Join(dir, ".env")
	olderEnv := func(t *testing.T, url string) {
		t.Helper()
		b, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatal(err)
		}
		lines := slices.DeleteFunc(strings.Split(strings.TrimSpace(string(b)), "\n"), func(l string) bool {
			return strings.HasPrefix(l, "TOOLGATE_APPROVAL_URL")
		})
		if err := os.WriteFile(envFile, []byte(strings.Join(append(lines, "TOOLGATE_APPROVAL_URL="+url), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("an older .env with gateway.env's", func(t *testing.T) {
		olderEnv(t, "https://approve.lan")
		run(t, step{gatewayEnv: "TOOLGATE_APPROVAL_URL=https://approve.lan\n", want: "https://approve.lan"})
		run(t, step{gatewayEnv: deleted, want: "http://127.0.0.1:18081"})
	})
	t.Run("an older .env with one given by hand", func(t *testing.T) {
		olderEnv(t, "https://hand.lan")
		run(t, step{want: "https://hand.lan", says: "TOOLGATE_APPROVAL_URL=https://hand.lan"})
		run(t, step{want: "https://hand.lan"})
	})
}

// TOOLGATE_SECRETS_DIR in the environment chooses the secrets directory,
// as docs/install.md says; --secrets given now wins over it.
func TestInstallSecretsDirFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	fromEnv, fromFlag := filepath.Join(dir, "env-secrets"), filepath.Join(dir, "flag-secrets")
	r := runInstall(t, dir, map[string]string{"TOOLGATE_SECRETS_DIR": fromEnv})
	if r.env["TOOLGATE_SECRETS_DIR"] != fromEnv {
		t.Errorf(".env TOOLGATE_SECRETS_DIR=%q, want %q", r.env["TOOLGATE_SECRETS_DIR"], fromEnv)
	}
	if _, err := os.Stat(filepath.Join(fromEnv, "gateway", "admin_token")); err != nil {
		t.Errorf("no secrets in TOOLGATE_SECRETS_DIR: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "secrets")); err == nil {
		t.Error("made ./secrets although TOOLGATE_SECRETS_DIR names another directory")
	}
	r = runInstall(t, dir, map[string]string{"TOOLGATE_SECRETS_DIR": fromEnv}, "--secrets", fromFlag)
	if r.env["TOOLGATE_SECRETS_DIR"] != fromFlag {
		t.Errorf("--secrets with TOOLGATE_SECRETS_DIR set: .env TOOLGATE_SECRETS_DIR=%q, want %q", r.env["TOOLGATE_SECRETS_DIR"], fromFlag)
	}
}

// install.sh prints the endpoints the running gateway says show each
// token tools (gateway endpoints list --refresh, asked after the switch),
// not every endpoint of every running service: with only Sonarr set up,
// no /mcp/radarr or /mcp/prowlarr, which would list no tools. A re-run
// lists each client's endpoints. When the gateway cannot be asked it
// says so and falls back to the services the groups may use.
func TestInstallPrintsOnlyEndpointsWithTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets", "arr.env"), []byte("SONARR_URL=https://sonarr.lan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := map[string]string{
		"FAKE_RUNNING":   "gateway policy web arr searxng",
		"FAKE_ENDPOINTS": "openwebui  users  sonarr  12\nopenwebui  users  web  3\nnas-box  nas  web  3\nkiosk  nobody  -  0",
	}
	r := runInstall(t, dir, fake)
	if !regexp.MustCompile(`(?m)^compose .* exec -T gateway /app endpoints list --refresh$`).MatchString(r.log) {
		t.Errorf("install.sh did not ask the gateway for its endpoints:\n%s", r.log)
	}
	if up, ask := strings.Index(r.log, " up -d"), strings.Index(r.log, "endpoints list"); ask < up {
		t.Error("the endpoints were asked for before the switch")
	}
	tok := printedTokens(t, r.out)["openwebui"]
	if want := []string{"discover", "sonarr", "web"}; !slices.Equal(tok.endpoints, want) {
		t.Errorf("openwebui's URLs %v, want %v:\n%s", tok.endpoints, want, r.out)
	}
	for _, gone := range []string{"/mcp/radarr", "/mcp/prowlarr", "/mcp/arr"} {
		if strings.Contains(r.out, gone) {
			t.Errorf("install.sh prints %s, which lists no tools:\n%s", gone, r.out)
		}
	}

	// A re-run prints no token: each client's endpoints instead.
	r = runInstall(t, dir, fake)
	for _, want := range []string{"  openwebui (groups users): sonarr web", "  nas-box (groups nas): web", "  kiosk (groups nobody): none", "http://gateway:8080/mcp/discover"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the re-run does not print %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, "radarr") || strings.Contains(r.out, "prowlarr") {
		t.Errorf("the re-run prints endpoints without tools:\n%s", r.out)
	}

	// No gateway to ask: said, and the groups' services printed.
	delete(fake, "FAKE_ENDPOINTS")
	r = runInstall(t, dir, fake)
	if !strings.Contains(r.out, "could not ask the gateway which endpoints have tools (service \"gateway\" is not running)") || !strings.Contains(r.out, "one service:   http://gateway:8080/mcp/sonarr") {
		t.Errorf("without the gateway's listing install.sh does not say so or falls back wrongly:\n%s", r.out)
	}
}

// composeConfig renders the stand-in repo dir's compose project as the
// real `docker compose config` does with the .env install.sh wrote there
// (its COMPOSE_FILE and COMPOSE_PROFILES); it skips without compose v2.
func composeConfig(t *testing.T, dir string) map[string]renderedService {
	t.Helper()
	if exec.Command("docker", "compose", "version").Run() != nil {
		t.Skip("no docker compose v2 here")
	}
	cmd := exec.Command("docker", "compose", "--env-file", ".env", "config", "--format", "json")
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, "TOOLGATE_") || strings.HasPrefix(e, "COMPOSE_")
	})
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker compose config: %v\n%s", err, stderr.String())
	}
	var cfg struct {
		Services map[string]renderedService `json:"services"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg.Services
}

// renderedService is what the tests read of `docker compose config`.
type renderedService struct {
	Image       string            `json:"image"`
	Environment map[string]string `json:"environment"`
	DNS         []string          `json:"dns"`
}

// The demo is the demo: no real setting applies to it. A saved web.env
// (another SearXNG, a LAN resolver), gateway.env (notifications, an
// approval URL) and homeassistant.env (a configuration directory that is
// not there) change nothing in the demo, as compose itself renders it;
// the same files do apply to the real install.
func TestInstallDemoTakesNoRealSetting(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.MkdirAll(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	for f, content := range map[string]string{
		"web.env":           "WEB_SEARXNG_URL=http://searxng.lan:8080\nWEB_DNS=192.168.1.1\n",
		"gateway.env":       "TOOLGATE_NOTIFY_WEBHOOK_URL=https://hooks.lan/toolgate\nTOOLGATE_APPROVAL_URL=https://approve.lan\n",
		"homeassistant.env": "HA_CONFIG_HOST_DIR=" + filepath.Join(dir, "not-there") + "\nHA_CONFIG_DIR=/config\n",
	} {
		if err := os.WriteFile(filepath.Join(secrets, f), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r := runInstall(t, dir, nil, "--demo", "--approvals", "127.0.0.1:18081")
	for k, want := range map[string]string{
		"COMPOSE_PROFILES": "demo", "TOOLGATE_WEB_SETTINGS": "compose/env/web.demo.env", "TOOLGATE_GATEWAY_SETTINGS": "compose/env/none.env",
		"TOOLGATE_HA_CONFIG_DIR": "", "TOOLGATE_SEARXNG_DNS_1": "", "TOOLGATE_APPROVAL_URL": "http://127.0.0.1:18081",
	} {
		if r.env[k] != want {
			t.Errorf("demo: .env %s=%q, want %q", k, r.env[k], want)
		}
	}
	svcs := composeConfig(t, dir)
	web, gw := svcs["web"].Environment, svcs["gateway"].Environment
	if web["WEB_SEARXNG_URL"] != "http://searxng-demo:8080" || web["WEB_DNS"] != "" {
		t.Errorf("the demo's web runs with WEB_SEARXNG_URL=%q WEB_DNS=%q, want the demo's fake and no DNS of yours", web["WEB_SEARXNG_URL"], web["WEB_DNS"])
	}
	if gw["TOOLGATE_NOTIFY_WEBHOOK_URL"] != "" || gw["TOOLGATE_APPROVAL_URL"] != "http://127.0.0.1:18081" {
		t.Errorf("the demo's gateway takes gateway.env: %v", gw)
	}

	// The real install takes them all (and refuses the missing directory).
	if r, err := tryInstall(t, dir, nil); err == nil || !strings.Contains(r.stderr, "HA_CONFIG_HOST_DIR") {
		t.Fatalf("the real install did not check homeassistant.env: %v\n%s", err, r.stderr)
	}
	if err := os.Remove(filepath.Join(secrets, "homeassistant.env")); err != nil {
		t.Fatal(err)
	}
	r = runInstall(t, dir, nil)
	if r.env["TOOLGATE_WEB_SETTINGS"] != filepath.Join(secrets, "web.env") || r.env["TOOLGATE_GATEWAY_SETTINGS"] != filepath.Join(secrets, "gateway.env") {
		t.Errorf("real: .env names %q and %q", r.env["TOOLGATE_WEB_SETTINGS"], r.env["TOOLGATE_GATEWAY_SETTINGS"])
	}
	svcs = composeConfig(t, dir)
	if web := svcs["web"].Environment; web["WEB_SEARXNG_URL"] != "http://searxng.lan:8080" || web["WEB_DNS"] != "192.168.1.1" {
		t.Errorf("the real web does not take web.env: %v", web)
	}
	if gw := svcs["gateway"].Environment; gw["TOOLGATE_NOTIFY_WEBHOOK_URL"] != "https://hooks.lan/toolgate" {
		t.Errorf("the real gateway does not take gateway.env: %v", gw)
	}
}

// The demo runs on its own: --profile demo on a real install, a real
// profile or --extended beside --demo, and a profile demo kept from an
// earlier run are refused, saying why and what to run, before anything is
// written or started. --demo --profile demo is just the demo.
func TestInstallRefusesToMixDemoAndRealProfiles(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--profile", "demo"}, "--profile demo starts the demo's fake upstreams under the real services' names"},
		{[]string{"--profile", "arr", "--profile", "demo"}, "for the demo run ./install.sh --demo"},
		{[]string{"--demo", "--profile", "arr"}, "--demo runs on its own (its services answer to the real ones' names, against fake upstreams): it cannot run beside profile arr"},
		{[]string{"--demo", "--extended"}, "it cannot run with --extended"},
	} {
		r, err := tryInstall(t, dir, nil, tc.args...)
		if err == nil || !strings.Contains(r.stderr, tc.says) || !strings.Contains(r.stderr, "nothing was changed") {
			t.Errorf("install.sh %v: %v, want refused saying %q:\n%s%s", tc.args, err, tc.says, r.out, r.stderr)
		}
		if strings.Contains(r.log, "compose") {
			t.Errorf("install.sh %v ran compose before refusing:\n%s", tc.args, r.log)
		}
		for _, f := range []string{".env", "secrets"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("install.sh %v wrote %s before refusing", tc.args, f)
			}
		}
	}

	r := runInstall(t, dir, nil, "--demo", "--profile", "demo")
	if r.env["COMPOSE_PROFILES"] != "demo" || r.env["TOOLGATE_PROFILES"] != "" {
		t.Errorf("--demo --profile demo: COMPOSE_PROFILES=%q TOOLGATE_PROFILES=%q, want the demo and nothing kept", r.env["COMPOSE_PROFILES"], r.env["TOOLGATE_PROFILES"])
	}

	// A .env of an earlier install.sh, which took --profile demo with a
	// warning and kept it.
	envFile := filepath.Join(dir, ".env")
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(envFile, []byte(strings.Replace(string(b), "\nTOOLGATE_PROFILES=\n", "\nTOOLGATE_PROFILES=frigate,demo\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := tryInstall(t, dir, nil); err == nil || !strings.Contains(r.stderr, "profile demo, kept from the last run") || !strings.Contains(r.stderr, "--no-profile demo") {
		t.Errorf("a kept profile demo: %v\n%s", err, r.stderr)
	}
	r = runInstall(t, dir, nil, "--no-profile", "demo")
	if p := strings.Split(r.env["COMPOSE_PROFILES"], ","); slices.Contains(p, "demo") || !slices.Contains(p, "frigate") || r.env["TOOLGATE_PROFILES"] != "frigate" {
		t.Errorf("--no-profile demo: COMPOSE_PROFILES=%q TOOLGATE_PROFILES=%q", r.env["COMPOSE_PROFILES"], r.env["TOOLGATE_PROFILES"])
	}

	// COMPOSE_PROFILES in the environment would win over .env in every
	// compose call: ignored, and said.
	r = runInstall(t, dir, map[string]string{"COMPOSE_PROFILES": "arr"}, "--demo")
	if !strings.Contains(r.out, "COMPOSE_PROFILES in the environment is ignored") || r.env["COMPOSE_PROFILES"] != "demo" || strings.Contains(r.log, "environment: COMPOSE_PROFILES") {
		t.Errorf("COMPOSE_PROFILES=arr with --demo:\n%s", r.out)
	}
}

// dockerPullNoHost is Docker's own error for a pull on a host whose
// resolver cannot find the registry (the SearXNG case).
const dockerPullNoHost = `Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 127.0.0.53:53: no such host`

// A switch is prepared before anything of the running stack changes: the
// compose configuration, the images built here, the SearXNG image pulled.
// A failure there says what failed and what to do (for SearXNG: bring the
// image, or WEB_SEARXNG_URL), and leaves the demo that runs as it was:
// its containers (nothing removed, nothing started), its .env and its
// demo-admin token.
func TestInstallPreparesBeforeItSwitches(t *testing.T) {
	demoRunning := "gateway policy web arr-demo fakes demo"
	cases := []struct {
		name string
		fake map[string]string
		says []string
	}{
		{name: "SearXNG cannot be pulled", fake: map[string]string{
			"FAKE_IMAGES": "toolgate/gateway:toolgate toolgate/arr:toolgate searxng/searxng:latest", "FAKE_MISSING": "searxng/searxng:latest",
			"FAKE_PULL_ERROR": dockerPullNoHost,
		}, says: []string{"Docker could not pull searxng/searxng:latest: " + dockerPullNoHost, "WEB_SEARXNG_URL in ", "docker load", "web_fetch works"}},
		{name: "an image not built", fake: map[string]string{
			"FAKE_IMAGES": "toolgate/gateway:toolgate toolgate/arr:toolgate", "FAKE_MISSING": "toolgate/arr:toolgate",
		}, says: []string{"image toolgate/arr:toolgate is missing: run ./install.sh without --no-build"}},
		{name: "the configuration does not validate", fake: map[string]string{
			"FAKE_CONFIG_ERROR": `service "arr" refers to undefined secret approval_key_arr: invalid compose project`,
		}, says: []string{"does not validate", `undefined secret approval_key_arr`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			runInstall(t, dir, nil, "--demo")
			tokensFile := filepath.Join(dir, "secrets", "gateway", "client_tokens")
			envBefore, _ := os.ReadFile(filepath.Join(dir, ".env"))
			tokensBefore, _ := os.ReadFile(tokensFile)
			if err := os.WriteFile(filepath.Join(dir, "secrets", "arr.env"), []byte("SONARR_URL=https://sonarr.lan\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			fake := map[string]string{"FAKE_PS": demoRunning, "FAKE_ACTIVE": "gateway policy web arr searxng"}
			for k, v := range tc.fake {
				fake[k] = v
			}
			r, err := tryInstall(t, dir, fake)
			if err == nil {
				t.Fatalf("the real install succeeded:\n%s", r.out)
			}
			for _, want := range tc.says {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
			if !strings.Contains(r.stderr, "the running stack, .env and the tokens were left as they were") {
				t.Errorf("it does not say the stack was left alone:\n%s", r.stderr)
			}
			for _, touched := range []string{" rm ", " up ", " stop", " down"} {
				if strings.Contains(r.log, touched) {
					t.Errorf("the stack was touched (%q) before the switch was prepared:\n%s", touched, r.log)
				}
			}
			envAfter, _ := os.ReadFile(filepath.Join(dir, ".env"))
			tokensAfter, _ := os.ReadFile(tokensFile)
			if string(envAfter) != string(envBefore) || string(tokensAfter) != string(tokensBefore) || !strings.Contains(string(tokensAfter), " demo-admin ") {
				t.Errorf(".env or the tokens changed:\n%s\n--- tokens\n%s", envAfter, tokensAfter)
			}
			if _, err := os.Stat(filepath.Join(dir, ".env.next")); err == nil {
				t.Error(".env.next was left behind")
			}
		})
	}
}

// A switch that fails anyway (a container that does not become healthy)
// says which and how to look, then puts the previous stack back: its .env,
// its tokens (the demo's demo-admin again) and its containers, started with
// them. Without an earlier stack it says so, and prints no token.
func TestInstallFailedSwitchPutsThePreviousStackBack(t *testing.T) {
	dir := t.TempDir()
	runInstall(t, dir, nil, "--demo")
	tokensFile := filepath.Join(dir, "secrets", "gateway", "client_tokens")
	envBefore, _ := os.ReadFile(filepath.Join(dir, ".env"))
	tokensBefore, _ := os.ReadFile(tokensFile)
	if err := os.WriteFile(filepath.Join(dir, "secrets", "arr.env"), []byte("SONARR_URL=https://sonarr.lan\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fake := map[string]string{
		"FAKE_PS": "gateway policy web arr-demo fakes demo", "FAKE_ACTIVE": "gateway policy web arr searxng",
		"FAKE_UP_ERROR": "dependency failed to start: container toolgate-arr-1 is unhealthy",
		"FAKE_STATUS":   "gateway: Up 40 seconds (healthy)\narr: Up 35 seconds (unhealthy)\nsearxng: Up 35 seconds (health: starting)",
	}
	r, err := tryInstall(t, dir, fake)
	if err == nil {
		t.Fatalf("a failed switch succeeded:\n%s", r.out)
	}
	for _, want := range []string{"the switch to profiles web,arr,searxng failed", "  arr: Up 35 seconds (unhealthy)", "  searxng: Up 35 seconds (health: starting)",
		"logs SERVICE", "WEB_SEARXNG_URL", "the previous stack (profiles web,demo) runs again"} {
		if !strings.Contains(r.stderr+r.out, want) {
			t.Errorf("install.sh does not say %q:\n%s%s", want, r.out, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "gateway: Up 40 seconds (healthy)") {
		t.Errorf("a healthy container is named among the failed:\n%s", r.stderr)
	}
	ups := regexp.MustCompile(`(?m) up -d --wait`).FindAllStringIndex(r.log, -1)
	if len(ups) != 2 {
		t.Fatalf("want the failed start and the previous stack's start, got %d starts:\n%s", len(ups), r.log)
	}
	envAfter, _ := os.ReadFile(filepath.Join(dir, ".env"))
	tokensAfter, _ := os.ReadFile(tokensFile)
	if string(envAfter) != string(envBefore) || string(tokensAfter) != string(tokensBefore) {
		t.Errorf("the previous .env or tokens are not back:\n%s\n--- tokens\n%s", envAfter, tokensAfter)
	}

	// A first install has nothing to go back to.
	fresh := t.TempDir()
	delete(fake, "FAKE_PS")
	r, err = tryInstall(t, fresh, fake)
	if err == nil || !strings.Contains(r.stderr, "no earlier stack of project toolgate to go back to") || strings.Contains(r.out, "tg_") {
		t.Errorf("a failed first install: %v\n%s%s", err, r.out, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(fresh, "secrets", "gateway", "client_tokens")); strings.Contains(string(b), "sha256:") {
		t.Errorf("a failed first install keeps a token it never printed:\n%s", b)
	}
}

// The bundled SearXNG asks its engines through the DNS servers the web
// service takes (WEB_DNS, else AI_DNS, in secrets/web.env), as compose
// renders it: addresses on port 53, three at most. Another port is refused
// before anything is written; without a setting, with another SearXNG and
// in the demo there is nothing to set.
func TestInstallSearXNGUsesTheWebServicesDNS(t *testing.T) {
	cases := []struct {
		name, webEnv string
		args         []string
		want         []string
		refused      string
	}{
		{name: "WEB_DNS", webEnv: "WEB_DNS=192.168.1.1:53, [fd00::53]:53,9.9.9.9\n", want: []string{"192.168.1.1", "fd00::53", "9.9.9.9"}},
		{name: "AI_DNS, the seed's name", webEnv: "AI_DNS=192.168.1.1\n", want: []string{"192.168.1.1"}},
		{name: "WEB_DNS wins", webEnv: "AI_DNS=10.0.0.1\nWEB_DNS=192.168.1.1\n", want: []string{"192.168.1.1"}},
		{name: "a port Docker cannot give", webEnv: "WEB_DNS=192.168.1.1:5353\n", refused: "WEB_DNS in "},
		{name: "a name, not an address", webEnv: "AI_DNS=dns.lan\n", refused: "dns.lan is not an IP address"},
		{name: "none set", webEnv: "# nothing\n"},
		{name: "another SearXNG", webEnv: "WEB_SEARXNG_URL=https://search.lan\nWEB_DNS=192.168.1.1\n"},
		{name: "the demo", webEnv: "WEB_DNS=192.168.1.1\n", args: []string{"--demo"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "secrets"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "secrets", "web.env"), []byte(tc.webEnv), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.refused != "" {
				r, err := tryInstall(t, dir, nil, tc.args...)
				if err == nil || !strings.Contains(r.stderr, tc.refused) || !strings.Contains(r.stderr, "nothing was changed") {
					t.Errorf("not refused with %q: %v\n%s", tc.refused, err, r.stderr)
				}
				if _, err := os.Stat(filepath.Join(dir, ".env")); err == nil || strings.Contains(r.log, " config") || strings.Contains(r.log, " up ") {
					t.Errorf("refused after writing .env or running compose:\n%s", r.log)
				}
				return
			}
			r := runInstall(t, dir, nil, tc.args...)
			var got []string
			for _, k := range []string{"TOOLGATE_SEARXNG_DNS_1", "TOOLGATE_SEARXNG_DNS_2", "TOOLGATE_SEARXNG_DNS_3"} {
				if v := r.env[k]; v != "" {
					got = append(got, v)
				}
			}
			if !slices.Equal(got, tc.want) || strings.Contains(r.env["COMPOSE_FILE"], "compose/searxng-dns.yaml") != (len(tc.want) > 0) {
				t.Fatalf(".env DNS %v (COMPOSE_FILE=%q), want %v", got, r.env["COMPOSE_FILE"], tc.want)
			}
			if len(tc.want) == 0 {
				return
			}
			if dns := composeConfig(t, dir)["searxng"].DNS; !slices.Equal(dns, tc.want) {
				t.Errorf("compose gives searxng dns %q, want %q", dns, tc.want)
			}
		})
	}
}

// Images are tagged per compose project, so a second checkout installed
// under another project never replaces this one's images: .env names the
// tag, compose runs the images with it, and TOOLGATE_TAG given now wins.
func TestInstallTagsImagesPerProject(t *testing.T) {
	dir := t.TempDir()
	r := runInstall(t, dir, nil, "--project", "tgclone")
	if r.env["TOOLGATE_TAG"] != "tgclone" {
		t.Fatalf(".env TOOLGATE_TAG=%q, want the project's name", r.env["TOOLGATE_TAG"])
	}
	svcs := composeConfig(t, dir)
	for name, s := range svcs {
		if strings.HasPrefix(s.Image, "toolgate/") && !strings.HasSuffix(s.Image, ":tgclone") {
			t.Errorf("%s runs %s, not the project's tag", name, s.Image)
		}
	}
	if svcs["gateway"].Image != "toolgate/gateway:tgclone" {
		t.Errorf("the gateway runs %q", svcs["gateway"].Image)
	}
	if r := runInstall(t, dir, map[string]string{"TOOLGATE_TAG": "v1"}); r.env["TOOLGATE_TAG"] != "v1" {
		t.Errorf("TOOLGATE_TAG=v1 given: .env TOOLGATE_TAG=%q", r.env["TOOLGATE_TAG"])
	}
}

// A re-run with the settings of the last one has no other stack to go
// back to: a failed start says so instead of starting the same again.
func TestInstallFailedRerunDoesNotStartTheSameTwice(t *testing.T) {
	dir := t.TempDir()
	runInstall(t, dir, nil)
	fake := map[string]string{"FAKE_PS": "gateway policy web searxng", "FAKE_UP_ERROR": "container toolgate-web-1 is unhealthy", "FAKE_STATUS": "web: Up 1 minute (unhealthy)"}
	r, err := tryInstall(t, dir, fake)
	if err == nil || !strings.Contains(r.stderr, "the settings are those of the last run") || !strings.Contains(r.stderr, "  web: Up 1 minute (unhealthy)") {
		t.Fatalf("a failed re-run: %v\n%s", err, r.stderr)
	}
	if n := strings.Count(r.log, " up -d --wait"); n != 1 {
		t.Errorf("started %d times, want once:\n%s", n, r.log)
	}
}
