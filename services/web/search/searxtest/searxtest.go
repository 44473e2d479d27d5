// Package searxtest runs a real metasearch engine for tests: Debian's searx
// package (SearXNG's predecessor, same GET /search?format=json API) as a
// child process on loopback. Its settings.yml is generated from the
// package's example with one change that matters: the only engines are
// searx's json_engine pointed at a fixture server this package runs on
// loopback too. Nothing leaves the machine, and every answer is real searx
// output: searx's own ranking, merging of equal URLs, HTML stripping and
// its unresponsive_engines list (one engine always fails with HTTP 500).
//
// searx 1.1.0 has no search.formats setting: it always serves JSON, so
// SearXNG's 403 for a disabled format cannot come from it (fakesearx
// answers that one like SearXNG does).
package searxtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// Where Debian's package puts what the tests need.
const (
	Command         = "searx-run"
	ExampleSettings = "/usr/share/doc/searx/examples/settings.yml"
	// RequireEnv set to 1 (scripts/test.sh does, once searx is installed)
	// turns a missing searx into a failure instead of a skip.
	RequireEnv = "TOOLGATE_REQUIRE_SEARX"
)

// The engines searx is configured with.
const (
	EngineAlpha  = "alpha"
	EngineBeta   = "beta"
	EngineBroken = "broken"
	// BrokenReason is what searx 1.1.0 reports for an engine whose
	// upstream answers 5xx.
	BrokenReason = "HTTP error"
)

// ErrNotInstalled means searx is not on this machine.
var ErrNotInstalled = errors.New("searx is not installed (scripts/test.sh installs it: apt-get install searx)")

// Doc is one result a fixture engine returns when every word of the query
// occurs in its title or content.
type Doc struct {
	URL, Title, Content string
}

// Corpus is what the fixture engines know. Some entries overlap on
// purpose: alpha's and beta's release pages differ only in a fragment and
// an explicit default port, which searx keeps apart and the client's
// de-duplication must merge; both engines return the install page with
// the same URL, which searx merges itself. One beta result is a
// javascript: URL, which must never reach a model.
var Corpus = map[string][]Doc{
	EngineAlpha: {
		{"https://nimbus.example/releases/3.2#whats-new", "Nimbus 3.2 released", "Nimbus 3.2 brings offline sync and a new <b>scheduler</b>."},
		{"https://docs.nimbus.example/install", "Installing Nimbus", "How to install Nimbus 3.2 on Linux, macOS and Windows."},
		{"https://forum.nimbus.example/t/upgrade-to-3-2", "Upgrade notes for Nimbus 3.2", "Forum thread: upgrading Nimbus from 3.1 to 3.2."},
	},
	EngineBeta: {
		{"https://nimbus.example:443/releases/3.2", "Nimbus 3.2 is out", "Release notes for Nimbus 3.2."},
		{"https://docs.nimbus.example/install", "Install Nimbus", "Install Nimbus 3.2 step by step."},
		{"https://blog.example.net/nimbus-3-2-review", "A week with Nimbus 3.2", "A review of Nimbus 3.2 after a week of daily use."},
		{"javascript:alert(document.cookie)", "Nimbus 3.2 free download", "Click to download Nimbus 3.2."},
	},
}

// Searx is a running searx and its fixture engines.
type Searx struct {
	// URL is searx's base URL (http://127.0.0.1:port).
	URL string

	fixture *httptest.Server
	cmd     *exec.Cmd
	exited  chan struct{}
	dir     string
	logPath string

	mu      sync.Mutex
	queries map[string][]string
}

