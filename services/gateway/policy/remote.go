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
	"github.com/open-policy-agent/opa/v1/rego"
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
// unknowns than perCallFields.
const compilePath = "/v1/compile"

// compileQuery is the partial evaluation's query: the decision bound to
// resultVar, as the embedded engine asks it.
const compileQuery = resultVar + " = " + Query

// DefaultRemoteTimeout bounds one request to the sidecar when
// RemoteOptions.Timeout is zero.
const DefaultRemoteTimeout = 5 * time.Second

// sidecarExpiry bounds how long a remembered sidecar decision is used: a
// backstop for a sidecar whose policy changes while the gateway's
// connections to it stay open (an OPA run with --watch or bundles, or a
// proxy in between); compose's sidecar changes its policy only by
// restarting, which the connections show at once (sidecarClient).
const sidecarExpiry = 10 * time.Second

// Remote asks an OPA sidecar over its Data API. It is safe for concurrent use.
//
// Like Embedded it remembers (decisionCache), but from the sidecar's own
// partial evaluation (its Compile API) of the policy and data it has
// loaded; a residual is used only when it refers to no data, and a plan
// only while nothing about the sidecar can have changed: no connection to
// it was opened, closed or lost since, and for at most sidecarExpiry.
type Remote struct{ *decisionCache }

var _ Engine = (*Remote)(nil)

// sidecar is the client of the OPA sidecar's HTTP API.
type sidecar struct {
	url, compileURL string
	token           []byte
	hc              *http.Client
}

// remoteResidualRoots are where a sidecar's residual may refer: itself and
// its support rules.
var remoteResidualRoots = []ast.Ref{
	ast.MustParseRef("data." + residualPackage),
	ast.MustParseRef("data.partial"),
}

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
	s := &sidecar{
		url: base + decisionPath, compileURL: base + compilePath, token: bytes.Clone(token),
		hc: sidecarClient(o.Timeout, conns),
	}
	return &Remote{newDecisionCache(s, cacheOptions{
		residualRoots: remoteResidualRoots, changes: conns, rememberFor: sidecarExpiry, now: o.Now,
	})}
}

// Probe asks the sidecar for a decision, never from memory: whether it
// answers now.
func (r *Remote) Probe(ctx context.Context) error {
	_, err := r.evaluate(ctx, ProbeInput(r.now()))
	return err
}

// evaluate posts {"input": in} and reads {"result": decision}.
func (s *sidecar) evaluate(ctx context.Context, in Input) (Decision, error) {
	raw, err := s.post(ctx, s.url, struct {
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
// static part.
func (s *sidecar) partial(ctx context.Context, in Input, noArgs bool) (*rego.PartialQueries, error) {
	unknowns := []string{}
	for _, f := range unknownFields(noArgs) {
		unknowns = append(unknowns, "input."+f)
	}
	raw, err := s.post(ctx, s.compileURL, compileRequest{Query: compileQuery, Input: in.staticInput(noArgs), Unknowns: unknowns})
	if err != nil {
		return nil, err
	}
	var resp struct {
		Result struct {
			Queries []ast.Body    `json:"queries"`
			Support []*ast.Module `json:"support"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("%w: not a Compile API response", ErrBadResponse)
	}
	return &rego.PartialQueries{Queries: resp.Result.Queries, Support: resp.Result.Support}, nil
}

// compileRequest is the body of a Compile API request; the sidecar's
// system policy accepts exactly these keys.
type compileRequest struct {
	Query    string      `json:"query"`
	Input    staticInput `json:"input"`
	Unknowns []string    `json:"unknowns"`
}

// staticInput is an input's static part (staticItems) in its JSON form.
type staticInput struct {
	Action      string      `json:"action"`
	Client      Client      `json:"client"`
	UserRole    string      `json:"user_role"`
	Service     string      `json:"service"`
	Tool        string      `json:"tool"`
	Write       bool        `json:"write"`
	Annotations Annotations `json:"annotations"`
	Transport   string      `json:"transport"`
	// Static only with noArgs: no arguments ({}) and no ticket; the
	// preview is then known to be absent.
	Args   *struct{} `json:"args,omitempty"`
	Ticket *Ticket   `json:"ticket,omitempty"`
}

func (in Input) staticInput(noArgs bool) staticInput {
	k := staticInput{
		Action: in.Action, Client: in.Client, UserRole: in.UserRole, Service: in.Service, Tool: in.Tool,
		Write: in.Write, Annotations: in.Annotations, Transport: in.Transport,
	}
	if noArgs {
		k.Args, k.Ticket = &struct{}{}, &Ticket{State: "none"}
	}
	return k
}

// post sends body as JSON to url and returns the answer of a 200.
func (s *sidecar) post(ctx context.Context, url string, body any) ([]byte, error) {
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
	if s.token != nil {
		req.Header.Set("Authorization", "Bearer "+string(s.token))
	}

	resp, err := s.hc.Do(req)
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
