// Command policy is the OPA policy sidecar: OPA's own command line (`run
// --server` in the container) plus two things OPA cannot do from a
// FROM-scratch image: a `healthcheck` subcommand for the container
// HEALTHCHECK (no curl), and reading the gateway's policy token from
// TOOLGATE_POLICY_TOKEN_FILE. The token's SHA-256 is handed to OPA in its
// environment, where policies/system/authz.rego compares it with each
// request's bearer token; the healthcheck sends the token itself. The
// server runs on one P unless GOMAXPROCS is set, like every toolgate
// process (internal/toolkit/procs.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/open-policy-agent/opa/cmd"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/policies"
)

// healthURL is OPA's health endpoint on the address the image serves.
const healthURL = "http://127.0.0.1:8181/health"

// EnvToken is the gateway's policy token, read from TOOLGATE_POLICY_TOKEN_FILE.
const EnvToken = "TOOLGATE_POLICY_TOKEN"

func main() {
	token, err := loadToken(config.FromEnv())
	if err != nil {
		fmt.Fprintln(os.Stderr, "policy:", err)
		os.Exit(2)
	}
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(toolkit.ProbeBearer(context.Background(), healthURL, token))
	}
	if len(os.Args) > 1 && os.Args[1] == "run" {
		// The server runs on one P unless GOMAXPROCS is set, as the
		// gateway and the tool services do (internal/toolkit/procs.go).
		toolkit.ApplyProcs(os.LookupEnv, toolkit.NewLogger(os.Getenv(toolkit.EnvLogLevel)))
	}
	if token != nil {
		// Before OPA starts: it reads its environment once, for opa.runtime().
		if err := os.Setenv(policies.SidecarTokenHashEnv, policies.SidecarTokenHash(token)); err != nil {
			fmt.Fprintln(os.Stderr, "policy:", err)
			os.Exit(2)
		}
	}
	if err := cmd.RootCommand.Execute(); err != nil {
		var exit *cmd.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Exit)
		}
		os.Exit(1)
	}
}

// loadToken reads the optional policy token. Without one OPA runs as told
// by its flags; with --authorization=basic that means it serves nobody.
func loadToken(l *config.Loader) ([]byte, error) {
	token, _ := l.OptionalSecret(EnvToken)
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return token, nil
}
