package notify

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/homeassistant/fakehass"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const token = "ha-notify-Planted-token-0123456789"

func client(t *testing.T, base string) *hass.Client {
	t.Helper()
	up, err := upstream.New(upstream.Config{Name: "Home Assistant", BaseURL: base, AllowHTTP: true,
		Header: http.Header{"Authorization": {"Bearer " + token}}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return hass.New(up)
}

// The handler sends exactly one notify.<service> call with the title, the
// message and the link where the companion apps look for it; anything
// else is refused before Home Assistant is asked.
func TestNotificationReachesHomeAssistantsNotifyService(t *testing.T) {
	const link = "https://gw.lan:8081/approvals/link/n.1.m"
	cases := []struct {
		name    string
		service string
		body    string
		status  int
		sent    bool
		says    string
	}{
		{"title, message and link", "mobile_app_pixel_8", `{"title":"toolgate: approval needed","message":"openwebui asks","url":"` + link + `"}`, http.StatusNoContent, true, ""},
		{"no link", "mobile_app_pixel_8", `{"title":"t","message":"m"}`, http.StatusNoContent, true, ""},
		{"notifications off", "", `{"title":"t","message":"m"}`, http.StatusNotFound, false, EnvService},
		{"unknown field", "mobile_app_pixel_8", `{"title":"t","message":"m","target":"all"}`, http.StatusBadRequest, false, "{title, message, url}"},
		{"no message", "mobile_app_pixel_8", `{"title":"t"}`, http.StatusBadRequest, false, "required"},
		{"too long", "mobile_app_pixel_8", `{"title":"t","message":"` + strings.Repeat("x", maxMessage+1) + `"}`, http.StatusBadRequest, false, "limited"},
		{"script link", "mobile_app_pixel_8", `{"title":"t","message":"m","url":"javascript:alert(1)"}`, http.StatusBadRequest, false, "http or https"},
		{"link with credentials", "mobile_app_pixel_8", `{"title":"t","message":"m","url":"https://u:p@gw.lan/"}`, http.StatusBadRequest, false, "credentials"},
		{"not JSON", "mobile_app_pixel_8", `title=t`, http.StatusBadRequest, false, "body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := fakehass.New(fakehass.Options{Token: token})
			srv := httptest.NewServer(fake.Handler())
			t.Cleanup(srv.Close)
			h := New(client(t, srv.URL), c.service, slog.New(slog.DiscardHandler))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/internal/notify", strings.NewReader(c.body)))
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.says) {
				t.Fatalf("HTTP %d %s; want %d with %q", rec.Code, rec.Body, c.status, c.says)
			}
			calls := fake.Calls()
			if !c.sent {
				if len(calls) != 0 {
					t.Fatalf("Home Assistant was asked: %+v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].Domain != "notify" || calls[0].Service != c.service || calls[0].Data["title"] == nil || calls[0].Data["message"] == nil {
				t.Fatalf("calls %+v", calls)
			}
			data, _ := calls[0].Data["data"].(map[string]any)
			if strings.Contains(c.body, link) && (data["url"] != link || data["clickAction"] != link) {
				t.Errorf("the link is not where the companion apps look: %+v", calls[0].Data)
			}
		})
	}
}

// Home Assistant down: the gateway gets a 502 saying so, and neither the
// answer nor the log carries the token.
func TestAFailedNotificationSaysSoWithoutTheToken(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	var logs capture.Buffer
	h := New(client(t, srv.URL), "mobile_app_pixel_8", slog.New(slog.NewJSONHandler(&logs, nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/internal/notify", strings.NewReader(`{"title":"t","message":"m"}`)))
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "did not accept") {
		t.Fatalf("HTTP %d %s", rec.Code, rec.Body)
	}
	if bytes.Contains(rec.Body.Bytes(), []byte(token)) || strings.Contains(logs.String(), token) {
		t.Error("the token leaked")
	}
	if !strings.Contains(logs.String(), "notification failed") {
		t.Errorf("not logged: %s", logs.String())
	}
}

func TestNotifyServiceSetting(t *testing.T) {
	for _, c := range []struct {
		value, want string
		bad         bool
	}{
		{"", "", false},
		{"mobile_app_pixel_8", "mobile_app_pixel_8", false},
		{"notify.mobile_app_pixel_8", "mobile_app_pixel_8", false},
		{"notify/../../api/services/lock/unlock", "", true},
		{"Mobile App", "", true},
	} {
		l := config.New(func(k string) (string, bool) { return c.value, k == EnvService })
		got := LoadService(l)
		if (l.Err() != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("%q: %q, %v", c.value, got, l.Err())
		}
		if c.bad && strings.Contains(l.Err().Error(), c.value) {
			t.Errorf("the error echoes the value: %v", l.Err())
		}
	}
}
