// Command gateway is toolgate's only door for MCP clients: it authenticates
// callers, asks the policy about every call, routes calls to the tool
// services and runs the preview → ticket → confirm flow for writes.
//
// Without arguments it serves. Subcommands: token, approvals, pins, stdio,
// healthcheck (see `gateway help`).
package main

import (
	"os"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/app"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] != "serve" {
		os.Exit(app.Command(os.Args[1:]))
	}
	logger := toolkit.NewLogger(os.Getenv(app.EnvLogLevel))
	gateway := fx.New(
		toolkit.FxLogger(logger),
		fx.Supply(logger),
		// A module, so that it runs before the procs module: a bad
		// configuration's summary stays the first line out.
		fx.Module("gateway",
			fx.Provide(app.ConfigFromEnv, app.NewGateway),
			fx.Invoke(app.Serve),
		),
		toolkit.ProcsModule(os.LookupEnv),
	)
	os.Exit(toolkit.Serve("gateway", gateway))
}
