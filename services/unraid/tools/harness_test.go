package tools

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/unraid/fakeunraid"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

const (
	viewerKey = "viewer-Planted-unraid-key-5150"
	adminKey  = "admin-Planted-unraid-key-8086"
)

var testNow = time.Unix(1_765_000_000, 0)

type harness struct {
	fake *fakeunraid.Fake
	svc  *Service
	hc   *upstream.Client
}

// newHarness serves a demo fake and a service using key against it.
func newHarness(t testing.TB, key string, opts fakeunraid.Options, perWindow int) *harness {
	t.Helper()
	if opts.ViewerKey == "" {
		opts.ViewerKey = viewerKey
	}
	if opts.AdminKey == "" {
		opts.AdminKey = adminKey
	}
	fake := fakeunraid.New(opts, fakeunraid.DemoState(testNow))
	srv := httptest.NewServer(fake.Handler())
	t.Cleanup(srv.Close)
	hc, err := upstream.New(upstream.Config{Name: "Unraid", BaseURL: srv.URL, AllowHTTP: true, Retries: -1,
		Header: map[string][]string{"X-Api-Key": {key}}})
	if err != nil {
		t.Fatal(err)
	}
	if perWindow == 0 {
		perWindow = unraidapi.ThrottleLimit
	}
	api := unraidapi.New(hc, unraidapi.NewLimiter(perWindow, unraidapi.DefaultMaxWait, nil, nil), slog.New(slog.DiscardHandler))
	svc := New(api, slog.New(slog.DiscardHandler))
	svc.now = func() time.Time { return testNow }
	return &harness{fake: fake, svc: svc, hc: hc}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func slicesContains(s []string, v string) bool { return slices.Contains(s, v) }
