package policy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/gateway/policy/opatest"
)

// TestPolicySidecarLogsNoArguments: with compose's command line, what the
// sidecar writes to its log (docker logs) holds no call argument, no user
// and not the gateway's token.
func TestPolicySidecarLogsNoArguments(t *testing.T) {
	sidecar := opatest.Start(t, policiesDir(t))
	const planted = "planted-argument-SECRET-4711"
	in := with(write("demo_counter_add"), func(in *Input) {
		in.Service = "demo"
		in.User = "planted-user@example.org"
		in.Args = map[string]any{"note": planted}
	})
	if _, err := NewRemote(sidecar.URL, sidecar.Token, RemoteOptions{}).Decide(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	// OPA logs its response line after answering: wait for it, so that
	// everything logged about the request is there (the decision log line
	// would come before it).
	var log string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		log = sidecar.Log.String()
		if answeredDecision(log) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sidecar logged no response to the decision request; is the log level right?\n%s", log)
		}
	}
	for _, secret := range []string{planted, in.User, string(sidecar.Token)} {
		if strings.Contains(log, secret) {
			t.Errorf("the sidecar's log holds %q:\n%s", secret, log)
		}
	}
}

// answeredDecision reports whether OPA's JSON log has the response line of a
// decision request.
func answeredDecision(log string) bool {
	for line := range strings.Lines(log) {
		var l struct {
			Msg    string `json:"msg"`
			Method string `json:"req_method"`
			Path   string `json:"req_path"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "Sent response." && l.Method == http.MethodPost &&
			strings.HasPrefix(l.Path, "/v1/data/toolgate/authz/decision") {
			return true
		}
	}
	return false
}
