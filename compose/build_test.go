package compose_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The builds of scripts/build.sh and scripts/images.sh with fake go and
// docker commands: which Go builds, with which flags, for which platform.
// compose/e2e builds with the real ones (builder_test.go).

// fakeGo logs every call (one line, arguments separated by tabs, after
// the target's GOOS/GOARCH/GOARM) to FAKE_LOG, answers `go env GOVERSION`
// with FAKE_GOVERSION and makes the files `go build -o` would.
const fakeGo = `#!/usr/bin/env bash
{ printf 'go\tGOOS=%s GOARCH=%s GOARM=%s CGO_ENABLED=%s' "${GOOS:-}" "${GOARCH:-}" "${GOARM:-}" "${CGO_ENABLED:-}"; printf '\t%s' "$@"; echo; } >>"$FAKE_LOG"
case $1 in
env) echo "${FAKE_GOVERSION:-go1.26.8}" ;;
build)
	shift
	while [ $# -gt 0 ] && [ "$1" != -o ]; do shift; done
	out=$2
	shift 2
	if [ "${out%/}/" = "$out" ]; then
		mkdir -p "$out"
		for p in "$@"; do echo "fake $GOARCH $(basename "$p")" >"$out/$(basename "$p")"; done
	else
		mkdir -p "$(dirname "$out")"
		echo fake >"$out"
	fi
	;;
esac
`

// fakeBuildDocker logs every call like fakeGo, answers `info --format`
// with FAKE_ENGINE, `image inspect` as FAKE_IMAGE (present or absent),
// `pull` with the daemon's answer when no registry is reachable, and
// create/start/cp/rm as the Docker CLI would for a build that succeeds.
const fakeBuildDocker = `#!/usr/bin/env bash
{ printf 'docker'; printf '\t%s' "$@"; [ "$1" = build ] && printf '\tapp=%s' "$(cat "${@: -1}/app")"; echo; } >>"$FAKE_LOG"
case $1 in
info) [ "${2:-}" = --format ] && echo "${FAKE_ENGINE:-linux/x86_64}"; exit 0 ;;
compose | build | start | rm) exit 0 ;;
image)
	[ "$2" = ls ] && { echo 'toolgate/demo:local 10MB'; exit 0; }
	[ "${FAKE_IMAGE:-}" = present ] && exit 0
	echo "Error: No such image: $3" >&2
	exit 1
	;;
pull)
	echo 'Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host' >&2
	exit 1
	;;
create) echo 0123456789ab ;;
cp)
	case $2 in
	*:/app) cp "$FAKE_APP" "$3" ;; # out of an image
	*) if [ "${3%/}/" = "$3" ] || [ -d "$3" ]; then echo fake >"$3/demo"; else echo fake >"$3"; fi ;;
	esac
	;;
esac
`

// fakeTools writes the fake go (unless withGo is false) and docker into a
// new directory and returns a PATH of it and the host's directories that
// have no go.
func fakeTools(t *testing.T, withGo bool) string {
	t.Helper()
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(fakeBuildDocker), 0o755); err != nil {
		t.Fatal(err)
	}
	if withGo {
		if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin + ":" + pathWithoutGo(t)
}

// pathWithoutGo is this PATH without the directories that hold a go.
func pathWithoutGo(t *testing.T) string {
	t.Helper()
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err != nil {
			dirs = append(dirs, d)
		}
	}
	p := strings.Join(dirs, ":")
	cmd := exec.Command("bash", "-c", "command -v go")
	cmd.Env = []string{"PATH=" + p}
	if out, err := cmd.Output(); err == nil {
		t.Fatalf("PATH without go still finds %s", out)
	}
	return p
}

// calls is the log of the fake tools: one call a line, its arguments split.
func calls(t *testing.T, log string) [][]string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, strings.Split(l, "\t"))
		}
	}
	return out
}

func callOf(all [][]string, tool, sub string) []string {
	for _, c := range all {
		if c[0] == tool && slices.Contains(c, sub) {
			return c
		}
	}
	return nil
}

