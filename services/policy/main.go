// Command policy is the OPA policy sidecar: OPA's own command line (`run
// --server` in the container) plus a `healthcheck` subcommand, because the
// image is FROM scratch and has no curl for the container HEALTHCHECK.
package main

import (
	"context"
	"errors"
	"os"

	"github.com/open-policy-agent/opa/cmd"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// healthURL is OPA's health endpoint on the address the image serves.
const healthURL = "http://127.0.0.1:8181/health"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(toolkit.Probe(context.Background(), healthURL))
	}
	if err := cmd.RootCommand.Execute(); err != nil {
		var exit *cmd.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Exit)
		}
		os.Exit(1)
	}
}
