package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/capture"
	"log/slog"
)

type received struct {
	header http.Header
	body   string
}

func sink(t *testing.T, status int) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Header.Clone(), string(b)})
		mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received { mu.Lock(); defer mu.Unlock(); return append([]received(nil), got...) }
}

var pending = Pending{Client: "openwebui", Service: "homeassistant", Tool: "ha_lock_unlock",
	Expires: time.Date(2026, 12, 3, 10, 10, 0, 0, time.UTC), Link: "https://approvals.home.lan/approvals/link/n.1.m"}

func TestWebhookSendsOnlyNamesAndTheLink(t *testing.T) {
	srv, got := sink(t, 200)
	n := New(nil, &Webhook{URL: srv.URL + "/hook", Client: NewHTTPClient()})
	n.Notify(pending)
	n.Wait()
	if len(got()) != 1 {
		t.Fatalf("%d requests", len(got()))
	}
	r := got()[0]
	if r.header.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", r.header.Get("Content-Type"))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"event": "ticket_pending", "client": "openwebui", "service": "homeassistant", "tool": "ha_lock_unlock",
		"expires_at": "2026-12-03T10:10:00Z", "link": pending.Link}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	allowed := map[string]bool{"event": true, "client": true, "service": true, "tool": true, "expires_at": true, "link": true, "title": true, "text": true}
	for k := range m {
		if !allowed[k] {
			t.Errorf("the webhook carries %q", k)
		}
	}
}

func TestNtfyPublishesTitleClickAndToken(t *testing.T) {
	srv, got := sink(t, 200)
	n := New(nil, &Ntfy{TopicURL: srv.URL + "/toolgate-approvals", Token: []byte("tk_ntfy-access\n"), Client: NewHTTPClient()})
	n.Notify(pending)
	n.Wait()
	r := got()[0]
	if r.header.Get("Title") != "toolgate: approval needed" || r.header.Get("Click") != pending.Link ||
		r.header.Get("Authorization") != "Bearer tk_ntfy-access" || !strings.Contains(r.header.Get("Actions"), pending.Link) {
		t.Errorf("headers %v", r.header)
	}
	if !strings.Contains(r.body, "openwebui asks to run ha_lock_unlock (homeassistant)") {
		t.Errorf("message %q", r.body)
	}
}

func TestFailedNotificationIsLoggedWithoutTheURLsSecrets(t *testing.T) {
	var logs capture.Buffer
	srv, _ := sink(t, 500)
	redirect := httptest.NewServer(http.RedirectHandler(srv.URL+"/elsewhere", http.StatusFound))
	t.Cleanup(redirect.Close)
	n := New(slog.New(slog.NewJSONHandler(&logs, nil)),
		&Webhook{URL: srv.URL + "/hook?token=hook-secret-123", Client: NewHTTPClient()},
		&Ntfy{TopicURL: redirect.URL + "/secret-topic-name", Client: NewHTTPClient()})
	n.Notify(pending)
	n.Wait()
	out := logs.String()
	if strings.Count(out, "notification failed") != 2 || !strings.Contains(out, "HTTP 500") || !strings.Contains(out, "HTTP 302") {
		t.Fatalf("logs:\n%s", out)
	}
	for _, secret := range []string{"hook-secret-123", "secret-topic-name"} {
		if strings.Contains(out, secret) {
			t.Errorf("logs contain %q", secret)
		}
	}
}

type blocking struct{ release chan struct{} }

func (b *blocking) Name() string { return "blocking" }
func (b *blocking) Send(ctx context.Context, _ Pending) error {
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return nil
}

func TestASlowReceiverNeverHoldsUpTheCall(t *testing.T) {
	b := &blocking{release: make(chan struct{})}
	var logs capture.Buffer
	n := New(slog.New(slog.NewJSONHandler(&logs, nil)), b)
	start := time.Now()
	for range maxInFlight + 5 {
		n.Notify(pending)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Notify blocked for %v", d)
	}
	close(b.release)
	n.Wait()
	if strings.Count(logs.String(), "notification dropped") != 5 {
		t.Errorf("want 5 dropped:\n%s", logs.String())
	}
	if New(nil).Enabled() {
		t.Error("a notifier without senders is enabled")
	}
}

func TestHomeAssistantSendsThroughTheToolServiceWithItsToken(t *testing.T) {
	srv, got := sink(t, http.StatusNoContent)
	u, err := HomeAssistantURL(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	n := New(nil, &HomeAssistant{URL: u, Token: []byte("service-token-ha"), Client: NewHTTPClient()})
	n.Notify(pending)
	n.Wait()
	if len(got()) != 1 {
		t.Fatalf("%d requests", len(got()))
	}
	r := got()[0]
	if r.header.Get("Authorization") != "Bearer service-token-ha" || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", r.header)
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["title"] != pending.Title() || m["message"] != pending.Text() || m["url"] != pending.Link {
		t.Errorf("body %v", m)
	}
}

func TestHomeAssistantURLIsTheServicesNotifyRoute(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://homeassistant:8000/mcp", "http://homeassistant:8000/internal/notify"},
		{"http://homeassistant:8000/mcp/", "http://homeassistant:8000/internal/notify"},
		{"https://ha.lan/toolgate/mcp?x=1#f", "https://ha.lan/toolgate/internal/notify"},
		{"http://homeassistant:8000", "http://homeassistant:8000/internal/notify"},
	} {
		got, err := HomeAssistantURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := HomeAssistantURL("homeassistant/mcp"); err == nil {
		t.Error("a relative URL is accepted")
	}
}
