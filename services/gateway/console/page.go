// Package console is the operator console on the gateway's admin
// listener, beside the approval page and behind the same sign-in: what
// the assistants did and why a call was refused (Activity), what waits
// for a person (Waiting for you: tickets and changed tool definitions),
// whether each service is ready and how it fares (Services, with charts
// drawn on the server), and what a call would meet (Why this decision,
// by the gateway's own admission step and policy).
//
// It reads the audit trail and nothing else about calls: a bounded window
// of its lines, filled from the audit file on start and then from the
// audit tap, which never holds up a call. Like the approval page it has
// no script at all, every state change is a POST with the session's CSRF
// token, and everything that comes from a client, a service or the policy
// is shown through html/template escaping, as text.
package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/approvals"
	"github.com/toolgate/toolgate/services/gateway/auth"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/router"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// Prefix is where the console lives on the admin listener.
const Prefix = "/console/"

// pageSize is how many entries the activity view lists.
const pageSize = 200

//go:embed web
var webFS embed.FS

// Guard is the sign-in and protections the console shares with the
// approval page (*approvals.Page).
type Guard interface {
	Protect(w http.ResponseWriter, r *http.Request) bool
	SignedIn(w http.ResponseWriter, r *http.Request) (approvals.Session, bool)
	ValidForm(w http.ResponseWriter, r *http.Request, s approvals.Session) bool
}

// TicketLister lists tickets by state.
type TicketLister interface {
	List(state tickets.State) []tickets.Ticket
}

// PinStore is the part of the pin store the console uses.
type PinStore interface {
	Pending() []pins.Change
	Accept(service, tool, hash string) error
	Reject(service, tool, hash string) error
}

// PinEvents learns of every pin decision (the gateway audits it and
// refreshes the service).
type PinEvents interface {
	admin.PinRecorder
	admin.PinRejectRecorder
}

// Deps are the console's collaborators.
type Deps struct {
	Window    *Window
	Guard     Guard
	Tickets   TicketLister
	Pins      PinStore
	PinEvents PinEvents
	Explainer admin.Explainer
	// Clients are the clients of the tokens file, for the explain form.
	Clients func() []auth.Client
	// Targets are the tool services whose readiness is shown.
	Targets []Target
	// HTTPClient asks the services' /readyz (default: a 10 s client).
	HTTPClient *http.Client
	// Redactor masks what an entry's arguments show.
	Redactor *redact.Redactor
	Now      func() time.Time
	Logger   *slog.Logger
}

// Console is the operator console.
type Console struct {
	deps  Deps
	ready *readiness
	tmpl  *template.Template
	mux   *http.ServeMux
}

// New builds the console.
func New(deps Deps) (*Console, error) {
	if deps.Window == nil || deps.Guard == nil || deps.Tickets == nil || deps.Pins == nil || deps.Explainer == nil {
		return nil, errors.New("console: a window, a guard, tickets, pins and an explainer are needed")
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.Clients == nil {
		deps.Clients = func() []auth.Client { return nil }
	}
	if deps.HTTPClient == nil {
		deps.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(webFS, "web/*.html")
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	c := &Console{deps: deps, ready: newReadiness(deps.Targets, deps.HTTPClient, deps.Now), tmpl: tmpl, mux: http.NewServeMux()}
	c.mux.Handle("GET /console/{$}", http.RedirectHandler(Prefix+"activity", http.StatusSeeOther))
	c.mux.HandleFunc("GET /console/activity", c.activity)
	c.mux.HandleFunc("GET /console/activity/{id}", c.entry)
	c.mux.HandleFunc("GET /console/waiting", c.waiting)
	c.mux.HandleFunc("POST /console/pins/decide", c.decidePin)
	c.mux.HandleFunc("GET /console/services", c.services)
	c.mux.HandleFunc("GET /console/explain", c.explainForm)
	c.mux.HandleFunc("POST /console/explain", c.explain)
	c.mux.HandleFunc("GET /console/style.css", c.style)
	c.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		c.message(w, r, approvals.Session{}, http.StatusNotFound, "Not found", "There is no such page.")
	})
	return c, nil
}

// ServeHTTP serves the console with the approval page's protections on
// every answer; every view needs the admin's session.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.deps.Guard.Protect(w, r) {
		return
	}
	if r.URL.Path == Prefix+"style.css" {
		c.mux.ServeHTTP(w, r)
		return
	}
	s, ok := c.deps.Guard.SignedIn(w, r)
	if !ok {
		return
	}
	if !s.Admin() {
		// The console shows every client's calls and accepts tool
		// definitions: the admin's, not an approver's.
		c.message(w, r, s, http.StatusForbidden, "Admin only",
			"The console needs the admin token; an approver's token opens the approval page only.")
		return
	}
	c.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
}

