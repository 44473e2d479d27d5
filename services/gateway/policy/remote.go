package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// MaxResponseBytes caps the sidecar's answer; a decision is a few hundred
// bytes, anything near this is not one.
const MaxResponseBytes = 64 << 10

// decisionPath is Query as an OPA Data API path. strict-builtin-errors makes
// a builtin error an HTTP 500 instead of an undefined rule, as in Embedded.
const decisionPath = "/v1/data/toolgate/authz/decision?strict-builtin-errors=true"

// Remote asks an OPA sidecar over its Data API. It is safe for concurrent use.
type Remote struct {
	url   string
	token []byte
	hc    *http.Client
}

var _ Engine = (*Remote)(nil)

// NewRemote returns an engine that POSTs to {baseURL}/v1/data/toolgate/authz/decision
// with token as its bearer token (the sidecar runs with
// --authentication=token and serves nothing without it; nil sends none).
// hc should carry a timeout and a transport sized for the gateway's
// concurrency; nil means a private client with a 5 s timeout. Redirects are
// never followed by that default client.
func NewRemote(baseURL string, token []byte, hc *http.Client) *Remote {
	if hc == nil {
		hc = &http.Client{
			Timeout: 5 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return &Remote{url: strings.TrimRight(baseURL, "/") + decisionPath, token: bytes.Clone(token), hc: hc}
}

// Decide posts {"input": in} and reads {"result": decision}.
func (r *Remote) Decide(ctx context.Context, in Input) (Decision, error) {
	body, err := json.Marshal(struct {
		Input Input `json:"input"`
	}{in})
	if err != nil {
		return failClosed, fmt.Errorf("%w: encode input: %w", ErrBadResponse, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return failClosed, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.token != nil {
		req.Header.Set("Authorization", "Bearer "+string(r.token))
	}

	resp, err := r.hc.Do(req)
	if err != nil {
		return failClosed, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		// The body is not echoed: it may repeat parts of the input.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBytes))
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			return failClosed, fmt.Errorf("%w: policy server refused the gateway (HTTP %d): the gateway's and the sidecar's TOOLGATE_POLICY_TOKEN_FILE must hold the same token", ErrUnavailable, resp.StatusCode)
		}
		return failClosed, fmt.Errorf("%w: policy server answered HTTP %d", ErrUnavailable, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return failClosed, fmt.Errorf("%w: read: %w", ErrBadResponse, err)
	}
	if len(raw) > MaxResponseBytes {
		return failClosed, fmt.Errorf("%w: response exceeds %d bytes", ErrBadResponse, MaxResponseBytes)
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
