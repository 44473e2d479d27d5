package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
)

// The constructors main.go lists for fx.

// ConfigFromEnv reads the gateway's configuration from the environment.
func ConfigFromEnv() (Config, error) { return LoadConfig(config.FromEnv()) }

// NewGateway assembles the gateway (closed when fx stops); audit lines go
// to stdout, logs to log.
func NewGateway(lc fx.Lifecycle, cfg Config, log *slog.Logger) (*Gateway, error) {
	g, err := Build(context.Background(), cfg, Options{Logger: log, Audit: os.Stdout})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(g.Close))
	return g, nil
}

// Serve starts the public and admin listeners, the tool refresh loop and
// the tokens file's reload with fx, and stops them gracefully.
func Serve(lc fx.Lifecycle, cfg Config, g *Gateway, log *slog.Logger) {
	ctx, cancel := context.WithCancel(context.Background())
	servers := []*http.Server{newServer(cfg.Listen, g.Public)}
	if g.Admin != nil {
		servers = append(servers, newServer(cfg.AdminListen, g.Admin))
	} else {
		log.Warn("admin API disabled: no TOOLGATE_ADMIN_TOKEN_FILE; human approvals cannot be given")
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			for _, s := range servers {
				ln, err := net.Listen("tcp", s.Addr)
				if err != nil {
					return fmt.Errorf("listen on %s: %w", s.Addr, err)
				}
				log.Info("listening", "addr", ln.Addr().String())
				go func() {
					if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
						log.Error("server stopped", "error", err)
					}
				}()
			}
			go g.Router.Run(ctx, cfg.RefreshInterval)
			if g.Tokens != nil {
				go g.Tokens.Run(ctx)
			}
			return nil
		},
		OnStop: func(stop context.Context) error {
			cancel()
			var errs []error
			for _, s := range servers {
				errs = append(errs, s.Shutdown(stop))
			}
			return errors.Join(errs...)
		},
	})
}

func newServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
}
