package policy

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// allowEverything is what an attacker on the sidecar's network would PUT:
// every call allowed, no ticket, no person.
const allowEverything = `package toolgate.authz

decision := {"decision": "allow", "reason": "owned", "reason_id": "r", "approval": "model", "ttl_seconds": 0}
`

// nobody is a client whose groups allow nothing, writing destructively.
func nobody() Input {
	return with(write("demo_counter_reset"), func(in *Input) {
		in.Service = "demo"
		in.Client = Client{Name: "intruder", Groups: []string{"nobody"}}
		in.Annotations.Destructive = true
	})
}

// TestPolicySidecarRefusesWrites runs opa with compose's command line and
// tries what a compromised neighbour would: replace the policy or its data,
// read them, query freely — without a token, with a wrong one and with the
// gateway's own. Only the gateway's decision query, its partial evaluation
// and the health check pass.
func TestPolicySidecarRefusesWrites(t *testing.T) {
	sidecar := opatest.Start(t, policiesDir(t))
	hc := &http.Client{Timeout: 10 * time.Second}

	d, err := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 10 * time.Second}).Decide(t.Context(), nobody())
	if err != nil || d.Decision != Deny {
		t.Fatalf("decision with the gateway's token: %+v, %v; want deny", d, err)
	}
	for name, token := range map[string][]byte{"no token": nil, "wrong token": []byte("not-the-policy-token")} {
		if _, err := NewRemote(sidecar.URL, token, RemoteOptions{Timeout: 10 * time.Second}).Decide(t.Context(), read()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("decision with %s: err = %v, want a 401 refusal", name, err)
		}
	}

	requests := []struct{ method, path, body string }{
		{http.MethodPut, "/v1/policies/toolgate-owned", allowEverything},
		{http.MethodDelete, "/v1/policies/authz.rego", ""},
		{http.MethodPut, "/v1/data/data/toolgate/groups", `{"nobody":{"services":["*"]}}`},
		{http.MethodPatch, "/v1/data/data/toolgate", `[{"op":"add","path":"groups/nobody","value":{"services":["*"]}}]`},
		{http.MethodGet, "/v1/data", ""},
		{http.MethodGet, "/v1/data/data/toolgate/groups", ""},
		{http.MethodGet, "/v1/policies", ""},
		{http.MethodPost, "/v1/query", `{"query":"data"}`},
		// The partial evaluation the gateway may ask is of the decision only,
		// with only the per-call fields unknown.
		{http.MethodPost, "/v1/compile", `{"query":"data","input":{},"unknowns":["input.user"]}`},
		{http.MethodPost, "/v1/compile", `{"query":"x = data.data.toolgate","input":{},"unknowns":["input.user"]}`},
		{http.MethodPost, "/v1/compile", `{"query":"toolgate_decision = data.toolgate.authz.decision","input":{},"unknowns":["data"]}`},
		{http.MethodPost, "/v1/compile", `{"query":"toolgate_decision = data.toolgate.authz.decision","input":{},"unknowns":["input.user"],"options":{"disableInlining":["data"]}}`},
		{http.MethodPost, "/v1/compile?explain=full", `{"query":"toolgate_decision = data.toolgate.authz.decision","input":{},"unknowns":["input.user"]}`},
		{http.MethodGet, "/v1/config", ""},
		{http.MethodGet, "/metrics", ""},
		{http.MethodPost, "/v1/data/toolgate/authz/decision?explain=full", `{"input":{}}`},
	}
	tokens := map[string]string{"no token": "", "wrong token": "not-the-policy-token", "the gateway's token": string(sidecar.Token)}
	for _, r := range requests {
		for who, token := range tokens {
			t.Run(r.method+" "+r.path+" with "+who, func(t *testing.T) {
				if status := send(t, hc, sidecar.URL, r.method, r.path, token, r.body); status != http.StatusUnauthorized {
					t.Fatalf("HTTP %d, want 401", status)
				}
			})
		}
	}
	for who, token := range tokens {
		want := http.StatusUnauthorized
		if who == "the gateway's token" {
			want = http.StatusOK
		}
		if status := send(t, hc, sidecar.URL, http.MethodGet, "/health", token, ""); status != want {
			t.Errorf("GET /health with %s: HTTP %d, want %d", who, status, want)
		}
	}

	// The gateway's own partial evaluation passes, with its token only.
	partial := `{"query":"toolgate_decision = data.toolgate.authz.decision","input":{"action":"call"},"unknowns":["input.user","input.args","input.ticket","input.time","input.preview"]}`
	for who, token := range tokens {
		want := http.StatusUnauthorized
		if who == "the gateway's token" {
			want = http.StatusOK
		}
		if status := send(t, hc, sidecar.URL, http.MethodPost, "/v1/compile", token, partial); status != want {
			t.Errorf("the gateway's partial evaluation with %s: HTTP %d, want %d", who, status, want)
		}
	}

	// Nothing above changed a decision.
	d, err = NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{Timeout: 10 * time.Second}).Decide(t.Context(), nobody())
	if err != nil || d.Decision != Deny {
		t.Fatalf("after the attempts: %+v, %v; want deny", d, err)
	}
}

// send makes one request and returns its status.
func send(t *testing.T, hc *http.Client, base, method, path, token, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}
