package tools

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// Unraid reports a failure as GraphQL errors, usually with HTTP 200
// (unraid/api's vms.service.ts throws GraphQLError('VMs are not
// available')). Its message reaches the result framed as Unraid's words;
// the extensions (Apollo's stack trace) and the key never do.
func TestUnraidsReasonReachesTheResult(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		code   toolerr.Code
		has    string
	}{
		{"a resolver's failure", http.StatusOK,
			`{"errors":[{"message":"VMs are not available","locations":[{"line":2,"column":3}],"path":["vms"],"extensions":{"code":"INTERNAL_SERVER_ERROR","stacktrace":["GraphQLError: VMs are not available","    at VmsService.ensureHypervisorAvailable (/usr/local/unraid-api/dist/main.js:1:2)"]}}],"data":null}`,
			toolerr.UpstreamUnavailable, `Unraid said: \"VMs are not available\"`},
		{"bad arguments", http.StatusBadRequest,
			`{"errors":[{"message":"Variable \"$id\" got invalid value 5; ID cannot represent value: 5","extensions":{"code":"BAD_USER_INPUT"}}]}`,
			toolerr.InvalidArgument, `Unraid said: \"Variable \\\"$id\\\" got invalid value 5; ID cannot represent value: 5\"`},
		{"the key in a message", http.StatusOK,
			`{"errors":[{"message":"session for ` + viewerKey + ` expired","extensions":{"code":"INTERNAL_SERVER_ERROR"}}],"data":null}`,
			toolerr.UpstreamUnavailable, `Unraid said: \"session for [REDACTED] expired\"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			t.Cleanup(srv.Close)
			hc, err := upstream.New(upstream.Config{Name: "Unraid", BaseURL: srv.URL, AllowHTTP: true, Retries: -1,
				Header: http.Header{"X-Api-Key": {viewerKey}}})
			if err != nil {
				t.Fatal(err)
			}
			api := unraidapi.New(hc, unraidapi.NewLimiter(unraidapi.ThrottleLimit, unraidapi.DefaultMaxWait, nil, nil), slog.New(slog.DiscardHandler))
			svc := toolkittest.Start(t, "unraid", New(api, slog.New(slog.DiscardHandler)).Tools())
			svc.RunReads(t, []toolkittest.ReadCase{{Name: tc.name, Tool: "unraid_vm_list", Code: tc.code,
				Has: []string{tc.has}, HasNot: []string{"stacktrace", "VmsService", "main.js"}}}, viewerKey)
		})
	}
}
