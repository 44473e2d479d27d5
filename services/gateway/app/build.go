// Package app assembles the gateway from its parts: configuration, policy
// engine, tickets, pins, service backends, router, authentication, admin API
// and metrics. Build is used by the fx modules in main and by tests alike.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/approvals"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/backend"
	"github.com/toolgate/toolgate/services/gateway/catalog"
	"github.com/toolgate/toolgate/services/gateway/console"
	"github.com/toolgate/toolgate/services/gateway/metrics"
	"github.com/toolgate/toolgate/services/gateway/notify"
	"github.com/toolgate/toolgate/services/gateway/openapi"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/router"
	"github.com/toolgate/toolgate/services/gateway/sessions"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// ServiceConfig is one tool service behind the gateway.
type ServiceConfig struct {
	Name  string
	URL   string
	Token []byte
}

// Config is everything the gateway needs to run.
type Config struct {
	Listen      string
	AdminListen string
	// Tokens holds the client token hashes. With TokensFile set the file is
	// followed instead: its changes take effect while the gateway runs.
	Tokens         *auth.Tokens
	TokensFile     string
	AllowedOrigins []string
	// PublicURL is the gateway's base URL as clients reach it; the OpenAPI
	// documents name it as their server. Empty: a relative server URL.
	PublicURL string
	// UserTokens verifies OpenWebUI's signed user token for user=jwt clients.
	UserTokens auth.UserTokens
	AdminToken []byte
	// Approvers sign in to the approval page with their own tokens.
	Approvers *approvals.Approvers
	// ApprovalURL is where a person reaches the approval page
	// (scheme://host[:port]); notifications link to it.
	ApprovalURL string
	// NotifyWebhookURL and NotifyNtfyURL receive a notification when a
	// ticket starts waiting for a person.
	NotifyWebhookURL string
	NotifyNtfyURL    string
	NotifyNtfyToken  []byte
	// NotifyHomeAssistant sends the notification through Home Assistant's
	// notify service, by way of the homeassistant tool service (which
	// holds HA's token; see services/homeassistant/notify).
	NotifyHomeAssistant bool
	// ApprovalKey is the master key: each service's approvals are signed
	// with the key derived from it for that service (approval.ServiceKey),
	// and approval page links with one derived for them.
	ApprovalKey []byte
	Services    []ServiceConfig
	// PolicyMode is "embedded" or "remote".
	PolicyMode string
	PolicyURL  string
	// PolicyToken is the bearer token the remote sidecar accepts.
	PolicyToken []byte
	// PolicyDir, when set, is read instead of the policies built into the
	// binary (embedded mode), so a policy edit needs only a restart.
	PolicyDir string
	PinsFile  string
	// TicketsFile keeps tickets across restarts; empty keeps them in
	// memory only.
	TicketsFile string

	CallTimeout        time.Duration
	MaxResultBytes     int
	ServiceConcurrency int
	RefreshInterval    time.Duration
	// Toolsets are endpoints offering part of one service's tools
	// (/mcp/sonarr); LoadConfig starts from DefaultToolsets.
	Toolsets []catalog.Toolset
	// AuditBatch, when positive, lets read lines wait up to this long to
	// be written together (lines about writes and tickets never wait);
	// Close writes whatever waits. Zero writes every line at once.
	AuditBatch time.Duration
	// AuditFile, when set, keeps the audit lines in the data volume too,
	// bounded: at AuditFileMax bytes the file becomes its one predecessor
	// (AuditFile + ".1") and a new one starts. The console reads both on
	// start.
	AuditFile    string
	AuditFileMax int64
	// ConsoleEntries is how many calls the operator console keeps in
	// memory (console.DefaultEntries when zero).
	ConsoleEntries int
	// Sessions bounds the MCP sessions of clients (zero fields: defaults).
	Sessions sessions.Config
}

// Gateway is the assembled gateway.
type Gateway struct {
	Public  http.Handler // /mcp, /mcp/<service>, /openapi/<service>/…, /healthz, /readyz, /metrics
	Admin   http.Handler // /admin/… on its own listener
	Router  *router.Router
	Tickets *tickets.Store
	Pins    *pins.Store
	Metrics *metrics.Metrics
	Policy  policy.Engine
	// Sessions holds the MCP sessions of clients.
	Sessions *sessions.Store
	// Tokens follows the client tokens file (nil with Config.Tokens only);
	// its Run reads the file every second.
	Tokens *auth.TokenFile
	// Page is the approval page on the admin listener (nil without an
	// admin token); Notifier tells people a ticket waits.
	Page     *approvals.Page
	Notifier *notify.Notifier
	// Console is the operator console beside the approval page, and
	// Window the audit trail it shows (both nil without an admin token).
	Console *console.Console
	Window  *console.Window

	backends  []*backend.Backend
	audit     *audit.Logger
	auditFile *audit.File
	// stopTap ends the console's reading of the audit tap.
	stopTap context.CancelFunc
	// adminMux serves the admin listener; explainer answers the admin
	// API's and the console's questions once the router is built.
	adminMux  *http.ServeMux
	explainer *explainer
	events    *ticketEvents
}

