package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/approvals"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/backend"
	"github.com/toolgate/toolgate/services/gateway/stdio"
)

// Settings of the client-side subcommands.
const (
	EnvAdminURL   = "TOOLGATE_ADMIN_URL"
	EnvGatewayURL = "TOOLGATE_URL"
	// EnvToken is the stdio bridge's client token. Desktop clients can only
	// pass environment variables, so it may be given directly or as a file
	// (TOOLGATE_TOKEN_FILE).
	EnvToken = "TOOLGATE_TOKEN"
)

// Usage describes the gateway's subcommands.
const Usage = `usage: gateway [serve]                 run the gateway (configured by TOOLGATE_* variables)
       gateway token NAME GROUP[,GROUP] [user=jwt|user=headers]
                                        create a client token; prints the token once and its tokens-file line
                                        (user=jwt: end users from OpenWebUI's signed token; user=headers: plain headers)
       gateway approver NAME            create an approver's token for the approval page; prints it once and its approvers-file line
       gateway approval-key SERVICE     print SERVICE's own approval key, derived from TOOLGATE_APPROVAL_KEY_FILE
                                        (the file the service's TOOLGATE_APPROVAL_KEY_FILE names; install.sh writes them)
       gateway approvals list|show|approve|deny …   decide tickets that need a person (admin API)
       gateway pins list|show SERVICE TOOL|accept SERVICE TOOL HASH|reject SERVICE TOOL HASH
                                        review, accept or reject changed tool definitions and instructions (admin API)
       gateway policy explain --client NAME [--user USER [--role ROLE]] [--endpoint /mcp/NAME] [--json] TOOL [ARGS]
                                        what a call would meet: decision, reason, reason id, whether a person is asked (admin API)
       gateway endpoints list [--refresh]
                                        per client token, the endpoints that show it tools (admin API; install.sh prints them)
       gateway stdio                    bridge stdin/stdout to the gateway for desktop MCP clients
       gateway healthcheck              probe the local gateway (container HEALTHCHECK)`

// Command runs a subcommand and returns the process exit code.
func Command(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "gateway:", err)
	if errors.Is(err, errUsage) || errors.Is(err, admin.ErrUsage) {
		fmt.Fprintln(os.Stderr, Usage)
		return 2
	}
	return 1
}

var errUsage = errors.New("unknown or incomplete command")

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch args[0] {
	case "token":
		if len(args) != 3 && len(args) != 4 {
			return errUsage
		}
		mode := auth.UserNone
		if len(args) == 4 {
			m, ok := strings.CutPrefix(args[3], "user=")
			if !ok || (auth.UserMode(m) != auth.UserJWT && auth.UserMode(m) != auth.UserHeaders) {
				return fmt.Errorf("%w: the last argument must be user=jwt or user=headers", errUsage)
			}
			mode = auth.UserMode(m)
		}
		tok, line, err := auth.NewToken(args[1], strings.Split(args[2], ","), mode)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "token (shown once; give it to the client): %s\n", tok)
		fmt.Fprintf(stdout, "add this line to the client tokens file:\n%s\n", line)
		return nil
	case "approver":
		if len(args) != 2 {
			return errUsage
		}
		tok, line, err := approvals.NewApproverToken(args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approver token (shown once; give it to %s): %s\n", args[1], tok)
		fmt.Fprintf(stdout, "add this line to the approvers file (TOOLGATE_APPROVERS_FILE):\n%s\n", line)
		return nil
	case "approval-key":
		if len(args) != 2 {
			return errUsage
		}
		if !serviceName.MatchString(args[1]) {
			return fmt.Errorf("%w: %q is not a service name (lower-case letters, digits, dashes)", errUsage, args[1])
		}
		l := config.FromEnv()
		master := l.Secret(EnvApprovalKey)
		if err := l.Err(); err != nil {
			return err
		}
		key, err := approval.ServiceKey(master, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", key)
		return nil
	case "approvals", "pins", "policy", "endpoints":
		l := config.FromEnv()
		base := l.String(EnvAdminURL, "http://127.0.0.1:8081")
		token := l.Secret(EnvAdminToken)
		if err := l.Err(); err != nil {
			return err
		}
		cli := &admin.CLI{BaseURL: base, Token: token, HTTPClient: backend.NewHTTPClient(), Out: stdout}
		return cli.Run(ctx, args)
	case "stdio":
		token := os.Getenv(EnvToken)
		if token == "" {
			l := config.FromEnv()
			b := l.Secret(EnvToken)
			if err := l.Err(); err != nil {
				return fmt.Errorf("stdio needs %s or %s_FILE: %w", EnvToken, EnvToken, err)
			}
			token = string(b)
		}
		url := os.Getenv(EnvGatewayURL)
		if url == "" {
			url = "http://127.0.0.1:8080/mcp"
		}
		log := slog.New(slog.NewTextHandler(stderr, nil))
		return stdio.Run(ctx, stdio.Config{URL: url, Token: token, Logger: log}, stdin, stdout)
	case "healthcheck":
		if toolkit.Healthcheck(ctx, toolkit.LoopbackAddr(envOr(EnvListen, ":8080"))) != 0 {
			return errors.New("unhealthy")
		}
		return nil
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, Usage)
		return nil
	default:
		return errUsage
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
