package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// Target is a tool service whose readiness the console shows.
type Target struct {
	Service string
	// ReadyURL is the service's /readyz.
	ReadyURL string
}

// ReadyURL is the /readyz beside a service's MCP URL.
func ReadyURL(mcpURL string) (string, error) {
	u, err := url.Parse(mcpURL)
	if err != nil {
		return "", err
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/readyz", "", "", ""
	return u.String(), nil
}

// ReadyState is what a service last said about its readiness.
type ReadyState struct {
	Ready bool
	// Message is the service's own line: "ready", or what to fix (the
	// words install.sh and doctor show).
	Message string
	Checked time.Time
}

// Down reports a service that did not answer at all: not running (its
// profile is off, say) rather than failing.
func (s ReadyState) Down() bool {
	return !s.Ready && strings.HasPrefix(s.Message, toolkit.NotAnswering)
}

// readiness asks the services' /readyz, at most every readyEvery and
// only while someone looks: each /readyz asks the home-lab application
// behind it.
type readiness struct {
	targets []Target
	hc      *http.Client
	now     func() time.Time

	mu      sync.Mutex
	states  map[string]ReadyState
	running chan struct{} // closed when the round under way ends; nil when none
	last    time.Time
}

const readyEvery = 30 * time.Second

func newReadiness(targets []Target, hc *http.Client, now func() time.Time) *readiness {
	return &readiness{targets: targets, hc: hc, now: now, states: map[string]ReadyState{}}
}

// get returns what is known, after starting a round of checks when the
// last one is older than readyEvery and waiting up to wait for it.
func (r *readiness) get(ctx context.Context, wait time.Duration) map[string]ReadyState {
	r.mu.Lock()
	done := r.running
	if done == nil && r.now().Sub(r.last) >= readyEvery {
		done = make(chan struct{})
		r.running = done
		go r.round(context.WithoutCancel(ctx), done)
	}
	r.mu.Unlock()
	if done != nil {
		t := time.NewTimer(wait)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]ReadyState, len(r.states))
	for k, v := range r.states {
		out[k] = v
	}
	return out
}

func (r *readiness) round(ctx context.Context, done chan struct{}) {
	var wg sync.WaitGroup
	for _, t := range r.targets {
		wg.Go(func() {
			ready, msg := toolkit.Readiness(ctx, r.hc, t.ReadyURL)
			r.mu.Lock()
			r.states[t.Service] = ReadyState{Ready: ready, Message: msg, Checked: r.now()}
			r.mu.Unlock()
		})
	}
	wg.Wait()
	r.mu.Lock()
	r.running, r.last = nil, r.now()
	r.mu.Unlock()
	close(done)
}