// Options carry the process-level dependencies of Build.
type Options struct {
	Logger *slog.Logger
	// Audit receives the audit lines.
	Audit io.Writer
	Now   func() time.Time
	// HTTPClient reaches the services and the policy sidecar.
	HTTPClient *http.Client
	// Policy, when set, replaces the engine cfg describes (an embedding
	// program's own engine, or a test's).
	Policy policy.Engine
	// Notify adds notification senders (Home Assistant's notify service,
	// a test's recorder) to those cfg configures.
	Notify []notify.Sender
	// NotifyHTTPClient sends webhook and ntfy notifications (default:
	// notify.NewHTTPClient).
	NotifyHTTPClient *http.Client
}

// Build assembles a gateway from cfg.
func Build(ctx context.Context, cfg Config, o Options) (_ *Gateway, err error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Audit == nil {
		o.Audit = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient == nil {
		o.HTTPClient = backend.NewHTTPClient()
	}
	if cfg.Tokens == nil && cfg.TokensFile == "" {
		return nil, errors.New("gateway: no client tokens configured")
	}
	engine := o.Policy
	if engine == nil {
		if engine, err = newEngine(ctx, cfg, o.Now); err != nil {
			return nil, err
		}
	}
	signer, err := approval.NewMasterSigner(cfg.ApprovalKey)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	pinStore, err := pins.Load(cfg.PinsFile)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	ticketStore, err := openTickets(cfg.TicketsFile, o.Now, o.Logger)
	if err != nil {
		return nil, err
	}
	var g *Gateway
	defer func() {
		if err != nil {
			ticketStore.Close()
			// What the console started: the tap's reader and the file.
			if g != nil && g.stopTap != nil {
				g.stopTap()
			}
			if g != nil && g.auditFile != nil {
				g.auditFile.Close()
			}
		}
	}()
	sessionCfg := cfg.Sessions
	sessionCfg.Now = o.Now
	g = &Gateway{
		Tickets:  ticketStore,
		Pins:     pinStore,
		Metrics:  metrics.New(),
		Policy:   engine,
		Sessions: sessions.New(sessionCfg),
	}
	if err = g.Metrics.WatchSessions(sessionFigures(g.Sessions)); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	sink := o.Audit
	if len(cfg.AdminToken) > 0 {
		// The console's window starts with what the trail on disk holds;
		// it is read before anything is written to it.
		g.Window = console.NewWindow(cfg.ConsoleEntries)
		if cfg.AuditFile != "" {
			if err = g.Window.Load(cfg.AuditFile); err != nil {
				return nil, fmt.Errorf("gateway: %s: %w", EnvAuditFile, err)
			}
			if n := g.Window.Skipped(); n > 0 {
				o.Logger.Warn("console: audit file lines that could not be read were skipped", "lines", n)
			}
		}
	}
	if cfg.AuditFile != "" {
		max := cfg.AuditFileMax
		if max == 0 {
			max = audit.DefaultFileMax
		}
		if g.auditFile, err = audit.OpenFile(cfg.AuditFile, max); err != nil {
			return nil, fmt.Errorf("gateway: %s: %w", EnvAuditFile, err)
		}
		sink = audit.Tee(o.Audit, g.auditFile)
	}
	auditLog := audit.New(sink)
	if cfg.AuditBatch > 0 {
		auditLog = audit.NewBuffered(sink, cfg.AuditBatch)
	}
	g.audit = auditLog
	if g.Window != nil {
		// The tap never holds up a call: lines that find it full are only
		// counted (the file and stdout still get them).
		tap := make(chan audit.Tapped, tapSize)
		auditLog.Tap(tap)
		tapCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
		g.stopTap = stop
		go g.Window.Run(tapCtx, tap)
	}
	// Backends and the admin API refresh services through r; the router
	// they refresh is built after them.
	r := &lazyRefresh{}
	cat := &endpointCatalog{toolsets: cfg.Toolsets}
	var onPending func(tickets.Ticket)
	if len(cfg.AdminToken) > 0 {
		if onPending, err = g.buildApprovals(cfg, auditLog, o, r.refresh, cat); err != nil {
			return nil, err
		}
	}
	var routed []router.Backend
	for _, s := range cfg.Services {
		b := backend.New(backend.Config{
			Name: s.Name, URL: s.URL, Token: s.Token, MaxConcurrent: cfg.ServiceConcurrency,
			HTTPClient: o.HTTPClient, Logger: o.Logger, OnListChanged: r.refresh,
		})
		g.backends = append(g.backends, b)
		routed = append(routed, b)
	}
	g.Router, err = router.New(router.Config{
		CallTimeout: cfg.CallTimeout, MaxResultBytes: cfg.MaxResultBytes, Toolsets: cfg.Toolsets,
	}, router.Deps{
		Policy: engine, Tickets: g.Tickets, Pins: g.Pins, Signer: signer,
		Audit: auditLog, Metrics: g.Metrics, Logger: o.Logger, Now: o.Now, Backends: routed,
		OnPending: onPending, Sessions: g.Sessions,
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	r.set(ctx, g.Router, o.Logger)

	users := cfg.UserTokens
	if users.Now == nil {
		users.Now = o.Now
	}
	var clients auth.TokenSource = cfg.Tokens
	if cfg.TokensFile != "" {
		g.Tokens, err = auth.OpenTokenFile(cfg.TokensFile, auth.TokenFileOptions{
			Validate: users.Accepts, Logger: o.Logger, Now: o.Now,
			// A session belongs to the token that opened it: gone with it.
			OnChange: func(old, new *auth.Tokens) {
				for _, name := range auth.Gone(old, new) {
					if n := g.Sessions.EndClient(name); n > 0 {
						o.Logger.Info("sessions ended: their client token left the tokens file or changed", "client", name, "sessions", n)
					}
				}
			},
		})
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		clients = g.Tokens
	}
	cat.router, cat.tokens = g.Router, clients
	authn, err := auth.NewAuthenticator(clients, cfg.AllowedOrigins, users, o.Logger)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if g.explainer != nil {
		// The clients as the tokens file has them now, not at start.
		g.explainer.set(g.Router, authn, clients.Current)
	}
	if g.Window != nil {
		if err = g.buildConsole(cfg, o); err != nil {
			return nil, err
		}
	}
	mux := http.NewServeMux()
	mcp := authn.Middleware(g.Router.Handler())
	mux.Handle("/mcp", mcp)
	mux.Handle("/mcp/", mcp)
	// OpenAPI tool servers: the same authentication in front, the router's
	// own visibility filter and call handler behind.
	mux.Handle(openapi.Prefix, authn.Middleware(openapi.New(openapi.Config{PublicURL: cfg.PublicURL}, g.Router, o.Logger)))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	mux.HandleFunc("GET /readyz", g.ready)
	mux.Handle("GET /metrics", g.Metrics.Handler())
	g.Public = mux

	return g, nil
}

// sessionFigures lets /metrics read the session store at scrape time.
func sessionFigures(s *sessions.Store) func() metrics.Sessions {
	return func() metrics.Sessions {
		st := s.Stats()
		return metrics.Sessions{
			Open: st.Open, EvictedPerClient: st.EvictedPerClient, EvictedTotal: st.EvictedTotal,
			InitializesRefused: st.InitializesRefused,
		}
	}
}

const (
	policyTimeout    = 5 * time.Second
	maxTickets       = 10_000
	maxClientTickets = 200
)

// openTickets opens the ticket file, or keeps tickets in memory when none
// is configured. A file that cannot be read stops the start: honouring
// none of its tickets silently would drop people's pending approvals, and
// guessing would risk applying a used one twice.
func openTickets(path string, now func() time.Time, log *slog.Logger) (*tickets.Store, error) {
	if path == "" {
		log.Warn("tickets are kept in memory only: a restart drops pending approvals and previews (set " + EnvTicketsFile + ")")
		return tickets.NewStore(now, maxTickets, maxClientTickets), nil
	}
	s, err := tickets.Open(path, now, maxTickets, maxClientTickets)
	if err != nil {
		if errors.Is(err, tickets.ErrCorrupt) {
			return nil, fmt.Errorf("gateway: %w; move the file aside to start without its tickets (their writes then need a new preview)", err)
		}
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return s, nil
}

func newEngine(ctx context.Context, cfg Config, now func() time.Time) (policy.Engine, error) {
	switch cfg.PolicyMode {
	case "", "embedded":
		var fsys fs.FS = policies.FS
		if cfg.PolicyDir != "" {
			fsys = os.DirFS(cfg.PolicyDir)
		}
		e, err := policy.NewEmbedded(ctx, fsys)
		if err != nil {
			return nil, fmt.Errorf("gateway: load embedded policy: %w", err)
		}
		return e, nil
	case "remote":
		if cfg.PolicyURL == "" {
			return nil, errors.New("gateway: POLICY_MODE=remote needs POLICY_URL")
		}
		// A hung sidecar must not hang calls: every decision has a deadline
		// and an unanswered one is a denial.
		return policy.NewRemote(cfg.PolicyURL, cfg.PolicyToken, policy.RemoteOptions{Timeout: policyTimeout, Now: now}), nil
	default:
		return nil, fmt.Errorf("gateway: POLICY_MODE must be embedded or remote")
	}
}

// ready answers 200 when every service has been asked for its tools once
// and the policy engine answers; services being down only makes their own
// tools unavailable, so they do not fail readiness.
func (g *Gateway) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	select {
	case <-g.Router.Loaded():
	default:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":"not_ready","reason":"loading the services' tools"}`)
		return
	}
	// Asked, not remembered: a sidecar's remembered decisions would say
	// nothing about whether it answers now.
	if err := policy.Ready(ctx, g.Policy); err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":"not_ready","reason":"policy engine unavailable"}`)
		return
	}
	_, _ = io.WriteString(w, `{"status":"ready"}`)
}

// Close ends the service sessions.
func (g *Gateway) Close() error {
	var errs []error
	for _, b := range g.backends {
		errs = append(errs, b.Close())
	}
	errs = append(errs, g.Tickets.Close())
	// Last: the servers have stopped, so every line there will be is here.
	errs = append(errs, g.audit.Close())
	if g.auditFile != nil {
		errs = append(errs, g.auditFile.Close())
	}
	if g.stopTap != nil {
		g.stopTap()
	}
	return errors.Join(errs...)
}

// ticketEvents counts a person's ticket decisions and writes them to the
// audit log, next to the calls they approve; an accepted pin is audited too
// and its service refreshed at once, so the accepted definition is offered
// without waiting for the next periodic refresh.
type ticketEvents struct {
	metrics *metrics.Metrics
	audit   *audit.Logger
	now     func() time.Time
	refresh func(service string)
}

func (e *ticketEvents) Ticket(event string) { e.metrics.Ticket(event) }

func (e *ticketEvents) TicketDecided(t tickets.Ticket, decision, by string) {
	e.record(t, decision, "decided by "+by)
}

// Decided records a decision made on the approval page, with the
// approver's note.
func (e *ticketEvents) Decided(t tickets.Ticket, decision, by, note string) {
	e.metrics.Ticket(decision)
	reason := "decided by " + by + " on the approval page"
	if note != "" {
		reason += "; note: " + note
	}
	e.record(t, decision, reason)
}

func (e *ticketEvents) record(t tickets.Ticket, decision, reason string) {
	e.audit.Log(audit.Record{
		Time: e.now().UTC(), Event: audit.EventTicket, Client: t.Client, User: t.User, UserRole: t.UserRole,
		Service: t.Service, Tool: t.Tool, TicketID: t.ID, ArgsDigest: t.ArgsDigest,
		Decision: decision, Approval: t.Approval, Reason: reason, Outcome: decision,
		Sync: true,
	})
}

// PinRejected records a rejected pin; the definition stays withheld, so
// there is nothing to refresh.
func (e *ticketEvents) PinRejected(service, tool, hash, by string) {
	e.audit.Log(audit.Record{
		Time: e.now().UTC(), Event: audit.EventPin, Service: service, Tool: tool,
		Reason: "rejected " + hash + " by " + by, Outcome: "rejected", Sync: true,
	})
}

func (e *ticketEvents) PinAccepted(service, tool, hash, by string) {
	e.audit.Log(audit.Record{
		Time: e.now().UTC(), Event: audit.EventPin, Service: service, Tool: tool,
		Reason: "accepted " + hash + " by " + by, Outcome: "accepted", Sync: true,
	})
	if e.refresh != nil {
		go e.refresh(service)
	}
}

// lazyRefresh lets backends announce tool list changes to the router that
// is built after them.
type lazyRefresh struct {
	ctx context.Context
	r   *router.Router
	log *slog.Logger
}

func (l *lazyRefresh) set(ctx context.Context, r *router.Router, log *slog.Logger) {
	l.ctx, l.r, l.log = context.WithoutCancel(ctx), r, log
}

func (l *lazyRefresh) refresh(service string) {
	if l.r == nil {
		return
	}
	if err := l.r.Refresh(l.ctx, service); err != nil {
		l.log.Warn("refresh after list_changed failed", "service", service, "error", err)
	}
}