type sessionKey struct{}

func sessionOf(r *http.Request) approvals.Session {
	s, _ := r.Context().Value(sessionKey{}).(approvals.Session)
	return s
}

// frame is what every view's header needs.
type frame struct {
	Title, Tab string
	Session    approvals.Session
	Waiting    int
	Now        time.Time
}

func (c *Console) frame(r *http.Request, title, tab string) frame {
	n := len(c.deps.Tickets.List(tickets.Pending))
	for _, p := range c.deps.Pins.Pending() {
		if !p.Rejected {
			n++
		}
	}
	return frame{Title: title, Tab: tab, Session: sessionOf(r), Waiting: n, Now: c.deps.Now()}
}

// --- activity -----------------------------------------------------------

type activityView struct {
	frame
	Filter  Filter
	Classes []string
	Activity
	Shown int
}

func (c *Console) activity(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := Filter{Client: q.Get("client"), Service: q.Get("service"), Class: q.Get("class"), ReasonID: q.Get("reason")}
	if f.Class != "" && !slices.Contains(Classes, f.Class) {
		f.Class = ""
	}
	a := c.deps.Window.Latest(f, pageSize)
	v := activityView{frame: c.frame(r, "Activity", "activity"), Filter: f, Classes: Classes, Activity: a, Shown: len(a.Entries)}
	c.render(w, http.StatusOK, "activity.html", v)
}

type entryView struct {
	frame
	Entry
	// ArgsShown is the arguments redacted, indented; ArgsNote says why
	// there are none.
	ArgsShown, ArgsNote string
}

func (c *Console) entry(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	e, ok := c.deps.Window.Get(id)
	if err != nil || !ok {
		c.message(w, r, sessionOf(r), http.StatusNotFound, "No such entry", "The console no longer holds that call (it keeps the latest ones); the audit file has every line.")
		return
	}
	v := entryView{frame: c.frame(r, "Call "+strconv.FormatUint(e.ID, 10), "activity"), Entry: e}
	v.ArgsShown, v.ArgsNote = c.shownArgs(e)
	c.render(w, http.StatusOK, "entry.html", v)
}

// shownArgs are an entry's arguments as a person may see them: redacted
// like every result, indented; or why there are none.
func (c *Console) shownArgs(e Entry) (string, string) {
	switch {
	case e.ArgsSize > 0:
		return "", fmt.Sprintf("The arguments (%d bytes) were too large to keep; the audit line holds their digest.", e.ArgsSize)
	case e.FromFile:
		return "", "Not kept: this call was read from the audit file, which holds only the arguments' digest, never the arguments."
	case e.Args == nil:
		return "", "None read: the call was refused before its arguments were read."
	}
	red, err := c.deps.Redactor.JSON(e.Args)
	if err != nil {
		return "", "The arguments could not be shown."
	}
	return indent(red), ""
}

func indent(raw []byte) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the template escapes
	enc.SetIndent("", "  ")
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimRight(b.String(), "\n")
}

// --- waiting for you ----------------------------------------------------

type waitingView struct {
	frame
	Tickets  []tickets.Ticket
	Pins     []pinView
	Rejected []pinView
	Done     string
}

type pinView struct {
	pins.Change
	Diff    []diffLine
	Full    string
	WhatFor string
	CSRF    string
}

type diffLine struct {
	Kind, Text string // Kind is a fixed CSS class
}

func (c *Console) waiting(w http.ResponseWriter, r *http.Request) {
	v := waitingView{frame: c.frame(r, "Waiting for you", "waiting"), Tickets: c.deps.Tickets.List(tickets.Pending), Done: doneText(r.URL.Query().Get("done"))}
	for _, p := range c.deps.Pins.Pending() {
		pv := pinView{Change: p, Diff: diffLines(pins.Diff(p)), Full: pins.Render(p.CurrentDefinition), WhatFor: "tool " + p.Tool, CSRF: v.Session.CSRF}
		if p.Tool == pins.Instructions {
			pv.WhatFor = "instructions"
		}
		if p.Rejected {
			v.Rejected = append(v.Rejected, pv)
		} else {
			v.Pins = append(v.Pins, pv)
		}
	}
	c.render(w, http.StatusOK, "waiting.html", v)
}

const maxDiffLines = 2000

