// Package notify lets the gateway tell a person that a ticket waits for
// their approval through Home Assistant's notify service (the companion
// app on a phone, say) without the gateway ever holding Home Assistant's
// token: the gateway posts a short message to this service's
// /internal/notify (behind the service token), and this service calls
// notify.<HA_NOTIFY_SERVICE>.
package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"go.uber.org/fx"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
)

const (
	// EnvService names the notify service, e.g. mobile_app_pixel_8 (with
	// or without "notify."). Unset: the route answers 404 and nothing is
	// sent.
	EnvService = "HA_NOTIFY_SERVICE"
	// Pattern is the route the gateway posts to.
	Pattern = "POST /internal/notify"
)

// Bounds of one message: a notification, not a channel for data.
const (
	maxTitle   = 200
	maxMessage = 1000
	maxLink    = 2048
)

// Message is what the gateway sends: no user, no arguments, no preview.
type Message struct {
	Title   string `json:"title"`
	Message string `json:"message"`
	// URL is the signed link to the ticket's page, if the gateway has one.
	URL string `json:"url,omitempty"`
}

// Handler serves Pattern.
type Handler struct {
	ha      *hass.Client
	service string
	log     *slog.Logger
}

// LoadService reads HA_NOTIFY_SERVICE: "" when unset.
func LoadService(l *config.Loader) string {
	s := strings.TrimPrefix(strings.TrimSpace(l.String(EnvService, "")), "notify.")
	if s != "" && !hass.ValidName(s) {
		l.Fail(EnvService, "must be the name of a notify service (lower-case letters, digits and _, e.g. mobile_app_pixel_8)")
	}
	return s
}

// New returns the handler that sends through ha's notify.<service>.
func New(ha *hass.Client, service string, log *slog.Logger) *Handler {
	return &Handler{ha: ha, service: service, log: log}
}

// Module registers the route.
var Module = fx.Module("notify",
	toolkit.ProvideRoute(func(ha *hass.Client, log *slog.Logger) (toolkit.Route, error) {
		l := config.FromEnv()
		svc := LoadService(l)
		if err := l.Err(); err != nil {
			return toolkit.Route{}, fmt.Errorf("configuration: %w", err)
		}
		return toolkit.Route{Pattern: Pattern, Handler: New(ha, svc, log.With("component", "notify"))}, nil
	}),
)

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.service == "" {
		answer(w, http.StatusNotFound, EnvService+" is not set: Home Assistant notifications are off")
		return
	}
	var m Message
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		answer(w, http.StatusBadRequest, "the body must be {title, message, url}")
		return
	}
	if err := m.check(); err != nil {
		answer(w, http.StatusBadRequest, err.Error())
		return
	}
	data := map[string]any{"title": m.Title, "message": m.Message}
	if m.URL != "" {
		// url: the iOS companion app; clickAction: Android.
		data["data"] = map[string]any{"url": m.URL, "clickAction": m.URL}
	}
	if err := h.ha.CallService(r.Context(), "notify", h.service, data); err != nil {
		h.log.Warn("notification failed", "service", "notify."+h.service, "error", err)
		msg := "Home Assistant did not accept the notification"
		var te *toolerr.Error
		if errors.As(err, &te) {
			msg += ": " + te.Message
		}
		answer(w, http.StatusBadGateway, msg)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (m Message) check() error {
	switch {
	case m.Title == "" || m.Message == "":
		return errors.New("title and message are required")
	case !utf8.ValidString(m.Title) || !utf8.ValidString(m.Message) || !utf8.ValidString(m.URL):
		return errors.New("title, message and url must be UTF-8")
	case len(m.Title) > maxTitle || len(m.Message) > maxMessage || len(m.URL) > maxLink:
		return fmt.Errorf("title, message and url are limited to %d, %d and %d bytes", maxTitle, maxMessage, maxLink)
	}
	if m.URL != "" {
		u, err := url.Parse(m.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return errors.New("url must be an absolute http or https link without credentials")
		}
	}
	return nil
}

func answer(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
