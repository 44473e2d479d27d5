package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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
// constant.go) and decides the others by their residual once it agreed
// with the sidecar on residualChecks calls (residual.go), but the partial
// evaluation is the sidecar's own, of the policy and data the sidecar has
// loaded (its Compile API), a residual is used only when it refers to no
// data, and what is remembered is used only while nothing about the
// sidecar can have changed: no connection to it was opened, closed or lost
// since, and for at most rememberFor. Every other decision is one request
// to the sidecar.
type Remote struct {
	url, compileURL string
	token           []byte
	hc              *http.Client
	now             func() time.Time
	// conns changes whenever a connection to the sidecar opens, closes or
	// fails (sidecarTransport).
	conns *atomic.Uint64
	known *memory[knownKey, remoteKnown]
	// compiled shares residuals between known parts (residual.go).
	compiledMu sync.Mutex
	compiled   *residuals
	// Requests sent, for tests: decisions and partial evaluations; and
	// residual evaluations.
	decisions, compiles, residuals atomic.Int64
}

// remoteKnown is what the sidecar said about one known part.
type remoteKnown struct {
	decision Decision
	constant bool
	// residual, when not constant: see known.
	residual *residual
	checked  *atomic.Int32
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
		known:    newMemory[knownKey, remoteKnown](maxKnownDecisions),
		compiled: &residuals{m: map[string]*residual{}, max: maxKnownDecisions},
	}
}

// Decide answers from memory when the sidecar proved the decision for in's
// known part constant, with the sidecar's residual for that known part once
// it agreed with the sidecar residualChecks times, and asks the sidecar
// otherwise; remembered answers only while nothing about the sidecar
// changed since.
func (r *Remote) Decide(ctx context.Context, in Input) (Decision, error) {
	key, ok := in.knownKey()
	if !ok {
		return r.ask(ctx, in)
	}
	conns, now := r.conns.Load(), r.now()
	if k, found := r.known.get(key); found && k.conns == conns && now.Before(k.until) {
		switch {
		case k.constant:
			return k.decision, nil
		case k.residual != nil:
			return r.decideResidual(ctx, key, k, in)
		}
		return r.ask(ctx, in)
	}
	d, err := r.ask(ctx, in)
	if err != nil {
		return d, err
	}
	// First time for this known part (on these connections): is the
	// decision a constant? It must be what the sidecar just decided for
	// this very input, and so must its residual's answer; otherwise, or
	// when the sidecar cannot tell, every call of this known part asks the
	// sidecar until the entry expires.
	c, isConstant, res := r.partial(ctx, in, key.fixed)
	k := remoteKnown{decision: c, constant: isConstant && c == d, conns: conns, until: now.Add(rememberFor)}
	if !isConstant && res != nil && !res.disagreed.Load() {
		if rd, rerr := r.evalResidual(ctx, res, in); rerr == nil && rd == d {
			k.residual, k.checked = res, new(atomic.Int32)
		}
	}
	if r.conns.Load() == conns {
		r.known.put(key, k)
	}
	return d, nil
}

// decideResidual answers with the residual of in's known part; during its
// first residualChecks calls the sidecar must agree, and when it does not,
// the sidecar decides this known part from then on, and the residual is
// used for no known part again (not after the entry expired either: the
// sidecar would hand out the same program).
func (r *Remote) decideResidual(ctx context.Context, key knownKey, k remoteKnown, in Input) (Decision, error) {
	if k.checked.Load() >= residualChecks {
		return r.evalResidual(ctx, k.residual, in)
	}
	d, err := r.ask(ctx, in)
	rd, rerr := r.evalResidual(ctx, k.residual, in)
	if (err == nil) != (rerr == nil) || rd != d {
		k.residual.disagreed.Store(true)
		r.known.put(key, remoteKnown{conns: k.conns, until: k.until})
		return d, err
	}
	k.checked.Add(1)
	return d, err
}

func (r *Remote) evalResidual(ctx context.Context, res *residual, in Input) (Decision, error) {
	r.residuals.Add(1)
	return res.eval(ctx, in)
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

// partial asks the sidecar to partially evaluate the decision for in's
// known part and reports whether what is left is one constant decision,
// and which; when it is not, it returns the residual to evaluate instead
// (nil when there is none that can be used). Any failure means "not known
// to be constant" and no residual.
func (r *Remote) partial(ctx context.Context, in Input, fixed bool) (Decision, bool, *residual) {
	r.compiles.Add(1)
	unknowns := []string{}
	for _, f := range unknownFields(fixed) {
		unknowns = append(unknowns, "input."+f)
	}
	raw, err := r.post(ctx, r.compileURL, compileRequest{Query: compileQuery, Input: in.known(fixed), Unknowns: unknowns})
	if err != nil {
		return Decision{}, false, nil
	}
	var resp struct {
		Result struct {
			Queries []ast.Body    `json:"queries"`
			Support []*ast.Module `json:"support"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return Decision{}, false, nil
	}
	// Support rules mean conditions on the unknowns: not a constant.
	if len(resp.Result.Support) == 0 {
		if d, ok := constantOf(ctx, resp.Result.Queries); ok {
			return d, true, nil
		}
	}
	// The gateway has none of the sidecar's data: a residual that still
	// refers to it cannot be used.
	r.compiledMu.Lock()
	defer r.compiledMu.Unlock()
	return Decision{}, false, r.compiled.compile(ctx, resp.Result.Queries, resp.Result.Support, nil, remoteResidualRoots)
}

// remoteResidualRoots are where a sidecar's residual may refer: itself and
// its support rules.
var remoteResidualRoots = []ast.Ref{
	ast.MustParseRef("data." + residualPackage),
	ast.MustParseRef("data.partial"),
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
