// Package notify tells people that a ticket waits for their approval: a
// JSON webhook, an ntfy topic, and any other Sender (Home Assistant's
// notify service, through the homeassistant tool service). A notification carries the client, service
// and tool names, the expiry and a signed single-use link to the ticket's
// page — never the user, the arguments, the preview or a secret.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Pending is one ticket that started waiting for a person.
type Pending struct {
	Client  string    `json:"client"`
	Service string    `json:"service"`
	Tool    string    `json:"tool"`
	Expires time.Time `json:"expires_at"`
	// Link opens the ticket's page (sign-in still needed); may be empty.
	Link string `json:"link,omitempty"`
}

// Title and Text are the human-readable form every sender uses.
func (p Pending) Title() string { return "toolgate: approval needed" }

// Text says who asks for what, and where to decide.
func (p Pending) Text() string {
	s := fmt.Sprintf("%s asks to run %s (%s). It waits for a person's approval until %s.",
		p.Client, p.Tool, p.Service, p.Expires.UTC().Format("15:04 MST"))
	if p.Link == "" {
		s += " Open the approval page to decide."
	}
	return s
}

// Sender delivers one notification.
type Sender interface {
	Name() string
	Send(ctx context.Context, p Pending) error
}

// Notifier fans a pending ticket out to its senders in the background, so
// a slow webhook never holds up the call that issued the ticket.
type Notifier struct {
	senders []Sender
	log     *slog.Logger
	timeout time.Duration
	slots   chan struct{}
	wg      sync.WaitGroup
}

const (
	sendTimeout = 10 * time.Second
	maxInFlight = 16
	maxReply    = 64 << 10
)

// New returns a notifier for senders; with none it does nothing.
func New(log *slog.Logger, senders ...Sender) *Notifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Notifier{senders: senders, log: log, timeout: sendTimeout, slots: make(chan struct{}, maxInFlight)}
}

// Enabled reports whether any sender is configured.
func (n *Notifier) Enabled() bool { return n != nil && len(n.senders) > 0 }

// Notify sends p to every sender in the background. When too many
// notifications are already in flight the new one is dropped and logged:
// the approval page still lists the ticket.
func (n *Notifier) Notify(p Pending) {
	if !n.Enabled() {
		return
	}
	for _, s := range n.senders {
		select {
		case n.slots <- struct{}{}:
		default:
			n.log.Warn("notification dropped: too many in flight", "sender", s.Name(), "tool", p.Tool)
			continue
		}
		n.wg.Add(1)
		go func() {
			defer func() { <-n.slots; n.wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), n.timeout)
			defer cancel()
			if err := s.Send(ctx, p); err != nil {
				n.log.Warn("notification failed", "sender", s.Name(), "tool", p.Tool, "error", err)
				return
			}
			n.log.Info("notification sent", "sender", s.Name(), "client", p.Client, "tool", p.Tool)
		}()
	}
}

// Wait blocks until every notification in flight has finished (tests,
// shutdown).
func (n *Notifier) Wait() {
	if n != nil {
		n.wg.Wait()
	}
}

// Webhook POSTs {"event":"ticket_pending", client, service, tool,
// expires_at, link, title, text} as JSON to a URL.
type Webhook struct {
	URL    string
	Client *http.Client
}

// Name implements Sender.
func (w *Webhook) Name() string { return "webhook" }

// Send implements Sender.
func (w *Webhook) Send(ctx context.Context, p Pending) error {
	body, err := json.Marshal(struct {
		Event string `json:"event"`
		Pending
		Title string `json:"title"`
		Text  string `json:"text"`
	}{"ticket_pending", p, p.Title(), p.Text()})
	if err != nil {
		return err
	}
	return post(ctx, w.Client, w.URL, "application/json", body, nil)
}

// Ntfy publishes to an ntfy topic URL (https://ntfy.sh/<topic> or a
// self-hosted server): the text as the message, Title, Tags and Click
// (the link) as headers, an optional access token as Bearer.
type Ntfy struct {
	TopicURL string
	Token    []byte
	Client   *http.Client
}

// Name implements Sender.
func (n *Ntfy) Name() string { return "ntfy" }

// Send implements Sender.
func (n *Ntfy) Send(ctx context.Context, p Pending) error {
	h := http.Header{}
	h.Set("Title", p.Title())
	h.Set("Tags", "lock")
	h.Set("Priority", "high")
	if p.Link != "" {
		h.Set("Click", p.Link)
		h.Set("Actions", "view, Open approval page, "+p.Link+", clear=true")
	}
	if len(n.Token) > 0 {
		h.Set("Authorization", "Bearer "+strings.TrimSpace(string(n.Token)))
	}
	return post(ctx, n.Client, n.TopicURL, "text/plain; charset=utf-8", []byte(p.Text()), h)
}

// HomeAssistant asks the homeassistant tool service to send through Home
// Assistant's notify service (HA_NOTIFY_SERVICE there), so the gateway
// holds that service's token and never Home Assistant's own.
type HomeAssistant struct {
	// URL is the service's /internal/notify.
	URL string
	// Token is the service token the gateway uses for that service.
	Token  []byte
	Client *http.Client
}

// Name implements Sender.
func (h *HomeAssistant) Name() string { return "homeassistant" }

// Send implements Sender.
func (h *HomeAssistant) Send(ctx context.Context, p Pending) error {
	body, err := json.Marshal(map[string]string{"title": p.Title(), "message": p.Text(), "url": p.Link})
	if err != nil {
		return err
	}
	return post(ctx, h.Client, h.URL, "application/json", body, http.Header{"Authorization": {"Bearer " + string(h.Token)}})
}

// HomeAssistantURL is the notify route of the homeassistant service whose
// MCP endpoint is mcpURL (http://homeassistant:8000/mcp →
// http://homeassistant:8000/internal/notify).
func HomeAssistantURL(mcpURL string) (string, error) {
	u, err := url.Parse(mcpURL)
	if err != nil || u.Host == "" {
		return "", errors.New("the homeassistant service's URL is not absolute")
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/mcp") + "/internal/notify"
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

// post sends one request; the error names the status, never the URL's
// secrets or the reply body.
func post(ctx context.Context, c *http.Client, target, contentType string, body []byte, h http.Header) error {
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return errors.New("bad notification URL")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "toolgate-gateway")
	resp, err := c.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			return fmt.Errorf("%s: %w", uerr.Op, uerr.Err)
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxReply))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("answered HTTP %d", resp.StatusCode)
	}
	return nil
}

// NewHTTPClient is the client notifications use: bounded, no redirects
// (a redirect could carry the link somewhere else).
func NewHTTPClient() *http.Client {
	return &http.Client{
		Timeout: sendTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
