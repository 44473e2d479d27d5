package admin

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeCatalog answers a fixed listing and counts refreshes.
type fakeCatalog struct {
	refreshed atomic.Int64
	list      []ClientEndpoints
}

func (f *fakeCatalog) Refresh(context.Context) { f.refreshed.Add(1) }
func (f *fakeCatalog) ClientEndpoints(context.Context) []ClientEndpoints {
	// What a refresh brings in shows only after it.
	if f.refreshed.Load() == 0 {
		return f.list[:1]
	}
	return f.list
}

// endpoints list prints one line per client and endpoint with tools;
// --refresh has the catalog read again first, so a service that came up
// a moment ago is in the listing; without a token nothing is answered.
func TestCLIEndpointsList(t *testing.T) {
	cat := &fakeCatalog{list: []ClientEndpoints{
		{Client: "openwebui", Groups: []string{"users"}, Endpoints: []EndpointTools{{Endpoint: "web", Tools: 3}}},
		{Client: "demo-admin", Groups: []string{"admins"}, Endpoints: []EndpointTools{{Endpoint: "sonarr", Tools: 12}, {Endpoint: "web", Tools: 3}}},
		{Client: "stranger", Groups: []string{"nobody"}, Endpoints: []EndpointTools{}},
	}}
	e := newCLIEnv(t)
	h, err := NewHandler([]byte(testToken), e.tickets, e.pins, nil, slog.New(slog.DiscardHandler), WithCatalog(cat))
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)

	out, err := run(t, e, "endpoints", "list")
	if err != nil || strings.Contains(out, "sonarr") || !strings.Contains(out, "openwebui  users   web       3") {
		t.Fatalf("endpoints list before a refresh: %v\n%s", err, out)
	}
	out, err = run(t, e, "endpoints", "list", "--refresh")
	if err != nil || cat.refreshed.Load() != 1 {
		t.Fatalf("endpoints list --refresh: %v, %d refreshes\n%s", err, cat.refreshed.Load(), out)
	}
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	if want := "openwebui users web 3|demo-admin admins sonarr 12|demo-admin admins web 3|stranger nobody - 0"; strings.Join(rows, "|") != want {
		t.Errorf("rows %q, want %q", rows, want)
	}

	var out2 bytes.Buffer
	bad := &CLI{BaseURL: e.srv.URL, Token: []byte("wrong-token-0123456789"), HTTPClient: e.srv.Client(), Out: &out2}
	if err := bad.Run(context.Background(), []string{"endpoints", "list", "--refresh"}); !errors.Is(err, ErrUnauthorized) || cat.refreshed.Load() != 1 {
		t.Errorf("a wrong token: %v, %d refreshes", err, cat.refreshed.Load())
	}
	if res, err := e.srv.Client().Get(e.srv.URL + "/admin/refresh"); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /admin/refresh without a token: %v %v", res.StatusCode, err)
	}
}
