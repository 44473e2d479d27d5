// Package diag is the unraid-ssh service's domain: extended diagnosis of an
// Unraid server that its API does not give (kernel log, SMART attributes,
// sensors, df, free, addresses, container stats, a syslog window), run over
// SSH through the forced-command script deploy/unraid/toolgate-diag.sh.
// The service never sends a command string from a caller: each tool builds
// one fixed request from validated arguments, the script on the server
// allows exactly those, and the host key is pinned (never trusted on first
// use).
package diag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Protocol is the first line of every answer of the forced-command script.
// A server that answers without it runs the request some other way (the
// key is not bound to the script): the service refuses to use it.
const Protocol = "toolgate-diag 1"

// refusedStatus is the script's exit status for a refused request.
const refusedStatus = 126

// Client runs requests on one Unraid server over SSH.
type Client struct {
	addr     string
	config   *ssh.ClientConfig
	maxBytes int
	timeout  time.Duration
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)
}

// ClientOptions are the connection's settings.
type ClientOptions struct {
	// Addr is host:port.
	Addr string
	User string
	// Key is the private key (PEM or OpenSSH format, no passphrase).
	Key []byte
	// KnownHostsFile holds known_hosts lines that pin the server's host key.
	KnownHostsFile string
	// MaxBytes caps what is kept of a request's output.
	MaxBytes int
	// Timeout bounds one request: connect, authenticate, run, read.
	Timeout time.Duration
}

// NewClient checks the key and the pinned host keys.
func NewClient(o ClientOptions) (*Client, error) {
	signer, err := ssh.ParsePrivateKey(o.Key)
	if err != nil {
		var pass *ssh.PassphraseMissingError
		if errors.As(err, &pass) {
			return nil, errors.New("the SSH key has a passphrase; give the service a key without one, bound to the forced command")
		}
		return nil, errors.New("the SSH key cannot be parsed (want an OpenSSH or PEM private key)")
	}
	callback, algos, err := pinned(o.KnownHostsFile)
	if err != nil {
		return nil, err
	}
	return &Client{
		addr: o.Addr, maxBytes: o.MaxBytes, timeout: o.Timeout,
		config: &ssh.ClientConfig{
			User: o.User, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
			HostKeyCallback: callback, HostKeyAlgorithms: algos, Timeout: o.Timeout,
		},
		dial: (&net.Dialer{}).DialContext,
	}, nil
}

// pinned builds the host key check from a known_hosts file, and the host
// key algorithms to ask for: only the pinned keys' types, so a server that
// also has a key of another type cannot look like a changed key.
func pinned(file string) (ssh.HostKeyCallback, []string, error) {
	content, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, errors.New("the known_hosts file cannot be read")
	}
	var algos []string
	seen := map[string]bool{}
	rest := content
	for len(bytes.TrimSpace(rest)) > 0 {
		marker, _, key, _, next, err := ssh.ParseKnownHosts(rest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, errors.New("the known_hosts file does not parse; paste lines from ssh-keyscan or ~/.ssh/known_hosts")
		}
		rest = next
		if marker != "" {
			continue
		}
		for _, a := range algorithmsFor(key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	if len(algos) == 0 {
		return nil, nil, errors.New("the known_hosts file pins no host key; an unpinned host is never trusted")
	}
	cb, err := knownhosts.New(file)
	if err != nil {
		return nil, nil, fmt.Errorf("the known_hosts file: %w", err)
	}
	return cb, algos, nil
}

func algorithmsFor(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	return []string{keyType}
}

// Result is a request's answer.
type Result struct {
	Output    string
	Status    int
	Truncated bool
}

// Run sends request (one of the script's commands) and returns its output
// without the protocol line.
func (c *Client) Run(ctx context.Context, request string) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := c.dial(ctx, "tcp", c.addr)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, toolerr.New(toolerr.Timeout, "connecting to Unraid's SSH server timed out")
		}
		return Result{}, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "cannot connect to Unraid's SSH server; check UNRAID_SSH_HOST and that SSH is on")
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(c.timeout))
	sc, chans, reqs, err := ssh.NewClientConn(conn, c.addr, c.config)
	if err != nil {
		return Result{}, c.handshakeErr(ctx, err)
	}
	client := ssh.NewClient(sc, chans, reqs)
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		return Result{}, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Unraid's SSH server refused a session")
	}
	defer sess.Close()
	stdout := &capped{max: c.maxBytes + len(Protocol) + 1}
	stderr := &capped{max: 4 << 10}
	sess.Stdout, sess.Stderr = stdout, stderr
	err = sess.Run(request)
	if ctx.Err() != nil {
		return Result{}, toolerr.New(toolerr.Timeout, "the diagnostic did not finish in time (UNRAID_SSH_TIMEOUT)")
	}
	status := 0
	var exit *ssh.ExitError
	switch {
	case errors.As(err, &exit):
		status = exit.ExitStatus()
	case err != nil:
		return Result{}, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the SSH session to Unraid ended without a result")
	}
	out := stdout.String()
	header, body, _ := strings.Cut(out, "\n")
	if header != Protocol {
		return Result{}, toolerr.New(toolerr.Forbidden, "Unraid did not answer through the toolgate forced command: this key is not restricted to it; refusing to use it (install the key with command=\"…/toolgate-diag.sh\",restrict)")
	}
	if status == refusedStatus {
		return Result{}, toolerr.New(toolerr.UpstreamUnavailable, "the forced-command script on Unraid refused the request (%s); is the installed script the one from this toolgate version?", clipLine(stderr.String()))
	}
	truncated := stdout.over || len(body) > c.maxBytes
	if len(body) > c.maxBytes {
		body = body[:c.maxBytes]
	}
	return Result{Output: strings.ToValidUTF8(body, "�"), Status: status, Truncated: truncated}, nil
}

func (c *Client) handshakeErr(ctx context.Context, err error) error {
	var key *knownhosts.KeyError
	switch {
	case errors.As(err, &key) && len(key.Want) > 0:
		return toolerr.New(toolerr.AuthFailed, "Unraid's SSH host key does NOT match the pinned one in UNRAID_SSH_KNOWN_HOSTS_FILE: refused (a reinstalled server, or someone in between); check the server's key before pinning a new one")
	case errors.As(err, &key):
		return toolerr.New(toolerr.AuthFailed, "Unraid's SSH host key is not pinned in UNRAID_SSH_KNOWN_HOSTS_FILE for this address: refused (an unknown host key is never trusted)")
	case ctx.Err() != nil:
		return toolerr.New(toolerr.Timeout, "the SSH handshake with Unraid timed out")
	case strings.Contains(err.Error(), "unable to authenticate"):
		return toolerr.New(toolerr.AuthFailed, "Unraid's SSH server did not accept the key; check UNRAID_SSH_KEY_FILE, UNRAID_SSH_USER and the authorized_keys line")
	}
	return toolerr.Wrap(toolerr.UpstreamUnavailable, err, "the SSH handshake with Unraid failed")
}

// clipLine keeps the script's one-line reason, bounded.
func clipLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimPrefix(s, "toolgate-diag: refused: ")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// capped keeps at most max bytes and remembers whether more came.
type capped struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		if len(p) > room {
			c.buf.Write(p[:room])
			c.over = true
		} else {
			c.buf.Write(p)
		}
	} else if len(p) > 0 {
		c.over = true
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }
