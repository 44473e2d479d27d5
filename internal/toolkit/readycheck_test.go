package toolkit_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// Readycheck prints exactly one line, the readiness message of a real
// /readyz (joined errors on one line), and exits 0 only when ready;
// Readiness, which the gateway's console uses, gives the same line.
func TestReadycheck(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		ready    func(context.Context) error
		handler  http.Handler // instead of a service
		down     bool
		wantCode int
		want     string
	}{
		{name: "ready", ready: nil, wantCode: 0, want: "ready"},
		{name: "not ready", wantCode: 1,
			ready: func(context.Context) error {
				return toolerr.New(toolerr.UpstreamUnavailable, "Sonarr host sonarr.lan cannot be resolved — check SONARR_URL")
			},
			want: "Sonarr host sonarr.lan cannot be resolved — check SONARR_URL"},
		{name: "two apps on one line", wantCode: 1,
			ready: func(context.Context) error {
				return toolerr.New(toolerr.UpstreamUnavailable, "Sonarr is down\nRadarr is down")
			},
			want: "Sonarr is down; Radarr is down"},
		{name: "not a service", handler: http.NotFoundHandler(), wantCode: 1, want: "/readyz answered HTTP 404 without a readable body"},
		{name: "nothing listening", down: true, wantCode: 1, want: "the service does not answer on"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := tc.handler
			if h == nil {
				h = newFixture(t, func(o *toolkit.Options) { o.Ready = tc.ready }).svc.Handler()
			}
			srv := httptest.NewServer(h)
			addr := strings.TrimPrefix(srv.URL, "http://")
			if tc.down {
				srv.Close()
			} else {
				defer srv.Close()
			}
			var out bytes.Buffer
			code := toolkit.Readycheck(context.Background(), addr, &out)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d", code, tc.wantCode)
			}
			if got := out.String(); strings.Count(got, "\n") != 1 || !strings.HasPrefix(got, tc.want) {
				t.Errorf("printed %q, want one line starting %q", got, tc.want)
			}
			// The gateway's console asks the same way and shows the same line.
			ready, line := toolkit.Readiness(context.Background(), http.DefaultClient, "http://"+addr+"/readyz")
			if ready != (tc.wantCode == 0) || line+"\n" != out.String() {
				t.Errorf("Readiness = %v %q, Readycheck printed %q", ready, line, out.String())
			}
		})
	}
}
