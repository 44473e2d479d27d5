package toolkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/redact"
)

// Settings every tool service reads from its environment.
const (
	EnvListen         = "TOOLGATE_LISTEN"
	EnvServiceToken   = "TOOLGATE_SERVICE_TOKEN" // read from TOOLGATE_SERVICE_TOKEN_FILE
	EnvApprovalKey    = "TOOLGATE_APPROVAL_KEY"  // read from TOOLGATE_APPROVAL_KEY_FILE
	EnvMaxResultBytes = "TOOLGATE_MAX_RESULT_BYTES"
	EnvCallTimeout    = "TOOLGATE_CALL_TIMEOUT"
	EnvLogLevel       = "TOOLGATE_LOG_LEVEL"
	DefaultListen     = ":8000"
)

// Name is the service's name, e.g. "arr"; its upper-case form prefixes the
// service's own settings (ARR_ALLOW_WRITES).
type Name string

// ReadyFunc reports whether the upstream is reachable and accepts the
// service's credentials.
type ReadyFunc func(ctx context.Context) error

// Instructions is a service's guidance for the model, sent at initialize
// (before the toolkit's note that results are untrusted data); a service
// module supplies it with fx.Supply(toolkit.Instructions("…")).
type Instructions string

// Secret is a secret value a service module hands to the redactor, so it
// is masked wherever it appears in a result.
type Secret []byte

// ProvideTools registers a constructor whose []Tool result joins the
// service's tools.
func ProvideTools(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.ResultTags(`group:"toolgate.tools,flatten"`)))
}

// Route is an HTTP endpoint beside /mcp that only the gateway may use: it
// sits behind the same service-token check and body bound (a Home
// Assistant notification the gateway asks for, say). Pattern is an
// http.ServeMux pattern ("POST /internal/notify").
type Route struct {
	Pattern string
	Handler http.Handler
}

// ProvideRoute registers a constructor whose Route result joins the
// service's routes.
func ProvideRoute(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.ResultTags(`group:"toolgate.routes"`)))
}

// ProvideSecret registers a constructor whose Secret result is redacted.
func ProvideSecret(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.ResultTags(`group:"toolgate.secrets"`)))
}

// Run is the main function of a tool service: `healthcheck` as the first
// argument probes a running instance (for the container HEALTHCHECK, as
// images have no curl), `readycheck` prints its readiness (for install.sh
// and doctor); anything else starts the service with the given fx modules
// and stops it gracefully on SIGTERM.
func Run(name string, modules ...fx.Option) {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(Healthcheck(context.Background(), LoopbackAddr(os.Getenv(EnvListen))))
	}
	if len(os.Args) > 1 && os.Args[1] == "readycheck" {
		os.Exit(Readycheck(context.Background(), LoopbackAddr(os.Getenv(EnvListen)), os.Stdout))
	}
	logger := NewLogger(os.Getenv(EnvLogLevel))
	app := fx.New(
		FxLogger(logger),
		fx.Supply(Name(name), logger),
		Module,
		fx.Options(modules...),
		// Last: a bad configuration's summary stays the first line out.
		ProcsModule(os.LookupEnv),
	)
	os.Exit(Serve(name, app))
}

// Serve starts app, waits for SIGINT or SIGTERM and stops it gracefully. A
// failure to build, start or stop is printed as one readable line (fx's own
// log keeps the details at debug level) and gives exit code 1.
func Serve(name string, app *fx.App) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	if err := app.Err(); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), app.StartTimeout())
	defer cancel()
	if err := app.Start(ctx); err != nil {
		return fail(err)
	}
	<-app.Wait()
	ctx, cancel = context.WithTimeout(context.Background(), app.StopTimeout())
	defer cancel()
	if err := app.Stop(ctx); err != nil {
		return fail(err)
	}
	return 0
}

// FxLogger sends fx's own events to logger at debug level, so start-up
// does not flood the service log; Serve reports failures.
func FxLogger(logger *slog.Logger) fx.Option {
	return fx.WithLogger(func() fxevent.Logger {
		l := &fxevent.SlogLogger{Logger: logger.With("component", "fx")}
		l.UseLogLevel(slog.LevelDebug)
		// Serve prints failures itself, once and readably.
		l.UseErrorLevel(slog.LevelDebug)
		return l
	})
}

// NewLogger returns a JSON logger on stderr at level (debug, info, warn, error).
func NewLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToLower(level))); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// Module builds the Service from the environment and serves it.
var Module = fx.Module("toolkit",
	fx.Provide(newFromEnv),
	LimitsModule,
	fx.Invoke(serve),
)

// LimitsModule provides the Limits in force for the service named by the
// supplied Name: the part of Module a service's tools may need. Tests that
// build a service's tools without serving it use it too.
var LimitsModule = fx.Provide(newLimits)

type params struct {
	fx.In
	Name    Name
	Logger  *slog.Logger
	Tools   []Tool    `group:"toolgate.tools"`
	Secrets []Secret  `group:"toolgate.secrets"`
	Routes  []Route   `group:"toolgate.routes"`
	Ready   ReadyFunc `optional:"true"`
	// Instructions are optional: most services say enough in their tools.
	Instructions Instructions `optional:"true"`
	Limits       Limits
}

// listenAddress is the service's listen address.
type listenAddress string

