package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FindRepo walks up from the working directory to the module root.
func FindRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/toolgate/toolgate\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the toolgate repository (use -repo)")
		}
		dir = parent
	}
}

// buildScript builds a command the way scripts/images.sh builds the images'
// binaries; the flags live only there.
const buildScript = "scripts/build.sh"

// build compiles the command pkg of the checkout src with the build script
// of the checkout tools (the bench's own), so an older checkout measured
// beside this one is built the same way as today's images, whatever its own
// scripts did.
func build(ctx context.Context, tools, src, pkg, out string) error {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(tools, buildScript), out, pkg)
	cmd.Dir = src
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// proc is one process of the stack.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

// start runs bin with args and env (the parent's environment is not
// inherited), logging to dir/<name>.log, and waits until health answers 200
// (asked with the optional header name/value pairs, e.g. the OPA sidecar's
// Authorization).
func start(ctx context.Context, dir, name, bin string, args, env []string, health string, header ...string) (*proc, error) {
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1), log: log}
	go func() { p.done <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-p.done:
			p.done <- err
			return nil, fmt.Errorf("%s exited before it was healthy: %v (log: %s)", name, err, log.Name())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, health, nil)
		if err != nil {
			p.stop()
			return nil, err
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.stop()
			return nil, fmt.Errorf("%s not healthy at %s within 30s (log: %s)", name, health, log.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop ends the process with SIGTERM, then SIGKILL.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
}

// rss returns the process's resident set size (VmRSS) and its two parts:
// anonymous memory (heap, stacks) and file pages (mostly the binary's own
// code and data, shared with every process that maps the same file).
func (p *proc) rss() (vm, anon, file int64, err error) {
	select {
	case werr := <-p.done:
		p.done <- werr
		return 0, 0, 0, fmt.Errorf("%s has exited (%v); its log: %s", p.name, werr, p.log.Name())
	default:
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	fields := map[string]*int64{"VmRSS:": &vm, "RssAnon:": &anon, "RssFile:": &file}
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		for name, dst := range fields {
			if v, ok := strings.CutPrefix(sc.Text(), name); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				if err != nil {
					return 0, 0, 0, err
				}
				*dst = kb << 10
				found++
			}
		}
	}
	if found < len(fields) {
		return 0, 0, 0, errors.New("no VmRSS, RssAnon or RssFile in /proc status")
	}
	return vm, anon, file, nil
}

// cpu returns the time the process's threads have spent on a CPU
// (/proc/<pid>/task/*/schedstat, in nanoseconds rather than the 10 ms
// ticks of /proc/<pid>/stat). A Go program keeps its threads, so a thread
// that exits early does not hide time from a difference of two readings.
func (p *proc) cpu() (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("%s: no schedstat (%v)", p.name, err)
	}
	var total time.Duration
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited between the two calls
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b) + " x")[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", p.name, f, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// cpuTime is the CPU time of procs together.
func cpuTime(procs []*proc) (time.Duration, error) {
	var total time.Duration
	for _, p := range procs {
		d, err := p.cpu()
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// stack is every process of one run, stopped together.
type stack struct {
	dir   string
	procs []*proc
}

func (s *stack) start(ctx context.Context, name, bin string, args, env []string, health string, header ...string) (*proc, error) {
	p, err := start(ctx, s.dir, name, bin, args, env, health, header...)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, p)
	return p, nil
}

func (s *stack) stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].stop()
	}
	s.procs = nil
}

// secretFile writes a secret (mode 0600) and returns its path.
func (s *stack) secretFile(name, value string) (string, error) {
	p := filepath.Join(s.dir, name)
	return p, os.WriteFile(p, []byte(value+"\n"), 0o600)
}
