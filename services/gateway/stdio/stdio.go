// Package stdio implements the gateway's stdio subcommand: a bridge for MCP
// clients that can only start a local command (Claude Desktop, Cursor). It
// reads newline-delimited JSON-RPC messages from stdin, forwards each one to
// the gateway's MCP Streamable HTTP endpoint with the caller's bearer token,
// and writes every JSON-RPC message that comes back as one line on stdout.
// stdout carries protocol only; diagnostics go to the logger.
package stdio

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

const (
	// DefaultMaxLine bounds one message read from stdin.
	DefaultMaxLine = 4 << 20
	// defaultMaxResponse bounds one message (or one JSON body) from the
	// gateway; the gateway caps tool results well below this.
	defaultMaxResponse = 32 << 20
	// defaultDrainTimeout bounds the wait for in-flight requests once stdin
	// has closed; a client that closed stdin is shutting down.
	defaultDrainTimeout = 10 * time.Second
	// maxInFlight bounds concurrent requests; further stdin lines wait.
	maxInFlight = 32
	// messageTimeout bounds the POST of a notification or response, which
	// the gateway answers with 202 at once; it keeps a hung gateway from
	// stalling stdin for ever.
	messageTimeout = 30 * time.Second
	// sessionEndTimeout bounds the DELETE that ends a session on exit.
	sessionEndTimeout = 2 * time.Second
)

// Config configures the bridge.
type Config struct {
	// URL is the gateway's MCP endpoint, e.g. http://127.0.0.1:8080/mcp or
	// http://127.0.0.1:8080/mcp/<service>.
	URL string
	// Token is the caller's bearer token. It is sent only in the
	// Authorization header and never logged or written to stdout.
	Token string
	// HTTPClient sends the requests. Nil means a client with a pooled
	// transport sized for concurrent calls that does not follow redirects.
	HTTPClient *http.Client
	// Logger receives diagnostics (stdout is reserved for protocol). Nil
	// means a text handler on os.Stderr.
	Logger *slog.Logger
	// MaxLine bounds one stdin message in bytes; 0 means DefaultMaxLine.
	MaxLine int

	// Unexported knobs so tests can exercise the bounds cheaply.
	maxResponse  int
	drainTimeout time.Duration
}

// Run bridges stdin to the gateway until stdin closes, then waits (bounded)
// for in-flight requests, ends the MCP session if there is one, and returns
// nil. If ctx is cancelled first, in-flight requests are abandoned and
// ctx's error is returned; a goroutine blocked reading stdin then stays
// until stdin closes, since an io.Reader cannot be interrupted.
func Run(ctx context.Context, cfg Config, stdin io.Reader, stdout io.Writer) error {
	b, err := newBridge(cfg, stdout)
	if err != nil {
		return err
	}
	maxLine := cfg.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	drainTimeout := cfg.drainTimeout
	if drainTimeout <= 0 {
		drainTimeout = defaultDrainTimeout
	}

	lines := make(chan stdinLine)
	stop := make(chan struct{})
	defer close(stop)
	go readStdin(stdin, maxLine, lines, stop)

	reqCtx, cancelRequests := context.WithCancel(ctx)
	defer cancelRequests()
	var (
		wg       sync.WaitGroup
		inFlight atomic.Int64
	)
	sem := make(chan struct{}, maxInFlight)

	abort := func() error {
		cancelRequests()
		wg.Wait()
		return fmt.Errorf("stdio bridge: %w", ctx.Err())
	}

	var readErr error
loop:
	for {
		select {
		case <-ctx.Done():
			return abort()
		case l, ok := <-lines:
			if !ok {
				break loop
			}
			if l.err != nil {
				if !errors.Is(l.err, errLineTooLong) {
					readErr = l.err
					break loop
				}
				b.log.Warn("stdin message too long; skipped", "limit_bytes", maxLine)
				b.out.writeLine(errorResponse(nil, codeParseError,
					fmt.Sprintf("Parse error: message exceeds %d bytes", maxLine)))
				continue
			}
			in, rerr := parseInbound(l.data)
			if rerr != nil {
				b.log.Warn("invalid message on stdin", "code", rerr.code)
				b.out.writeLine(errorResponse(rerr.id, rerr.code, rerr.message))
				continue
			}
			if len(in.requests) == 0 || in.isInitialize() {
				// Notifications and responses are answered with 202 at once;
				// sending them in order keeps e.g. notifications/initialized
				// ahead of the requests that follow it. initialize waits for
				// its answer too: it carries the session id every later
				// message needs.
				mctx, cancel := context.WithTimeout(reqCtx, messageTimeout)
				b.forward(mctx, in)
				cancel()
				continue
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return abort()
			}
			wg.Add(1)
			inFlight.Add(1)
			go func() {
				defer func() { <-sem; inFlight.Add(-1); wg.Done() }()
				b.forward(reqCtx, in)
			}()
		}
	}

	if readErr != nil {
		b.log.Error("reading stdin failed; shutting down", "err", readErr)
	} else {
		b.log.Debug("stdin closed; waiting for in-flight requests", "in_flight", inFlight.Load())
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
		b.log.Warn("abandoning in-flight requests after stdin closed",
			"in_flight", inFlight.Load(), "waited", drainTimeout)
		cancelRequests()
		<-done
	case <-ctx.Done():
		cancelRequests()
		<-done
	}
	b.endSession(ctx)
	if readErr != nil {
		return fmt.Errorf("stdio bridge: reading stdin: %w", readErr)
	}
	return nil
}