func diffLines(s string) []diffLine {
	if s == "" {
		return nil
	}
	var out []diffLine
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if i == maxDiffLines {
			out = append(out, diffLine{Text: "… (diff cut)"})
			break
		}
		kind := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			kind = "file"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		}
		out = append(out, diffLine{Kind: kind, Text: l})
	}
	return out
}

func doneText(done string) string {
	switch done {
	case "accepted":
		return "Accepted. The service's definition is offered from its next refresh, which starts now."
	case "rejected":
		return "Rejected. The definition stays withheld; a further change will ask again."
	}
	return ""
}

func (c *Console) decidePin(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if !c.deps.Guard.ValidForm(w, r, s) {
		c.deps.Logger.Warn("console: pin decision without a valid CSRF token refused", "remote", r.RemoteAddr)
		c.message(w, r, s, http.StatusForbidden, "Refused", "The form was not sent from this page (missing or wrong CSRF token). Reload the page and try again.")
		return
	}
	service, tool, hash := r.PostForm.Get("service"), r.PostForm.Get("tool"), r.PostForm.Get("hash")
	decision := r.PostForm.Get("decision")
	apply := c.deps.Pins.Accept
	switch decision {
	case "accept":
	case "reject":
		apply = c.deps.Pins.Reject
	default:
		c.message(w, r, s, http.StatusBadRequest, "Refused", "Choose accept or reject.")
		return
	}
	err := apply(service, tool, hash)
	switch {
	case errors.Is(err, pins.ErrNoChange):
		c.message(w, r, s, http.StatusConflict, "Nothing to decide", "No change of that tool waits for a review (any more).")
		return
	case errors.Is(err, pins.ErrHashMismatch):
		c.deps.Logger.Warn("console: pin decision refused: the pending definition changed", "service", service, "tool", tool)
		c.message(w, r, s, http.StatusConflict, "Changed again", "The service changed this definition again since the page showed it; nothing was decided. Review the new one.")
		return
	case err != nil:
		c.deps.Logger.Error("console: pin decision failed", "service", service, "tool", tool, "error", err)
		c.message(w, r, s, http.StatusInternalServerError, "Not decided", "The decision could not be stored; nothing changed. See the gateway's log.")
		return
	}
	by := s.Approver + " on the console"
	c.deps.Logger.Info("pin "+decision+"ed", "service", service, "tool", tool, "hash", hash, "by", by)
	if c.deps.PinEvents != nil {
		if decision == "accept" {
			c.deps.PinEvents.PinAccepted(service, tool, hash, by)
		} else {
			c.deps.PinEvents.PinRejected(service, tool, hash, by)
		}
	}
	http.Redirect(w, r, Prefix+"waiting?done="+decision+"ed", http.StatusSeeOther)
}

// --- services -------------------------------------------------------------

type servicesView struct {
	frame
	Services []serviceView
}

type serviceView struct {
	Name     string
	Known    bool // readiness was asked
	Ready    ReadyState
	Figures  ServiceFigures
	HasCalls bool
	Calls    chart
	Latency  chart
}

