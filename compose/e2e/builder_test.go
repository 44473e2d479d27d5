//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// A host without Go: install.sh and scripts/images.sh build inside a Go
// image. No registry is reachable here, so the image stands in for the
// official golang one, made from this host's toolchain the way that one is
// laid out (FROM scratch: the toolchain in /usr/local/go, CA certificates,
// a /tmp; no shell), and the modules come from this host's module cache,
// mounted read-only with GOPROXY=off. The build cache is the host's too, so
// the container compiles what the host would (same toolchain, same flags).

var (
	builderOnce sync.Once
	builderRef  string
	builderErr  error
)

// builderImage returns the stand-in for golang:<version>, built once (and
// kept, by the toolchain's version and its VERSION file's digest).
func builderImage(t *testing.T) string {
	t.Helper()
	builderOnce.Do(func() { builderRef, builderErr = buildBuilderImage() })
	if builderErr != nil {
		t.Fatalf("build the Go image: %v", builderErr)
	}
	return builderRef
}

func buildBuilderImage() (string, error) {
	goroot, err := goEnv("GOROOT")
	if err != nil {
		return "", err
	}
	version, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "", err
	}
	ref := fmt.Sprintf("toolgate-e2e/go:%x", sha256.Sum256(version))[:len("toolgate-e2e/go:")+12]
	if exec.Command("docker", "image", "inspect", ref).Run() == nil {
		return ref, nil
	}
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		return "", err
	}
	// The context as a tar stream: no copy of the toolchain on disk.
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := addTree(tw, goroot, "go", func(rel string) bool { return rel == "test" || rel == "doc" || rel == "api" })
		for _, f := range []struct {
			name string
			mode int64
			body []byte
		}{
			{"Dockerfile", 0o644, []byte("FROM scratch\nCOPY go /usr/local/go\nCOPY etc /etc\nCOPY tmp /tmp\n" +
				"ENV PATH=/usr/local/go/bin GOTOOLCHAIN=local\n")},
			{"etc/ssl/certs/ca-certificates.crt", 0o644, ca},
		} {
			if err == nil {
				err = tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body)), Typeflag: tar.TypeReg})
			}
			if err == nil {
				_, err = tw.Write(f.body)
			}
		}
		if err == nil {
			err = tw.WriteHeader(&tar.Header{Name: "tmp/", Mode: 0o1777, Typeflag: tar.TypeDir})
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	cmd := exec.Command("docker", "build", "--quiet", "-t", ref, "-")
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	cmd.Stdin = pr
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("docker build: %v\n%s", err, out)
	}
	return ref, nil
}

// addTree writes dir's files under name into tw, leaving out the top-level
// entries skip says.
func addTree(tw *tar.Writer, dir, name string, skip func(string) bool) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && rel != "." && !strings.Contains(rel, "/") && skip(rel) {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(filepath.Join(name, rel))
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	return strings.TrimSpace(string(out)), err
}

// withoutGo is this process's environment for a host without Go: a PATH
// with no go on it, and the Go image (the stand-in) with this host's
// caches. Docker Compose must be there already (ensureCompose).
func withoutGo(t *testing.T) []string {
	t.Helper()
	modcache, err := goEnv("GOMODCACHE")
	if err != nil {
		t.Fatal(err)
	}
	gocache, err := goEnv("GOCACHE")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err != nil {
			dirs = append(dirs, d)
		}
	}
	path := strings.Join(dirs, string(filepath.ListSeparator))
	check := exec.Command("bash", "-c", "command -v go")
	check.Env = []string{"PATH=" + path}
	if out, err := check.Output(); err == nil {
		t.Fatalf("the PATH without go still finds %s", out)
	}
	env := slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, "PATH=") || strings.HasPrefix(e, "GOROOT=") || strings.HasPrefix(e, "GOPROXY=")
	})
	return append(env, "PATH="+path, "TOOLGATE_GO_IMAGE="+builderImage(t), "GOPROXY=off",
		"TOOLGATE_GOMODCACHE="+modcache+":ro", "TOOLGATE_GOCACHE="+gocache)
}

// ensureCompose makes sure `docker compose` works before install.sh runs
// without Go (which could not build Compose): a throw-away `install.sh
// --down` with Go on the PATH builds it as it does for any user with Go.
func ensureCompose(ctx context.Context, t *testing.T) {
	t.Helper()
	if exec.Command("docker", "compose", "version").Run() == nil {
		return
	}
	dir := t.TempDir()
	if out, err := run(ctx, filepath.Join(repoRoot, "install.sh"), "--down", "--project", "tge2ecompose", "--env-file", filepath.Join(dir, "env"), "--secrets", filepath.Join(dir, "secrets")); err != nil {
		t.Fatalf("install.sh building Compose: %v\n%s", err, out)
	}
}

