package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
)

// MaxResponseBytes caps the sidecar's answer; a decision is a few hundred
// bytes and a partial evaluation a few kilobytes, anything near this is
// not one.
const MaxResponseBytes = 64 << 10

// decisionPath is Query as an OPA Data API path. strict-builtin-errors makes
// a builtin error an HTTP 500 instead of an undefined rule, as in Embedded.
const decisionPath = "/v1/data/toolgate/authz/decision?strict-builtin-errors=true"

// compilePath is OPA's Compile API (partial evaluation). The sidecar's
// system policy lets the gateway ask it only compileQuery, with no more
// unknowns than varying.
const compilePath = "/v1/compile"

// compileQuery is the partial evaluation's query: the decision bound to
// resultVar, as the embedded engine asks it.
const compileQuery = resultVar + " = " + Query

// DefaultRemoteTimeout bounds one request to the sidecar when
// RemoteOptions.Timeout is zero.
const DefaultRemoteTimeout = 5 * time.Second

// rememberFor bounds how long a remembered sidecar decision is used: a
// backstop for a sidecar whose policy changes while the gateway's
// connections to it stay open (an OPA run with --watch or bundles, or a
// proxy in between); compose's sidecar changes its policy only by
// restarting, which the connections show at once (sidecarConns).
const rememberFor = 10 * time.Second

// Remote asks an OPA sidecar over its Data API. It is safe for concurrent use.
//
// Like Embedded, it remembers the decisions that partial evaluation proves
// independent of the arguments, ticket, user, time and preview (see
// constant.go), but the partial evaluation is the sidecar's own, of the
// policy and data the sidecar has loaded (its Compile API), and what it
// remembers is used only while nothing about the sidecar can have changed:
// no connection to it was opened, closed or lost since, and for at most
// rememberFor. Every other decision is one request to the sidecar.
type Remote struct {
	url, compileURL string
	token           []byte
	hc              *http.Client
	now             func() time.Time
	// conns changes whenever a connection to the sidecar opens, closes or
	// fails (sidecarTransport).
	conns *atomic.Uint64
	known *memory[knownKey, remoteKnown]
	// Requests sent, for tests: decisions and partial evaluations.
	decisions, compiles atomic.Int64
}

// remoteKnown is what the sidecar said about one known part.
type remoteKnown struct {
	decision Decision
	constant bool
	// conns is Remote.conns when it was learnt; until is when it expires.
	conns uint64
	until time.Time
}

var _ Engine = (*Remote)(nil)

// RemoteOptions configure NewRemote.
type RemoteOptions struct {
	// Timeout bounds each request to the sidecar; an unanswered decision
	// is a denial. Zero means DefaultRemoteTimeout.
	Timeout time.Duration
	// Now is the clock remembered decisions expire by (nil: time.Now).
	Now func() time.Time
}