// Start generates the settings, starts the fixture engines and searx, and
// waits until searx answers. It returns ErrNotInstalled when searx is
// absent.
func Start() (*Searx, error) {
	bin, err := exec.LookPath(Command)
	if err != nil {
		return nil, ErrNotInstalled
	}
	example, err := os.ReadFile(ExampleSettings)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
	}
	s := &Searx{queries: map[string][]string{}, exited: make(chan struct{})}
	s.fixture = httptest.NewServer(http.HandlerFunc(s.engine))
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if s.dir, err = os.MkdirTemp("", "searxtest-"); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	settings, err := Settings(example, port, s.fixture.URL)
	if err != nil {
		return nil, err
	}
	settingsPath := filepath.Join(s.dir, "settings.yml")
	if err := os.WriteFile(settingsPath, settings, 0o600); err != nil {
		return nil, err
	}
	s.logPath = filepath.Join(s.dir, "searx.log")
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	s.cmd = exec.Command(bin)
	// A minimal environment: no proxy settings of the host reach searx's
	// HTTP client, so its engines talk to the loopback fixture directly.
	s.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir, "LANG=C.UTF-8",
		"SEARX_SETTINGS_PATH=" + settingsPath, "PYTHONDONTWRITEBYTECODE=1",
		"NO_PROXY=*", "no_proxy=*",
	}
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", Command, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	if err := s.waitUp(60 * time.Second); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// Settings turns searx's example settings into a loopback-only instance:
// the given port and a fresh secret key, engines that are never suspended
// after a failure (so every search reports the broken one), the JSON
// format listed as SearXNG needs it, and only the fixture engines.
func Settings(example []byte, port int, fixtureURL string) ([]byte, error) {
	var s map[string]any
	if err := yaml.Unmarshal(example, &s); err != nil {
		return nil, fmt.Errorf("searx example settings: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	section := func(name string) map[string]any {
		m, _ := s[name].(map[string]any)
		if m == nil {
			m = map[string]any{}
			s[name] = m
		}
		return m
	}
	server := section("server")
	server["port"] = port
	server["bind_address"] = "127.0.0.1"
	server["secret_key"] = hex.EncodeToString(key)
	server["image_proxy"] = false
	search := section("search")
	search["ban_time_on_fail"] = 0
	search["max_ban_time_on_fail"] = 0
	search["formats"] = []string{"html", "json"}
	section("general")["debug"] = false
	section("outgoing")["request_timeout"] = 3.0
	var engines []any
	for i, name := range []string{EngineAlpha, EngineBeta, EngineBroken} {
		engines = append(engines, map[string]any{
			"name": name, "engine": "json_engine", "shortcut": "fx" + strconv.Itoa(i),
			"categories": "general", "enable_http": true, "timeout": 3.0,
			"search_url":    fixtureURL + "/engines/" + name + "?q={query}",
			"results_query": "items", "url_query": "link", "title_query": "name", "content_query": "text",
		})
	}
	s["engines"] = engines
	return yaml.Marshal(s)
}

// engine answers as a JSON search API: the corpus entries matching q, or
// HTTP 500 for the broken engine.
func (s *Searx) engine(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/engines/")
	q := r.URL.Query().Get("q")
	s.mu.Lock()
	s.queries[name] = append(s.queries[name], q)
	s.mu.Unlock()
	docs, known := Corpus[name]
	if !known {
		http.Error(w, "engine failed", http.StatusInternalServerError)
		return
	}
	type item struct {
		Link string `json:"link"`
		Name string `json:"name"`
		Text string `json:"text"`
	}
	items := []item{}
	for _, d := range docs {
		if Matches(d, q) {
			items = append(items, item{d.URL, d.Title, d.Content})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"items": items})
}

// Matches reports whether every word of q occurs in d's title or content.
func Matches(d Doc, q string) bool {
	text := strings.ToLower(d.Title + " " + d.Content)
	words := strings.Fields(strings.ToLower(q))
	for _, w := range words {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return len(words) > 0
}

// Queries returns the queries an engine received, oldest first.
func (s *Searx) Queries(engine string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries[engine]...)
}

// Log returns the end of searx's output, for failure messages.
func (s *Searx) Log() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (s *Searx) waitUp(within time.Duration) error {
	deadline := time.Now().Add(within)
	c := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("%s exited during start-up:\n%s", Command, s.Log())
		default:
		}
		if resp, err := c.Get(s.URL + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %s:\n%s", Command, within, s.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close stops searx (its whole process group) and the fixture and removes
// the settings.
func (s *Searx) Close() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
			<-s.exited
		}
	}
	if s.fixture != nil {
		s.fixture.Close()
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Once starts one searx for a whole test binary, on first use, so a
// package's tests share it (start-up takes seconds). Close it from
// TestMain after m.Run.
type Once struct {
	once sync.Once
	sx   *Searx
	err  error
}

// Get returns the shared searx, skipping the test when searx is not
// installed (unless RequireEnv is set) and failing it when searx does not
// start.
func (o *Once) Get(t testing.TB) *Searx {
	t.Helper()
	o.once.Do(func() { o.sx, o.err = Start() })
	switch {
	case errors.Is(o.err, ErrNotInstalled) && os.Getenv(RequireEnv) != "1":
		t.Skipf("skipping the tests against a real metasearch engine: %v", o.err)
	case o.err != nil:
		t.Fatalf("searx: %v", o.err)
	}
	return o.sx
}

// Close stops the shared searx, if it was started.
func (o *Once) Close() {
	if o.sx != nil {
		o.sx.Close()
	}
}

// Raw runs a search against searx directly and returns its JSON answer
// decoded loosely, so tests can compare the client's view with searx's.
func (s *Searx) Raw(q string) (map[string]any, error) {
	resp, err := http.Get(s.URL + "/search?" + url.Values{"q": {q}, "format": {"json"}}.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("searx answered %d", resp.StatusCode)
	}
	var out map[string]any
	return out, json.NewDecoder(resp.Body).Decode(&out)
}
