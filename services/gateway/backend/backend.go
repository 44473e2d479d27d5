// Package backend is the gateway's connection to one tool service: an MCP
// client session that is opened lazily, reused for every call, re-opened
// after a failure, and bounded in concurrency.
package backend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Config describes one tool service.
type Config struct {
	Name string
	// URL is the service's MCP endpoint, e.g. http://arr:8000/mcp.
	URL string
	// Token is the service token the gateway presents.
	Token []byte
	// MaxConcurrent bounds calls in flight; more answer busy at once.
	MaxConcurrent int
	// MaxResponseBytes bounds what CallRaw reads of one answer; 0 means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int
	// HTTPClient is shared by all backends (tuned transport).
	HTTPClient *http.Client
	Logger     *slog.Logger
	// OnListChanged runs when the service announces a new tool list.
	OnListChanged func(service string)
}

// Backend is one tool service as the gateway sees it.
type Backend struct {
	cfg Config
	log *slog.Logger
	sem chan struct{}
	// life outlives single calls: the session's notification stream runs
	// under it until Close.
	life context.Context
	stop context.CancelFunc

	mu           sync.Mutex
	cli          *client.Client
	instructions string // from the service's last initialize
	// What CallRaw sends on the session cli opened: its id (empty for a
	// stateless service) and the negotiated protocol version.
	sessionID, version string

	nextID atomic.Int64
}

// New returns a Backend; it connects on first use.
func New(cfg Config) *Backend {
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = 16
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = NewHTTPClient()
	}
	life, stop := context.WithCancel(context.Background())
	return &Backend{cfg: cfg, log: cfg.Logger.With("service", cfg.Name), sem: make(chan struct{}, cfg.MaxConcurrent), life: life, stop: stop}
}

// NewHTTPClient returns a client tuned for many concurrent calls to a few
// hosts (the default keeps two idle connections per host, which under load
// leaves thousands of sockets in TIME_WAIT).
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	// Refuse to follow a service's redirects: a service never redirects.
	return &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
}

// Instructions returns the guidance the service sent at its last
// initialize ("" before the first connection).
func (b *Backend) Instructions() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.instructions
}

// Name is the service name.
func (b *Backend) Name() string { return b.cfg.Name }

func (b *Backend) session(ctx context.Context) (*client.Client, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cli != nil {
		return b.cli, nil
	}
	tr, err := transport.NewStreamableHTTP(b.cfg.URL,
		transport.WithHTTPBasicClient(b.cfg.HTTPClient),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + string(b.cfg.Token)}),
		//lint:ignore SA1019 services on session revisions announce tools/list_changed on this stream
		transport.WithContinuousListening(),
		transport.WithHTTPLogger(slog.New(quietListening{b.log.Handler()})),
	)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", b.cfg.Name, err)
	}
	// Sessions on the 2025-11-25 revision are the cheapest measured upstream
	// mode, and they carry tools/list_changed notifications.
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) && b.cfg.OnListChanged != nil {
			go b.cfg.OnListChanged(b.cfg.Name)
		}
	})
	if err := c.Start(b.life); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("service %s: start: %w", b.cfg.Name, err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	req.Params.ClientInfo = mcp.Implementation{Name: "toolgate-gateway", Version: "1"}
	res, err := c.Initialize(ctx, req)
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("service %s: initialize: %w", b.cfg.Name, err)
	}
	b.cli, b.instructions = c, res.Instructions
	b.sessionID, b.version = c.GetSessionId(), res.ProtocolVersion
	return c, nil
}

// reset drops a broken session so the next call opens a new one.
func (b *Backend) reset(c *client.Client) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cli == c {
		_ = c.Close()
		b.cli = nil
	}
}

// Close ends the session.
func (b *Backend) Close() error {
	b.stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cli == nil {
		return nil
	}
	err := b.cli.Close()
	b.cli = nil
	return err
}

// ListTools returns the service's tools.
func (b *Backend) ListTools(ctx context.Context) ([]mcp.Tool, error) {
	var tools []mcp.Tool
	err := b.do(ctx, true, func(c *client.Client) error {
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		if err != nil {
			return err
		}
		tools = res.Tools
		return nil
	})
	return tools, err
}