// run runs script in dir with only PATH, FAKE_LOG and env set.
func runScript(t *testing.T, dir, path, script string, env []string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, script), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + path, "HOME=" + t.TempDir(), "FAKE_LOG=" + filepath.Join(dir, "fake.log")}, env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// imagesStandIn is a repo root for scripts/images.sh whose compose/.build
// is its own (the fake go's files must not land in the checkout's).
func imagesStandIn(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "compose"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "services", "scripts", "compose/Dockerfile"} {
		abs, err := filepath.Abs(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The images are for the engine's architecture (docker info) unless
// TOOLGATE_PLATFORM names another; Go builds for the same platform the
// image is marked with, and an unknown one stops before anything is built.
func TestImagesAreForTheEnginesPlatform(t *testing.T) {
	cases := []struct {
		name, engine, platform string
		wantGo, wantPlatform   string // the fake go's target, docker build's --platform
		wantErr                string
	}{
		{name: "amd64 engine", engine: "linux/x86_64", wantGo: "GOOS=linux GOARCH=amd64 GOARM=", wantPlatform: "linux/amd64"},
		{name: "arm64 engine (Raspberry Pi OS 64-bit)", engine: "linux/aarch64", wantGo: "GOOS=linux GOARCH=arm64 GOARM=", wantPlatform: "linux/arm64"},
		{name: "32-bit ARM engine", engine: "linux/armv7l", wantGo: "GOOS=linux GOARCH=arm GOARM=7", wantPlatform: "linux/arm/v7"},
		{name: "arm64 images on an amd64 engine", engine: "linux/x86_64", platform: "linux/arm64", wantGo: "GOOS=linux GOARCH=arm64 GOARM=", wantPlatform: "linux/arm64"},
		{name: "unknown TOOLGATE_PLATFORM", engine: "linux/x86_64", platform: "linux/riscv64", wantErr: "not linux/riscv64 (TOOLGATE_PLATFORM)"},
		{name: "engine of an unknown architecture", engine: "linux/ppc64le", wantErr: "not linux/ppc64le (the Docker engine's platform); set TOOLGATE_PLATFORM"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := imagesStandIn(t)
			env := []string{"FAKE_ENGINE=" + c.engine}
			if c.platform != "" {
				env = append(env, "TOOLGATE_PLATFORM="+c.platform)
			}
			out, stderr, err := runScript(t, dir, fakeTools(t, true), "scripts/images.sh", env, "demo")
			log := calls(t, filepath.Join(dir, "fake.log"))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(stderr, c.wantErr) || !strings.Contains(stderr, "linux/amd64, linux/arm64 or linux/arm/v7") {
					t.Fatalf("images.sh: %v, stderr %q; want an error with %q naming the platforms", err, stderr, c.wantErr)
				}
				if callOf(log, "go", "build") != nil || callOf(log, "docker", "build") != nil {
					t.Errorf("built something for an unknown platform: %v", log)
				}
				return
			}
			if err != nil {
				t.Fatalf("images.sh: %v\n%s%s", err, out, stderr)
			}
			plat := strings.ReplaceAll(c.wantPlatform, "/", "-")
			goBuild := callOf(log, "go", "build")
			want := []string{"go", c.wantGo + " CGO_ENABLED=0", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", "compose/.build/bin/" + plat + "/", "./services/demo"}
			if !slices.Equal(goBuild, want) {
				t.Errorf("go build call\n got %q\nwant %q", goBuild, want)
			}
			dockerBuild := callOf(log, "docker", "build")
			if i := slices.Index(dockerBuild, "--platform"); i < 0 || dockerBuild[i+1] != c.wantPlatform {
				t.Errorf("docker build %q: want --platform %s", dockerBuild, c.wantPlatform)
			}
			// The context is the rootfs and the image's own binary, built for its platform.
			bin, err := os.ReadFile(filepath.Join(dir, "compose/.build/bin", plat, "demo"))
			if err != nil {
				t.Fatal(err)
			}
			if want := "app=" + strings.TrimSpace(string(bin)); dockerBuild[len(dockerBuild)-2] != "compose/.build/image" || dockerBuild[len(dockerBuild)-1] != want {
				t.Errorf("docker build %q: want the context compose/.build/image with %s", dockerBuild, want)
			}
			if foreign := c.platform != ""; foreign != strings.Contains(out, "docker save toolgate/demo:local | ssh HOST docker load") {
				t.Errorf("images for another machine: %v, but the docker save hint printed is %v:\n%s", foreign, !foreign, out)
			}
		})
	}
}

// Without a Go of go.mod's version, scripts/build.sh runs the very same
// `go build` inside the Go image: read-only source, no capabilities,
// caches in named volumes or the host directories asked for.
func TestBuildWithoutGoRunsTheSameBuildInAContainer(t *testing.T) {
	mods, cache := t.TempDir(), t.TempDir()
	cases := []struct {
		name      string
		env       []string
		want      []string // in the docker create call
		wantNot   []string
		wantImage string
	}{ // $PWD: where build.sh runs
		{name: "defaults", want: []string{"--user\t0:0", "--cap-drop\tALL", "no-new-privileges", "type=bind,src=$PWD,dst=/src,readonly",
			"type=volume,src=toolgate-go-mod,dst=/toolgate/mod", "type=volume,src=toolgate-go-build,dst=/toolgate/build", "GOOS=linux", "CGO_ENABLED=0"},
			wantNot: []string{"--network"}, wantImage: "golang:1.26.8-alpine"},
		{name: "offline from a module cache of the host", env: []string{"GOPROXY=off", "TOOLGATE_GOMODCACHE=" + mods + ":ro", "TOOLGATE_GO_IMAGE=mirror.lan/go:1.26.8"},
			want:      []string{"--network\tnone", "GOPROXY=off", "type=bind,src=" + mods + ",dst=/toolgate/mod,readonly", "type=volume,src=toolgate-go-build"},
			wantImage: "mirror.lan/go:1.26.8"},
		{name: "both caches on the host: built as you", env: []string{"TOOLGATE_GOMODCACHE=" + mods, "TOOLGATE_GOCACHE=" + cache},
			want:    []string{"--user\t" + strings.TrimSpace(idOut(t, "-u")) + ":" + strings.TrimSpace(idOut(t, "-g")), "type=bind,src=" + mods + ",dst=/toolgate/mod\t", "type=bind,src=" + cache + ",dst=/toolgate/build"},
			wantNot: []string{"readonly\t--mount\ttype=volume"}, wantImage: "golang:1.26.8-alpine"},
		{name: "another architecture", env: []string{"GOARCH=arm64"}, want: []string{"GOARCH=arm64"}, wantImage: "golang:1.26.8-alpine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := imagesStandIn(t)
			host, hostErr, err := runScript(t, dir, fakeTools(t, true), "scripts/build.sh", c.env, "bin/demo", "./services/demo")
			if err != nil {
				t.Fatalf("build.sh with Go: %v %s%s", err, host, hostErr)
			}
			hostBuild := callOf(calls(t, filepath.Join(dir, "fake.log")), "go", "build")
			if err := os.Remove(filepath.Join(dir, "fake.log")); err != nil {
				t.Fatal(err)
			}
			out, stderr, err := runScript(t, dir, fakeTools(t, false), "scripts/build.sh", append(c.env, "FAKE_IMAGE=present"), "bin/demo", "./services/demo")
			if err != nil {
				t.Fatalf("build.sh without Go: %v\n%s%s", err, out, stderr)
			}
			log := calls(t, filepath.Join(dir, "fake.log"))
			create := callOf(log, "docker", "create")
			i := slices.Index(create, c.wantImage)
			if i < 0 {
				t.Fatalf("docker create %q: want image %s", create, c.wantImage)
			}
			// The container's command is the host's go build but for where
			// its output goes (then copied out).
			inContainer := slices.Clone(create[i+1:])
			if o := slices.Index(inContainer, "-o"); o > 0 {
				inContainer[o+1] = "bin/demo"
			}
			if len(hostBuild) < 3 || !slices.Equal(inContainer, append([]string{"go"}, hostBuild[2:]...)) {
				t.Errorf("the container runs %q, the host %q: not the same build", inContainer, hostBuild)
			}
			line := strings.Join(create, "\t") + "\t"
			for _, w := range c.want {
				if w = strings.ReplaceAll(w, "$PWD", dir); !strings.Contains(line, w) {
					t.Errorf("docker create lacks %q:\n%s", w, line)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(line, w) {
					t.Errorf("docker create has %q:\n%s", w, line)
				}
			}
			if cp := callOf(log, "docker", "cp"); len(cp) < 4 || cp[3] != "bin/demo" {
				t.Errorf("docker cp %q: want the binary copied out to bin/demo", cp)
			}
			if rm := callOf(log, "docker", "rm"); rm == nil {
				t.Error("the build container is not removed")
			}
		})
	}
}

func idOut(t *testing.T, flag string) string {
	t.Helper()
	b, err := exec.Command("id", flag).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A host with no Go of go.mod's version and no way to get the Go image
// (none loaded, no registry) gets one line saying what to do, before
// anything is written.
func TestInstallWithNeitherGoNorGoImageSaysWhatToDo(t *testing.T) {
	cases := []struct {
		name, goVersion, why string
	}{
		{name: "no Go", why: "no Go 1.26.8 or newer on this host"},
		{name: "an old Go that may not switch (GOTOOLCHAIN=local)", goVersion: "go1.22.5", why: "the host's Go (go1.22.5) is older than go.mod's 1.26.8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			standIn(t, dir)
			env := []string{}
			if c.goVersion != "" {
				env = append(env, "FAKE_GOVERSION="+c.goVersion)
			}
			out, stderr, err := runScript(t, dir, fakeTools(t, c.goVersion != ""), "install.sh", env, "--demo")
			if err == nil {
				t.Fatalf("install.sh succeeded without Go or the Go image:\n%s", out)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 {
				t.Fatalf("install.sh said %d lines on stderr, want one:\n%s", len(lines), stderr)
			}
			for _, w := range []string{c.why, "golang:1.26.8-alpine", "no such host", "https://go.dev/dl/", "TOOLGATE_GO_IMAGE", "docker load", "./install.sh --no-build"} {
				if !strings.Contains(lines[0], w) {
					t.Errorf("the line lacks %q: %s", w, lines[0])
				}
			}
			if callOf(calls(t, filepath.Join(dir, "fake.log")), "docker", "pull") == nil {
				t.Error("install.sh did not try to pull the Go image")
			}
			if _, err := os.Stat(filepath.Join(dir, "secrets")); !os.IsNotExist(err) {
				t.Errorf("install.sh wrote secrets before it knew it can build: %v", err)
			}
		})
	}
}

// With --no-build, a host with neither Go nor the Go image (the images
// built elsewhere and docker load-ed) mints its tokens with the gateway of
// the loaded image; a gateway image for another architecture is not used,
// the gateway is built instead.
func TestInstallNoBuildTakesTheGatewayFromItsImage(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gateway := filepath.Join(t.TempDir(), "gateway")
	build := exec.Command(filepath.Join(repo, "scripts/build.sh"), gateway, "./services/gateway")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the gateway: %v %s", err, out)
	}
	// An arm64 ELF header: this amd64 host cannot run it.
	foreign := filepath.Join(t.TempDir(), "gateway-arm64")
	header := make([]byte, 64)
	copy(header, "\x7fELF\x02\x01\x01")
	header[16], header[18] = 2, byte(elfAArch64)
	if err := os.WriteFile(foreign, header, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, app string
		withGo    bool
	}{
		{name: "Docker only, the image runs here", app: gateway},
		{name: "the image is for another architecture", app: foreign, withGo: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			standIn(t, dir)
			path, env := fakeTools(t, false), []string{"FAKE_IMAGE=present", "FAKE_APP=" + c.app}
			if c.withGo {
				goBin, err := exec.LookPath("go")
				if err != nil {
					t.Fatal(err)
				}
				path = filepath.Dir(goBin) + ":" + path
				// This user's caches: the build above is not done again.
				caches, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
				if err != nil {
					t.Fatal(err)
				}
				dirs := strings.Fields(string(caches))
				env = append(env, "GOCACHE="+dirs[0], "GOMODCACHE="+dirs[1], "GOFLAGS="+os.Getenv("GOFLAGS"))
			}
			out, stderr, err := runScript(t, dir, path, "install.sh", env, "--demo", "--no-build")
			if err != nil {
				t.Fatalf("install.sh --no-build: %v\n%s%s", err, out, stderr)
			}
			if len(printedTokens(t, out)) != 2 {
				t.Errorf("install.sh printed no tokens for openwebui and demo-admin:\n%s", out)
			}
			log := calls(t, filepath.Join(dir, "fake.log"))
			if cp := callOf(log, "docker", "cp"); cp == nil || !strings.HasSuffix(cp[2], ":/app") {
				t.Errorf("install.sh did not copy the gateway out of its image: %v", log)
			}
			if create := callOf(log, "docker", "go"); create != nil {
				t.Errorf("install.sh built in the Go image: %q", create)
			}
			got, err := os.ReadFile(filepath.Join(dir, "compose/.build/bin/gateway"))
			if err != nil {
				t.Fatal(err)
			}
			if isForeign := len(got) == len(header); isForeign {
				t.Errorf("install.sh kept the gateway of another architecture")
			}
		})
	}
}

// elfAArch64 is ELF's e_machine of arm64 (debug/elf's EM_AARCH64).
const elfAArch64 = 183