// NewRemote returns an engine that POSTs to {baseURL}/v1/data/toolgate/authz/decision
// with token as its bearer token (the sidecar runs with
// --authentication=token and serves nothing without it; nil sends none).
// It keeps its own connections to the sidecar, never through a proxy and
// never following a redirect.
func NewRemote(baseURL string, token []byte, o RemoteOptions) *Remote {
	if o.Timeout <= 0 {
		o.Timeout = DefaultRemoteTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	base := strings.TrimRight(baseURL, "/")
	conns := new(atomic.Uint64)
	return &Remote{
		url: base + decisionPath, compileURL: base + compilePath, token: bytes.Clone(token),
		hc: sidecarClient(o.Timeout, conns), now: o.Now, conns: conns,
		known: newMemory[knownKey, remoteKnown](maxKnownDecisions),
	}
}

// Decide answers from memory when the sidecar proved the decision for in's
// known part constant and nothing about the sidecar changed since, and
// asks the sidecar otherwise.
func (r *Remote) Decide(ctx context.Context, in Input) (Decision, error) {
	key, ok := in.knownKey()
	if !ok {
		return r.ask(ctx, in)
	}
	conns, now := r.conns.Load(), r.now()
	if k, found := r.known.get(key); found && k.conns == conns && now.Before(k.until) {
		if k.constant {
			return k.decision, nil
		}
		return r.ask(ctx, in)
	}
	d, err := r.ask(ctx, in)
	if err != nil {
		return d, err
	}
	// First time for this known part (on these connections): is the
	// decision a constant? It must be what the sidecar just decided for
	// this very input; otherwise, or when the sidecar cannot tell, every
	// call of this known part asks the sidecar until the entry expires.
	c, isConstant := r.constant(ctx, in, key.fixed)
	if r.conns.Load() == conns {
		r.known.put(key, remoteKnown{decision: c, constant: isConstant && c == d, conns: conns, until: now.Add(rememberFor)})
	}
	return d, nil
}

// Probe asks the sidecar for a decision, never from memory: whether it
// answers now.
func (r *Remote) Probe(ctx context.Context) error {
	_, err := r.ask(ctx, ProbeInput(r.now()))
	return err
}

// ask posts {"input": in} and reads {"result": decision}.
func (r *Remote) ask(ctx context.Context, in Input) (Decision, error) {
	r.decisions.Add(1)
	raw, err := r.post(ctx, r.url, struct {
		Input Input `json:"input"`
	}{in})
	if err != nil {
		return failClosed, err
	}
	var envelope struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil {
		return failClosed, fmt.Errorf("%w: not a Data API response", ErrBadResponse)
	}
	// OPA omits "result" when the document is undefined.
	if len(envelope.Result) == 0 || bytes.Equal(envelope.Result, []byte("null")) {
		return failClosed, ErrUndefined
	}
	var d Decision
	if err := json.Unmarshal(envelope.Result, &d); err != nil {
		return failClosed, fmt.Errorf("%w: result is not a decision object", ErrInvalidDecision)
	}
	return checked(d)
}

// constant asks the sidecar to partially evaluate the decision for in's
// known part and reports whether what is left is one constant decision,
// and which. Any failure means "not known to be constant".
func (r *Remote) constant(ctx context.Context, in Input, fixed bool) (Decision, bool) {
	r.compiles.Add(1)
	unknowns := []string{}
	for _, f := range unknownFields(fixed) {
		unknowns = append(unknowns, "input."+f)
	}
	raw, err := r.post(ctx, r.compileURL, compileRequest{Query: compileQuery, Input: in.known(fixed), Unknowns: unknowns})
	if err != nil {
		return Decision{}, false
	}
	var resp struct {
		Result struct {
			Queries []ast.Body        `json:"queries"`
			Support []json.RawMessage `json:"support"`
		} `json:"result"`
	}
	// Support rules mean conditions on the unknowns: not a constant.
	if err := json.Unmarshal(raw, &resp); err != nil || len(resp.Result.Support) != 0 {
		return Decision{}, false
	}
	return constantOf(ctx, resp.Result.Queries)
}

// compileRequest is the body of a Compile API request; the sidecar's
// system policy accepts exactly these keys.
type compileRequest struct {
	Query    string     `json:"query"`
	Input    knownInput `json:"input"`
	Unknowns []string   `json:"unknowns"`
}

// knownInput is an input's known part (knownItems) in its JSON form.
type knownInput struct {
	Action      string      `json:"action"`
	Client      Client      `json:"client"`
	UserRole    string      `json:"user_role"`
	Service     string      `json:"service"`
	Tool        string      `json:"tool"`
	Write       bool        `json:"write"`
	Annotations Annotations `json:"annotations"`
	Transport   string      `json:"transport"`
	// Known only with fixed: no arguments ({}) and no ticket; the preview
	// is then known to be absent.
	Args   *struct{} `json:"args,omitempty"`
	Ticket *Ticket   `json:"ticket,omitempty"`
}

func (in Input) known(fixed bool) knownInput {
	k := knownInput{
		Action: in.Action, Client: in.Client, UserRole: in.UserRole, Service: in.Service, Tool: in.Tool,
		Write: in.Write, Annotations: in.Annotations, Transport: in.Transport,
	}
	if fixed {
		k.Args, k.Ticket = &struct{}{}, &Ticket{State: "none"}
	}
	return k
}

// post sends body as JSON to url and returns the answer of a 200.
func (r *Remote) post(ctx context.Context, url string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%w: encode input: %w", ErrBadResponse, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.token != nil {
		req.Header.Set("Authorization", "Bearer "+string(r.token))
	}

	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		// The body is not echoed: it may repeat parts of the input.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return nil, fmt.Errorf("%w: policy server refused the gateway (HTTP %d): the gateway's and the sidecar's TOOLGATE_POLICY_TOKEN_FILE must hold the same token", ErrUnavailable, resp.StatusCode)
		}
		return nil, fmt.Errorf("%w: policy server answered HTTP %d", ErrUnavailable, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrBadResponse, err)
	}
	if len(raw) > MaxResponseBytes {
		return nil, fmt.Errorf("%w: response exceeds %d bytes", ErrBadResponse, MaxResponseBytes)
	}
	return raw, nil
}

// ProbeInput is the question a readiness check asks: a list decision
// about no service (denied), whose answer only shows that the engine
// answers.
func ProbeInput(now time.Time) Input {
	return Input{Action: ActionList, Service: "-", Tool: "-", Time: now.UTC(), Ticket: Ticket{State: "none"}}
}

// Ready reports whether e answers now: a sidecar is asked, never its
// memory; any other engine decides ProbeInput.
func Ready(ctx context.Context, e Engine) error {
	if p, ok := e.(interface{ Probe(context.Context) error }); ok {
		return p.Probe(ctx)
	}
	_, err := e.Decide(ctx, ProbeInput(time.Now()))
	return err
}