func newFromEnv(p params) (*Service, listenAddress, error) {
	l := config.FromEnv()
	prefix := EnvPrefix(string(p.Name))
	listen := l.String(EnvListen, DefaultListen)
	token := l.Secret(EnvServiceToken)
	allowWrites := l.Bool(prefix+"_ALLOW_WRITES", false)
	var key []byte
	if allowWrites {
		key = l.Secret(EnvApprovalKey)
	}
	maxBytes := l.Int(EnvMaxResultBytes, DefaultMaxResultBytes, 1024, 64<<20)
	timeout := l.Duration(EnvCallTimeout, 60*time.Second)
	if err := l.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: configuration: %w", p.Name, err)
	}
	known := [][]byte{token}
	if key != nil {
		known = append(known, key)
	}
	for _, s := range p.Secrets {
		known = append(known, s)
	}
	var routes map[string]http.Handler
	for _, r := range p.Routes {
		if routes == nil {
			routes = map[string]http.Handler{}
		}
		if _, dup := routes[r.Pattern]; dup || r.Handler == nil {
			return nil, "", fmt.Errorf("%s: route %q is registered twice or has no handler", p.Name, r.Pattern)
		}
		routes[r.Pattern] = r.Handler
	}
	svc, err := New(Options{
		Name: string(p.Name), ServiceToken: token, ApprovalKey: key, AllowWrites: allowWrites,
		MaxResultBytes: maxBytes, CallTimeout: timeout, Redactor: redact.New(known...),
		Logger: p.Logger, Ready: p.Ready, Instructions: string(p.Instructions), Limits: p.Limits,
		Routes: routes,
	}, p.Tools...)
	return svc, listenAddress(listen), err
}

func serve(lc fx.Lifecycle, svc *Service, addr listenAddress, log *slog.Logger) {
	srv := &http.Server{
		Addr: string(addr), Handler: svc.Handler(),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			ln, err := net.Listen("tcp", srv.Addr)
			if err != nil {
				return fmt.Errorf("listen on %s: %w", srv.Addr, err)
			}
			log.Info("serving", "addr", ln.Addr().String(), "tools", len(svc.ToolNames()))
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("server stopped", "error", err)
				}
			}()
			return nil
		},
		OnStop: func(ctx context.Context) error { return srv.Shutdown(ctx) },
	})
}

// Healthcheck probes http://127.0.0.1:<port>/healthz and returns an exit code.
func Healthcheck(ctx context.Context, addr string) int {
	return Probe(ctx, "http://"+addr+"/healthz")
}

// Probe GETs url within 3 seconds and returns exit code 0 for a 200, 1
// otherwise: the HEALTHCHECK of a FROM-scratch image, which has no curl.
func Probe(ctx context.Context, url string) int {
	return ProbeBearer(ctx, url, nil)
}

// ProbeBearer is Probe for an endpoint that wants a bearer token (the OPA
// sidecar's /health); a nil token sends none.
func ProbeBearer(ctx context.Context, url string, token []byte) int {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 1
	}
	if token != nil {
		req.Header.Set("Authorization", "Bearer "+string(token))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "healthcheck:", err)
		return 1
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "healthcheck: HTTP", res.StatusCode)
		return 1
	}
	return 0
}

// Readycheck asks the running service at addr for /readyz and writes one
// line to w: "ready", or the client-safe message of what is wrong (which
// names the setting to fix and no value but a host name). The exit code is
// 0 when ready, 1 otherwise.
func Readycheck(ctx context.Context, addr string, w io.Writer) int {
	ready, msg := Readiness(ctx, http.DefaultClient, "http://"+addr+"/readyz")
	fmt.Fprintln(w, msg)
	if !ready {
		return 1
	}
	return 0
}

// NotAnswering begins the readiness line of a service that does not
// answer at all (not running, or not reachable), before the host it was
// asked on.
const NotAnswering = "the service does not answer on "

// Readiness asks a service's /readyz at url and returns whether it is
// ready and one line: "ready", or what is wrong, in the service's own words
// (naming the setting to fix). install.sh and deploy/doctor show it through
// `/app readycheck`, the gateway's operator console by asking the same
// URL; all three say the same.
func Readiness(ctx context.Context, hc *http.Client, url string) (bool, string) {
	// /readyz bounds its own check at 5 s; this leaves room for the answer.
	ctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, fmt.Sprint("cannot ask for readiness: ", err)
	}
	res, err := hc.Do(req)
	if err != nil {
		return false, NotAnswering + req.URL.Host
	}
	defer res.Body.Close()
	var body struct {
		Status string      `json:"status"`
		Error  ErrorDetail `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&body); err != nil {
		return false, fmt.Sprint("/readyz answered HTTP ", res.StatusCode, " without a readable body")
	}
	if res.StatusCode == http.StatusOK && body.Status == "ready" {
		return true, "ready"
	}
	msg := body.Error.Message
	if msg == "" {
		msg = fmt.Sprintf("not ready (HTTP %d)", res.StatusCode)
	}
	// One line: errors.Join puts each failing application on its own.
	return false, strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

// LoopbackAddr turns a listen address (":8000") into a dialable loopback one.
func LoopbackAddr(listen string) string {
	if listen == "" {
		listen = DefaultListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "127.0.0.1:8000"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