// runEnv is run with the environment env.
func runEnv(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoRoot
	cmd.Env = env
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

// The images are built for arm64 on this amd64 engine without an emulator
// and hold arm64 binaries; those and the amd64 ones of the same commit —
// one built by the host's Go, one inside the Go image — come from the same
// flags, and the host's and the container's amd64 builds are the same bytes.
func TestImagesForArm64(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker engine: ", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	tag := fmt.Sprintf("e2earm%d", time.Now().UnixNano()%1e9)
	image := "toolgate/demo:" + tag
	t.Cleanup(func() { _, _ = run(context.Background(), "docker", "image", "rm", image) })

	// The ordinary path: the host's Go, for another platform.
	env := append(os.Environ(), "TOOLGATE_TAG="+tag, "TOOLGATE_PLATFORM=linux/arm64")
	if out, err := runEnv(ctx, env, filepath.Join(repoRoot, "scripts/images.sh"), "demo"); err != nil {
		t.Fatalf("images.sh for linux/arm64: %v\n%s", err, out)
	} else if !strings.Contains(out, "docker save toolgate/demo:"+tag+" | ssh HOST docker load") {
		t.Errorf("images.sh did not say how to carry the arm64 images over:\n%s", out)
	}
	if p, err := run(ctx, "docker", "image", "inspect", "-f", "{{.Os}}/{{.Architecture}}", image); err != nil || strings.TrimSpace(p) != "linux/arm64" {
		t.Fatalf("image %s is for %q (%v), want linux/arm64", image, p, err)
	}
	dir := t.TempDir()
	arm64 := filepath.Join(dir, "demo-arm64")
	// Created, never started: it could not run here. (Docker warns on
	// stderr that its platform is not this engine's.)
	created, err := exec.CommandContext(ctx, "docker", "create", image).Output()
	if err != nil {
		t.Fatalf("docker create: %v", err)
	}
	cid := strings.TrimSpace(string(created))
	out, err := run(ctx, "docker", "cp", cid+":/app", arm64)
	_, _ = run(context.Background(), "docker", "rm", cid)
	if err != nil {
		t.Fatalf("docker cp: %v %s", err, out)
	}

	// The Go image's path, for this platform (no GOARCH: the host's).
	amd64 := filepath.Join(dir, "demo-amd64")
	if out, err := runEnv(ctx, withoutGo(t), filepath.Join(repoRoot, "scripts/build.sh"), amd64, "./services/demo"); err != nil {
		t.Fatalf("build.sh in the Go image: %v\n%s", err, out)
	}
	host := filepath.Join(dir, "demo-host")
	if out, err := run(ctx, filepath.Join(repoRoot, "scripts/build.sh"), host, "./services/demo"); err != nil {
		t.Fatalf("build.sh with the host's Go: %v\n%s", err, out)
	}

	staticFor(t, arm64, elf.EM_AARCH64)
	staticFor(t, amd64, elf.EM_X86_64)
	a, b := buildSettings(t, arm64), buildSettings(t, amd64)
	if !slices.Equal(a, b) {
		t.Errorf("the arm64 and amd64 binaries were built differently:\narm64 %q\namd64 %q", a, b)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true", "GOOS=linux"} {
		if !slices.Contains(a, want) {
			t.Errorf("build settings %q lack %s", a, want)
		}
	}
	if h, c := digest(t, host), digest(t, amd64); h != c {
		t.Errorf("the host's Go and the Go image built different bytes: %s, %s", h, c)
	}
	t.Logf("arm64 image, Go-image build and host build of demo: %s", time.Since(start).Round(time.Second))
}

// staticFor fails unless path is a static, stripped ELF executable for machine.
func staticFor(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine || f.Class != elf.ELFCLASS64 || f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		t.Errorf("%s: %v %v %v, want a 64-bit Linux %v executable", filepath.Base(path), f.Machine, f.Class, f.OSABI, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is dynamically linked (%v): not CGO_ENABLED=0", filepath.Base(path), p.Type)
		}
	}
	for _, s := range f.Sections {
		if s.Name == ".symtab" || strings.HasPrefix(s.Name, ".debug_") {
			t.Errorf("%s has section %s: not stripped (-ldflags=-s -w)", filepath.Base(path), s.Name)
		}
	}
}

// buildSettings is the build info of path that does not name the target
// (Go version, module and dependencies with sums, every flag), one a line.
func buildSettings(t *testing.T, path string) []string {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"go " + info.GoVersion, "main " + info.Main.Path}
	for _, d := range info.Deps {
		out = append(out, "dep "+d.Path+" "+d.Version+" "+d.Sum)
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "GOARCH", "GOAMD64", "GOARM64":
		default:
			out = append(out, s.Key+"="+s.Value)
		}
	}
	return out
}

func digest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}
