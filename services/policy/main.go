// Command policy is the OPA policy sidecar: OPA's own command line (`run
// --server` in the container) plus a `healthcheck` subcommand, because the
// image is FROM scratch and has no curl for the container HEALTHCHECK.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/open-policy-agent/opa/cmd"
)

// healthURL is OPA's health endpoint on the address the image serves.
const healthURL = "http://127.0.0.1:8181/health"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "healthcheck" {
		os.Exit(healthcheck(context.Background(), healthURL))
	}
	if err := cmd.RootCommand.Execute(); err != nil {
		var exit *cmd.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Exit)
		}
		os.Exit(1)
	}
}

// healthcheck returns 0 when OPA answers its health endpoint with 200.
func healthcheck(ctx context.Context, url string) int {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 1
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
