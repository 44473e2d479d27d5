// Command fakes serves the fake upstream applications of the demo profile
// — Sonarr, Radarr, Prowlarr, Frigate, Unraid, ErsatzTV (/api/v1) and SearXNG with
// fixture pages — so a
// newcomer can try every service with no home-lab application. Each fake
// answers with the shapes and status codes of the real application's API
// and checks credentials as it does. Demo only: never part of a real stack.
//
// Settings: FAKES_UNRAID_API_KEY_FILE (the demo Unraid's API key), FAKES_API_KEY_FILE (the *arr API key, also ErsatzTV's machine
// key), FAKES_FRIGATE_PASSWORD_FILE (the password of Frigate's demo viewer
// account), FAKES_HA_TOKEN_FILE (Home Assistant's long-lived access token)
// and FAKES_HA_CONFIG_DIR (the fake Home Assistant's configuration
// directory, seeded with demo YAML when empty), FAKES_TULIPROX_USERNAME_FILE
// and FAKES_TULIPROX_PASSWORD_FILE (the fake Tuliprox's demo operator).
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/prowlarr/fakeprowlarr"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
	"github.com/toolgate/toolgate/services/arr/sonarr/fakesonarr"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/unraid/fakeunraid"
	"github.com/toolgate/toolgate/services/web/fakesearx"
)

// Ports are the real applications' defaults.
const (
	frigatePort = 5000
	// ersatztvPort is ErsatzTV's UI port (ETV_UI_PORT), where the /api/v1
	// fake answers.
	ersatztvPort = 8409
	// ersatztvLegacyPort serves upstream ErsatzTV's unversioned /api (the
	// legacy fake, as on its UI port) beside it, so the demo can try
	// legacy mode with ERSATZTV_URL=http://etv:8410.
	ersatztvLegacyPort = 8410
	searxngPort        = 8080
	// unraidPort stands for Unraid\'s web port 80, which a container
	// without capabilities may not bind everywhere.
	unraidPort = 8880
	// tuliproxPort is Tuliprox's default API port (api.port), where the
	// fake plays the seed's API.
	tuliproxPort = 8901
	// tuliproxPublicPort serves the fake as the public 3.3.x builds answer
	// beside it, so the demo can try that release with
	// TULIPROX_URL=http://tuliprox-app:8902.
	tuliproxPublicPort = 8902
)

var ports = []int{fakesonarr.Port, fakeradarr.Port, fakeprowlarr.Port, frigatePort, ersatztvPort, ersatztvLegacyPort, searxngPort, fakehass.Port, unraidPort, tuliproxPort, tuliproxPublicPort}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck())
	}
	log := toolkit.NewLogger(os.Getenv("TOOLGATE_LOG_LEVEL"))
	if err := run(log); err != nil {
		fmt.Fprintln(os.Stderr, "fakes:", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	l := config.FromEnv()
	key := string(l.Secret("FAKES_API_KEY"))
	password := string(l.Secret("FAKES_FRIGATE_PASSWORD"))
	unraidKey := string(l.Secret("FAKES_UNRAID_API_KEY"))
	ha := homeAssistant{token: string(l.Secret("FAKES_HA_TOKEN")), configDir: l.String("FAKES_HA_CONFIG_DIR", "")}
	tp := tuliproxUser{name: string(l.Secret("FAKES_TULIPROX_USERNAME")), password: string(l.Secret("FAKES_TULIPROX_PASSWORD"))}
	if err := l.Err(); err != nil {
		return err
	}
	if ha.configDir != "" {
		if err := fakehass.SeedConfig(ha.configDir); err != nil {
			return fmt.Errorf("FAKES_HA_CONFIG_DIR: %w", err)
		}
	}
	handlers := fakes(key, password, ha, unraidKey, tp)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errs := make(chan error, len(handlers))
	var servers []*http.Server
	for _, port := range ports {
		srv := &http.Server{Addr: ":" + strconv.Itoa(port), Handler: handlers[port], ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() {
			if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
				errs <- fmt.Errorf("port %d: %w", port, err)
			}
		}()
	}
	log.Info("serving fake upstreams", "ports", ports)
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range servers {
		_ = srv.Shutdown(shutdown)
	}
	return err
}

// homeAssistant is the fake Home Assistant's token and configuration
// directory.
type homeAssistant struct{ token, configDir string }

// tuliproxUser is the fake Tuliprox's demo operator, whose group may also
// update playlists and GeoIP.
type tuliproxUser struct{ name, password string }

// fakes returns each fake upstream by its port (Unraid takes unraidKey as an
// ADMIN key: the demo turns its actions on): the *arr fakes accept key,
// Frigate's demo viewer logs in with password, Home Assistant takes ha's
// token, Tuliprox's demo operator signs in as tp (besides the fake's
// built-in demo users).
func fakes(key, password string, ha homeAssistant, unraidKey string, tp tuliproxUser) map[int]http.Handler {
	tuliproxUsers := faketuliprox.DemoUsers()
	tuliproxUsers[tp.name] = faketuliprox.User{Password: tp.password, Permissions: tuliproxUsers[faketuliprox.DemoOperator].Permissions}
	frigate := fakefrigate.New(fakefrigate.Options{
		Users:          map[string]string{fakefrigate.DemoUser: password},
		Cameras:        fakefrigate.DemoCameras(),
		Events:         fakefrigate.DemoEvents(time.Now()),
		SemanticSearch: true,
	})
	return map[int]http.Handler{
		fakesonarr.Port:    fakesonarr.NewDemo(key),
		fakeradarr.Port:    fakeradarr.NewDemo(key),
		fakeprowlarr.Port:  fakeprowlarr.NewDemo(key),
		frigatePort:        frigate.Handler(),
		ersatztvPort:       fakeersatztv.NewV1(fakeersatztv.NewDemoStore(time.Now()), key),
		ersatztvLegacyPort: fakeersatztv.NewLegacy(fakeersatztv.NewDemoStore(time.Now())).Handler(true),
		searxngPort:        fakesearx.NewDemo(),
		unraidPort:         fakeunraid.New(fakeunraid.Options{AdminKey: unraidKey}, fakeunraid.DemoState(time.Now())).Handler(),
		fakehass.Port:      fakehass.New(fakehass.DemoHome(fakehass.Options{Token: ha.token, ConfigDir: ha.configDir})).Handler(),
		tuliproxPort:       faketuliprox.New(faketuliprox.Options{Users: tuliproxUsers}),
		tuliproxPublicPort: faketuliprox.New(faketuliprox.Options{Users: tuliproxUsers, Release: faketuliprox.ReleasePublic}),
	}
}

// healthcheck succeeds when every fake accepts a connection.
func healthcheck() int {
	for _, port := range ports {
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, "healthcheck:", err)
			return 1
		}
		conn.Close()
	}
	return 0
}