func (c *Console) services(w http.ResponseWriter, r *http.Request) {
	now := c.deps.Now()
	states := c.ready.get(r.Context(), 3*time.Second)
	figures := map[string]ServiceFigures{}
	for _, f := range c.deps.Window.Services(now) {
		figures[f.Service] = f
	}
	var names []string
	for _, t := range c.deps.Targets {
		names = append(names, t.Service)
	}
	for name := range figures {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	v := servicesView{frame: c.frame(r, "Services", "services")}
	for _, name := range names {
		sv := serviceView{Name: name}
		sv.Ready, sv.Known = states[name]
		if f, ok := figures[name]; ok {
			sv.Figures, sv.HasCalls = f, true
			sv.Calls, sv.Latency = callsChart(f), latencyChart(f)
		}
		v.Services = append(v.Services, sv)
	}
	c.render(w, http.StatusOK, "services.html", v)
}

// --- why this decision ----------------------------------------------------

type explainView struct {
	frame
	Clients []auth.Client
	Q       admin.Question
	ArgsIn  string
	// From is the activity entry asked about, if any.
	From   *Entry
	Answer *router.Explanation
	Rows   [][2]string
	Error  string
}

func (c *Console) explainForm(w http.ResponseWriter, r *http.Request) {
	c.render(w, http.StatusOK, "explain.html", explainView{frame: c.frame(r, "Why this decision", "explain"), Clients: c.deps.Clients(), ArgsIn: "{}"})
}

// maxArgsInput bounds the arguments typed into the explain form.
const maxArgsInput = 8 << 10

func (c *Console) explain(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r)
	if !c.deps.Guard.ValidForm(w, r, s) {
		c.message(w, r, s, http.StatusForbidden, "Refused", "The form was not sent from this page (missing or wrong CSRF token). Reload the page and try again.")
		return
	}
	f := r.PostForm
	v := explainView{frame: c.frame(r, "Why this decision", "explain"), Clients: c.deps.Clients()}
	if id := f.Get("entry"); id != "" {
		// An activity entry: its own arguments, kept in memory, never in
		// the page.
		n, _ := strconv.ParseUint(id, 10, 64)
		e, ok := c.deps.Window.Get(n)
		if !ok {
			c.message(w, r, s, http.StatusNotFound, "No such entry", "The console no longer holds that call.")
			return
		}
		v.From = &e
		v.Q = admin.Question{Client: e.Client, User: e.User, Role: e.UserRole, Endpoint: e.Endpoint, Tool: e.Tool, Args: e.Args}
		shown, _ := c.shownArgs(e)
		v.ArgsIn = shown
		if e.Args == nil {
			v.ArgsIn = "{}"
		}
	} else {
		v.Q = admin.Question{Client: f.Get("client"), User: f.Get("user"), Role: f.Get("role"), Endpoint: f.Get("endpoint"), Tool: strings.TrimSpace(f.Get("tool"))}
		v.ArgsIn = f.Get("arguments")
		if strings.TrimSpace(v.ArgsIn) == "" {
			v.ArgsIn = "{}"
		}
		if len(v.ArgsIn) > maxArgsInput || !json.Valid([]byte(v.ArgsIn)) {
			v.Error = "The arguments must be one JSON object (at most 8 KiB), e.g. {\"amount\": 1}."
			c.render(w, http.StatusBadRequest, "explain.html", v)
			return
		}
		v.Q.Args = json.RawMessage(v.ArgsIn)
	}
	ex, err := c.deps.Explainer.Explain(r.Context(), v.Q)
	if err != nil {
		v.Error = errorText(err)
		c.render(w, http.StatusBadRequest, "explain.html", v)
		return
	}
	v.Answer, v.Rows = &ex, admin.ExplanationRows(ex)
	c.render(w, http.StatusOK, "explain.html", v)
}

// errorText is why a question could not be asked, in the explainer's
// client-safe words.
func errorText(err error) string {
	if msg := toolerr.MessageOf(err); msg != "" {
		return msg
	}
	return "The question could not be asked."
}

// --- rendering --------------------------------------------------------------

type messageView struct {
	frame
	Text string
}

func (c *Console) message(w http.ResponseWriter, r *http.Request, s approvals.Session, status int, title, text string) {
	v := messageView{frame: frame{Title: title, Session: s, Now: c.deps.Now()}, Text: text}
	c.render(w, status, "message.html", v)
}

func (c *Console) style(w http.ResponseWriter, _ *http.Request) {
	data, _ := webFS.ReadFile("web/console.css")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(data)
}

func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	var b strings.Builder
	if err := c.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		c.deps.Logger.Error("console: template failed", "template", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

var funcs = template.FuncMap{
	"clock": func(t time.Time) string { return t.Local().Format("15:04:05") },
	"stamp": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05 MST") },
	"ago": func(now, t time.Time) string {
		d := now.Sub(t)
		switch {
		case d < time.Minute:
			return fmt.Sprintf("%ds ago", max(0, int(d.Seconds())))
		case d < time.Hour:
			return fmt.Sprintf("%dm ago", int(d.Minutes()))
		}
		return fmt.Sprintf("%dh %dm ago", int(d.Hours()), int(d.Minutes())%60)
	},
	"until": func(now, t time.Time) string {
		d := t.Sub(now)
		if d <= 0 {
			return "expired"
		}
		return "in " + d.Round(time.Second).String()
	},
	"ms": formatMS,
	"pct": func(part, whole int) string {
		if whole == 0 {
			return "0 %"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(part)/float64(whole))
	},
	"endpoint": func(e string) string {
		if e == "" {
			return "/mcp"
		}
		return e
	},
}

// formatMS writes a duration in milliseconds for people.
func formatMS(ms float64) string {
	switch {
	case ms <= 0:
		return "–"
	case ms < 1:
		return fmt.Sprintf("%.0f µs", ms*1000)
	case ms < 100:
		return fmt.Sprintf("%.1f ms", ms)
	case ms < 10000:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f s", ms/1000)
}