// Call runs one tool. meta goes into the request's _meta (the approval for
// a write). retry says whether a failed call may be sent again on a fresh
// session; only reads are retried, and only once.
func (b *Backend) Call(ctx context.Context, tool string, args any, meta map[string]any, retry bool) (*mcp.CallToolResult, error) {
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	default:
		return nil, toolerr.New(toolerr.Busy, "service %s has too many calls in flight; try again shortly", b.cfg.Name)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if meta != nil {
		req.Params.Meta = &mcp.Meta{AdditionalFields: meta}
	}
	var res *mcp.CallToolResult
	err := b.do(ctx, retry, func(c *client.Client) error {
		var err error
		res, err = c.CallTool(ctx, req)
		return err
	})
	return res, err
}

func (b *Backend) do(ctx context.Context, retry bool, f func(*client.Client) error) error {
	attempts := 1
	if retry {
		attempts = 2
	}
	var err error
	for i := 0; i < attempts; i++ {
		var c *client.Client
		c, err = b.session(ctx)
		if err == nil {
			err = f(c)
			if err == nil {
				return nil
			}
			if !transportFailure(err) {
				return b.classify(ctx, err)
			}
			b.log.Warn("service call failed; reopening session", "error", err)
			b.reset(c)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return b.classify(ctx, err)
}

// transportFailure reports whether err came from the connection rather than
// from a JSON-RPC error the service answered.
func transportFailure(err error) bool {
	var te *transport.Error
	return errors.As(err, &te)
}

func (b *Backend) classify(ctx context.Context, err error) error {
	var te *toolerr.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return toolerr.Wrap(toolerr.Timeout, err, "service %s did not answer before the call's deadline", b.cfg.Name)
	case errors.Is(err, context.Canceled):
		return toolerr.Wrap(toolerr.Timeout, err, "the call was cancelled")
	case errors.Is(err, transport.ErrUnauthorized), errors.Is(err, transport.ErrAuthorizationRequired):
		// mcp-go v1.2 answers a 401 with ErrAuthorizationRequired.
		return toolerr.Wrap(toolerr.AuthFailed, err, "service %s rejected the gateway's service token; check the token files", b.cfg.Name)
	case !transportFailure(err):
		// mcp-go's client gives a -32602 answer as ErrInvalidParams
		// wrapped with the service's message.
		if errors.Is(err, mcp.ErrInvalidParams) && isUnknownTool(mcp.INVALID_PARAMS, err.Error()) {
			return b.gone(toolGone{err})
		}
		return toolerr.Wrap(toolerr.InvalidArgument, err, "service %s refused the request", b.cfg.Name)
	default:
		return b.unreachable(err)
	}
}

// unreachable words a connection failure, saying so when the service is
// not running at all.
func (b *Backend) unreachable(err error) error {
	if isNotRunning(err) {
		return toolerr.Wrap(toolerr.UpstreamUnavailable, notRunning{err},
			"service %s is not running (its container is stopped or removed); its tools are withdrawn until it runs again", b.cfg.Name)
	}
	return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "service %s is unreachable; its tools are unavailable until it is back", b.cfg.Name)
}

// gone words a service's answer that it no longer has the tool called.
func (b *Backend) gone(err toolGone) error {
	return toolerr.Wrap(toolerr.NotFound, err,
		"service %s no longer offers this tool (it runs with other settings now); list the tools again", b.cfg.Name)
}

// quietListening lowers mcp-go's "server does not support listening" from
// error to debug: toolkit services are stateless and answer the listening
// GET with 405 by design, which is no fault to alarm an operator with.
type quietListening struct{ slog.Handler }

func (q quietListening) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "server does not support listening" || r.Message == "listening to server forever" {
		if !q.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r = slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietListening) WithAttrs(as []slog.Attr) slog.Handler {
	return quietListening{q.Handler.WithAttrs(as)}
}

func (q quietListening) WithGroup(name string) slog.Handler {
	return quietListening{q.Handler.WithGroup(name)}
}

// DefaultMaxResponseBytes bounds what the gateway reads of one answer from
// a service; the router's result cap (at most 64 MiB) applies after.
const DefaultMaxResponseBytes = 64<<20 + 64<<10