// stdinLine is one line from stdin, or the error that ended reading.
type stdinLine struct {
	data []byte
	err  error
}

// readStdin sends non-empty stdin lines to out until EOF (then it closes
// out), a read error (sent, then closed), or stop.
func readStdin(stdin io.Reader, maxLine int, out chan<- stdinLine, stop <-chan struct{}) {
	defer close(out)
	r := bufio.NewReaderSize(stdin, 64<<10)
	for {
		line, err := readLine(r, maxLine)
		if errors.Is(err, io.EOF) {
			return
		}
		item := stdinLine{data: trimSpace(line), err: err}
		if err == nil && len(item.data) == 0 {
			continue
		}
		select {
		case out <- item:
		case <-stop:
			return
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// bridge holds what the forwarding goroutines share.
type bridge struct {
	url         string
	redactedURL string
	token       string
	client      *http.Client
	log         *slog.Logger
	out         *lineWriter
	maxResponse int

	// resumeMu lets one request at a time re-open an expired session.
	resumeMu sync.Mutex

	mu              sync.Mutex
	sessionID       string // Mcp-Session-Id from the initialize response
	protocolVersion string // negotiated in initialize
	// initBody is the client's initialize request, replayed to open a new
	// session when the gateway forgets the old one (restart, idle expiry).
	initBody []byte
	// paramTools holds the tools (learned from 2026-07-28 tools/list
	// results) whose arguments must be mirrored into Mcp-Param-* headers.
	paramTools map[string]*mcp.Tool
}

func newBridge(cfg Config, stdout io.Writer) (*bridge, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("stdio bridge: gateway URL must be an absolute http(s) URL such as http://127.0.0.1:8080/mcp")
	}
	if !headerSafe(cfg.Token) {
		return nil, errors.New("stdio bridge: token contains characters not allowed in an HTTP header")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	client := cfg.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	maxResponse := cfg.maxResponse
	if maxResponse <= 0 {
		maxResponse = defaultMaxResponse
	}
	if cfg.Token == "" {
		log.Warn("no token configured; the gateway will most likely reject every request")
	}
	return &bridge{
		url:         cfg.URL,
		redactedURL: u.Redacted(),
		token:       cfg.Token,
		client:      client,
		log:         log,
		out:         &lineWriter{w: stdout, log: log},
		maxResponse: maxResponse,
		paramTools:  make(map[string]*mcp.Tool),
	}, nil
}

// defaultHTTPClient pools enough connections for the concurrency bound (the
// stock transport keeps 2 per host, which churns sockets under parallel
// calls) and refuses redirects so the token goes only where configured.
func defaultHTTPClient() *http.Client {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{}
	}
	t.MaxIdleConnsPerHost = maxInFlight
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// headerSafe reports whether s can be sent as an HTTP header value verbatim
// (visible ASCII and spaces only).
func headerSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
