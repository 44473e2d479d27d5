package policy

import (
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// maxSidecarConns is how many idle connections to the sidecar are kept:
// above the gateway's usual concurrency, so that connections are reused
// rather than opened and closed (each of which also makes the remembered
// decisions unusable).
const maxSidecarConns = 128

// sidecarClient returns the HTTP client for the sidecar. Its connections
// report to changed whenever one is opened, closed, or fails to read
// (the sidecar closed it: it stopped or restarted, perhaps with another
// policy). A remembered decision is used only while changed stays as it
// was when the decision was learnt, i.e. only over the very connections
// that taught it and while all of them are alive.
func sidecarClient(timeout time.Duration, changed *atomic.Uint64) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		// No proxy: the sidecar is the gateway's private neighbour, and a
		// proxy's connections would hide the sidecar's restarts.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			changed.Add(1)
			return &watchedConn{Conn: c, changed: changed}, nil
		},
		MaxIdleConns:          maxSidecarConns,
		MaxIdleConnsPerHost:   maxSidecarConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport: t,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// watchedConn counts its end: a close or a failed read.
type watchedConn struct {
	net.Conn
	changed *atomic.Uint64
	once    sync.Once
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.ended()
	}
	return n, err
}

func (c *watchedConn) Close() error {
	c.ended()
	return c.Conn.Close()
}

func (c *watchedConn) ended() { c.once.Do(func() { c.changed.Add(1) }) }
