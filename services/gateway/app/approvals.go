package app

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"net/http"

	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/approvals"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/console"
	"github.com/toolgate/toolgate/services/gateway/notify"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// buildApprovals assembles the admin listener (the admin API under
// /admin/, the approval page under /approvals/; buildConsole adds the
// console under /console/, the listener's home) and the notifications, and
// returns what the router calls when a ticket starts waiting. refresh
// re-reads a service after an operator accepted one of its pins; cat
// answers the admin API's endpoint listing.
func (g *Gateway) buildApprovals(cfg Config, auditLog *audit.Logger, o Options, refresh func(service string), cat *endpointCatalog) (func(tickets.Ticket), error) {
	events := &ticketEvents{metrics: g.Metrics, audit: auditLog, now: o.Now, refresh: refresh}
	g.events, g.explainer = events, &explainer{}
	api, err := admin.NewHandler(cfg.AdminToken, g.Tickets, g.Pins, events, o.Logger, admin.WithExplainer(g.explainer), admin.WithCatalog(cat))
	if err != nil {
		return nil, fmt.Errorf("gateway: admin: %w", err)
	}
	g.Page, err = approvals.New(approvals.Config{
		AdminToken: cfg.AdminToken, Approvers: cfg.Approvers, LinkKey: linkKey(cfg.ApprovalKey), BaseURL: cfg.ApprovalURL,
	}, approvals.Deps{Tickets: g.Tickets, Recorder: events, Now: o.Now, Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", api)
	mux.Handle(approvals.Prefix, g.Page)
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusSeeOther))
	mux.Handle("/", api) // the API's JSON 404 and 401 for everything else
	g.Admin, g.adminMux = mux, mux

	hc := o.NotifyHTTPClient
	if hc == nil {
		hc = notify.NewHTTPClient()
	}
	var senders []notify.Sender
	if cfg.NotifyWebhookURL != "" {
		senders = append(senders, &notify.Webhook{URL: cfg.NotifyWebhookURL, Client: hc})
	}
	if cfg.NotifyNtfyURL != "" {
		senders = append(senders, &notify.Ntfy{TopicURL: cfg.NotifyNtfyURL, Token: cfg.NotifyNtfyToken, Client: hc})
	}
	if cfg.NotifyHomeAssistant {
		for _, s := range cfg.Services {
			if s.Name != homeAssistant {
				continue
			}
			u, err := notify.HomeAssistantURL(s.URL)
			if err != nil {
				return nil, fmt.Errorf("gateway: %s: %w", EnvNotifyHomeAssist, err)
			}
			senders = append(senders, &notify.HomeAssistant{URL: u, Token: s.Token, Client: hc})
		}
	}
	senders = append(senders, o.Notify...)
	g.Notifier = notify.New(o.Logger, senders...)
	if !g.Notifier.Enabled() {
		return nil, nil
	}
	return func(t tickets.Ticket) {
		g.Notifier.Notify(notify.Pending{Client: t.Client, Service: t.Service, Tool: t.Tool, Expires: t.Expires, Link: g.Page.Link(t)})
	}, nil
}

// homeAssistant is the tool service that can notify through Home
// Assistant.
const homeAssistant = "homeassistant"

// linkKey derives the key that signs approval links from the approval key,
// so links need no secret of their own and a link key never signs a write.
func linkKey(approvalKey []byte) []byte {
	m := hmac.New(sha256.New, approvalKey)
	m.Write([]byte("toolgate approval page links v1"))
	return m.Sum(nil)
}
