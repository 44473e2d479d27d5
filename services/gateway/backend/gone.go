package backend

import (
	"errors"
	"net"
	"strings"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
)

// Failures that say the gateway's catalog of a service is out of date. The
// router reads them through their methods (errors.As on an interface), so
// neither package names the other's types.

// notRunning is a connection failure where nothing is there to answer: the
// service's name does not resolve (Docker's DNS drops a container that
// stopped or was removed, as after a profile switch) or nothing listens at
// its address. A timeout or a 5xx is not one: the service is there.
type notRunning struct{ err error }

func (e notRunning) Error() string   { return e.err.Error() }
func (e notRunning) Unwrap() error   { return e.err }
func (notRunning) ServiceGone() bool { return true }

func isNotRunning(err error) bool {
	var dns *net.DNSError
	return (errors.As(err, &dns) && dns.IsNotFound) || errors.Is(err, syscall.ECONNREFUSED)
}

// toolGone is a service's answer that it has no tool of the name called
// (JSON-RPC -32602 "tool '…' not found"): it restarted with other settings
// (Sonarr's key removed, writes switched off) since the gateway listed it.
type toolGone struct{ err error }

func (e toolGone) Error() string { return e.err.Error() }
func (e toolGone) Unwrap() error { return e.err }
func (toolGone) ToolGone() bool  { return true }

func isUnknownTool(code int, msg string) bool {
	return code == mcp.INVALID_PARAMS && strings.Contains(msg, "not found")
}
