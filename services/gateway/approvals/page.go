// Package approvals is the approval page on the gateway's admin listener:
// a person signs in with the admin token or their own approver token, sees
// the tickets that wait for a person with their previews, and approves or
// denies them. It also mints the signed single-use links that
// notifications carry to one ticket.
//
// The page has no script at all; its Content-Security-Policy allows none.
// Every state change is a POST with the session's CSRF token, the session
// cookie is HttpOnly and SameSite=Strict (Secure over TLS), and everything
// a preview carries is upstream data, shown through html/template escaping.
package approvals

import (
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/time/rate"

	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// Prefix is where the page lives on the admin listener.
const Prefix = "/approvals/"

const (
	sessionCookie = "toolgate_session"
	loginCookie   = "toolgate_login"
	maxNoteRunes  = 500
	maxFormBytes  = 8 << 10
	// csp allows the page's own stylesheet and nothing else: no script,
	// no frames, forms only to itself.
	csp = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'"
	defaultSessionTTL = 8 * time.Hour
)

//go:embed web
var webFS embed.FS

// TicketStore is what the page needs of the ticket store.
type TicketStore interface {
	List(state tickets.State) []tickets.Ticket
	Get(id string) (tickets.Ticket, bool)
	Approve(id, by string) (tickets.Ticket, error)
	Deny(id, by string) (tickets.Ticket, error)
}

// Recorder writes a person's decision to the audit log and metrics.
type Recorder interface {
	Decided(t tickets.Ticket, decision, by, note string)
}

// Config configures the page.
type Config struct {
	// AdminToken signs in as "admin" (surrounding white space ignored).
	AdminToken []byte
	// Approvers are per-person tokens; nil: only the admin token.
	Approvers *Approvers
	// LinkKey signs notification links.
	LinkKey []byte
	// BaseURL is where a person reaches the page (scheme://host[:port],
	// no path), for links in notifications; empty: no links.
	BaseURL string
	// SessionTTL is how long a sign-in lasts (default 8 hours).
	SessionTTL time.Duration
}

// Deps are the page's collaborators.
type Deps struct {
	Tickets  TicketStore
	Recorder Recorder
	Now      func() time.Time
	Logger   *slog.Logger
}

// Page is the approval page.
type Page struct {
	adminDigest [sha256.Size]byte
	approvers   *Approvers
	baseURL     string
	deps        Deps
	sessions    *sessions
	links       *links
	logins      *rate.Limiter
	tmpl        *template.Template
	mux         *http.ServeMux
}

// New builds the page.
func New(cfg Config, deps Deps) (*Page, error) {
	token := strings.TrimSpace(string(cfg.AdminToken))
	if len(token) < 16 {
		return nil, errors.New("approval page: the admin token is too short")
	}
	if len(cfg.LinkKey) < 32 {
		return nil, errors.New("approval page: the link key is too short")
	}
	if deps.Tickets == nil {
		return nil, errors.New("approval page: no ticket store")
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("approval page: the base URL must be scheme://host[:port]")
		}
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = defaultSessionTTL
	}
	tmpl, err := template.New("").Funcs(template.FuncMap{"ago": ago, "in": until}).ParseFS(webFS, "web/*.html")
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	p := &Page{
		adminDigest: sha256.Sum256([]byte(token)),
		approvers:   cfg.Approvers,
		baseURL:     strings.TrimRight(cfg.BaseURL, "/"),
		deps:        deps,
		sessions:    newSessions(cfg.SessionTTL, deps.Now),
		links:       newLinks(cfg.LinkKey, deps.Now),
		// Sign-ins are for people: a burst of 5, then one a second, for
		// everyone together, so guessing tokens gets nowhere.
		logins: rate.NewLimiter(rate.Every(time.Second), 5),
		tmpl:   tmpl,
		mux:    http.NewServeMux(),
	}
	p.mux.HandleFunc("GET /approvals/{$}", p.list)
	p.mux.HandleFunc("GET /approvals/login", p.loginForm)
	p.mux.HandleFunc("POST /approvals/login", p.login)
	p.mux.HandleFunc("POST /approvals/logout", p.logout)
	p.mux.HandleFunc("GET /approvals/ticket/{id}", p.show)
	p.mux.HandleFunc("POST /approvals/ticket/{id}/decide", p.decide)
	p.mux.HandleFunc("GET /approvals/link/{token}", p.follow)
	p.mux.HandleFunc("GET /approvals/style.css", p.style)
	p.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, http.StatusNotFound, "message.html", message{Title: "Not found", Text: "There is no such page."})
	})
	return p, nil
}

// ServeHTTP serves the page with its security headers on every answer.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.Protect(w, r) {
		return
	}
	p.mux.ServeHTTP(w, r)
}

// Protect sets the security headers the admin listener's pages share (no
// script, no frames, nothing cached) and refuses a POST a browser says
// came from another site. It returns false when it has answered.
func (p *Page) Protect(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// same-origin, not no-referrer: with no-referrer a browser sends
	// "Origin: null" on the page's own forms.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.Method == http.MethodPost && !sameOrigin(r) {
		p.deps.Logger.Warn("approval page: cross-site POST refused", "path", r.URL.Path, "remote", r.RemoteAddr)
		p.render(w, http.StatusForbidden, "message.html", message{Title: "Refused", Text: "This request came from another site."})
		return false
	}
	return true
}

// Session is a person signed in to the admin listener's pages.
type Session struct {
	// Approver is who signed in: AdminName for the admin token.
	Approver string
	// CSRF is the token every form of the session carries.
	CSRF string
}

// Admin reports whether the admin token signed in (not an approver's).
func (s Session) Admin() bool { return s.Approver == AdminName }

// SignedIn returns the signed-in person, or sends a browser's GET to sign
// in (and back) and answers anything else 401.
func (p *Page) SignedIn(w http.ResponseWriter, r *http.Request) (Session, bool) {
	s, ok := p.session(w, r)
	if !ok {
		return Session{}, false
	}
	return Session{Approver: s.approver, CSRF: s.csrf}, true
}

// ValidForm reads a POSTed form (bounded) and reports whether it carries
// the session's CSRF token; a form that cannot be read is answered.
func (p *Page) ValidForm(w http.ResponseWriter, r *http.Request, s Session) bool {
	return p.form(w, r) && validCSRF(r.PostForm.Get("csrf"), s.CSRF)
}

// Link returns an absolute, signed, single-use link to t's page for a
// notification, or "" when no base URL is configured.
func (p *Page) Link(t tickets.Ticket) string {
	if p.baseURL == "" {
		return ""
	}
	token, err := p.links.issue(t.ID, t.Expires)
	if err != nil {
		p.deps.Logger.Warn("approval page: no link for a notification", "ticket", t.ID, "error", err)
		return ""
	}
	return p.baseURL + Prefix + "link/" + token
}

// sameOrigin refuses a POST a browser says came from elsewhere; the CSRF
// token and SameSite=Strict already stop it, this says so early.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	if o := r.Header.Get("Origin"); o != "" && !(o == "null" && r.Header.Get("Sec-Fetch-Site") == "same-origin") {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return false
		}
	}
	return true
}

type message struct {
	Title, Text string
	Approver    string
	CSRF        string
}

type listView struct {
	Approver string
	CSRF     string
	Now      time.Time
	Tickets  []ticketView
	Done     string
}

type ticketView struct {
	tickets.Ticket
	Preview preview
	Now     time.Time
	CSRF    string
}

type loginView struct {
	Next, CSRF, Error string
}

func (p *Page) list(w http.ResponseWriter, r *http.Request) {
	sess, ok := p.session(w, r)
	if !ok {
		return
	}
	view := listView{Approver: sess.approver, CSRF: sess.csrf, Now: p.deps.Now(), Done: doneText(r.URL.Query().Get("done"))}
	for _, t := range p.deps.Tickets.List(tickets.Pending) {
		view.Tickets = append(view.Tickets, ticketView{Ticket: t, Preview: renderPreview(t.Preview), Now: view.Now, CSRF: sess.csrf})
	}
	p.render(w, http.StatusOK, "list.html", view)
}

func (p *Page) show(w http.ResponseWriter, r *http.Request) {
	sess, ok := p.session(w, r)
	if !ok {
		return
	}
	t, found := p.deps.Tickets.Get(r.PathValue("id"))
	if !found || !p.deps.Now().Before(t.Expires) {
		p.render(w, http.StatusNotFound, "message.html", message{Title: "No such ticket", Text: "The ticket does not exist or has expired.", Approver: sess.approver, CSRF: sess.csrf})
		return
	}
	view := listView{Approver: sess.approver, CSRF: sess.csrf, Now: p.deps.Now(),
		Tickets: []ticketView{{Ticket: t, Preview: renderPreview(t.Preview), Now: p.deps.Now(), CSRF: sess.csrf}}}
	p.render(w, http.StatusOK, "ticket.html", view)
}

func (p *Page) decide(w http.ResponseWriter, r *http.Request) {
	sess, ok := p.session(w, r)
	if !ok {
		return
	}
	if !p.form(w, r) || !validCSRF(r.PostForm.Get("csrf"), sess.csrf) {
		p.deps.Logger.Warn("approval page: decision without a valid CSRF token refused", "approver", sess.approver, "remote", r.RemoteAddr)
		p.render(w, http.StatusForbidden, "message.html", message{Title: "Refused", Text: "The form was not sent from this page (missing or wrong CSRF token). Reload the page and try again.", Approver: sess.approver, CSRF: sess.csrf})
		return
	}
	id := r.PathValue("id")
	note := cleanNote(r.PostForm.Get("note"))
	var (
		t        tickets.Ticket
		err      error
		decision string
	)
	switch r.PostForm.Get("decision") {
	case "approve":
		decision = "approved"
		t, err = p.deps.Tickets.Approve(id, sess.approver)
	case "deny":
		decision = "denied"
		t, err = p.deps.Tickets.Deny(id, sess.approver)
	default:
		p.render(w, http.StatusBadRequest, "message.html", message{Title: "Refused", Text: "Choose approve or deny.", Approver: sess.approver, CSRF: sess.csrf})
		return
	}
	if err != nil {
		p.deps.Logger.Warn("approval page: decision refused", "ticket", id, "decision", decision, "approver", sess.approver, "error", err)
		p.render(w, http.StatusConflict, "message.html", message{Title: "Not decided", Text: decisionProblem(err, t), Approver: sess.approver, CSRF: sess.csrf})
		return
	}
	p.deps.Logger.Info("ticket decision", "ticket", t.ID, "decision", decision, "by", sess.approver, "via", "approval page",
		"client", t.Client, "user", t.User, "service", t.Service, "tool", t.Tool)
	if p.deps.Recorder != nil {
		p.deps.Recorder.Decided(t, decision, sess.approver, note)
	}
	http.Redirect(w, r, Prefix+"?done="+decision, http.StatusSeeOther)
}

func decisionProblem(err error, t tickets.Ticket) string {
	switch {
	case errors.Is(err, tickets.ErrUnknown):
		return "The ticket does not exist (any more)."
	case errors.Is(err, tickets.ErrExpired):
		return "The ticket has expired; the client must preview again."
	case errors.Is(err, tickets.ErrDecided):
		s := "The ticket was already decided: it is " + string(t.State)
		if t.DecidedBy != "" {
			s += " (by " + t.DecidedBy + ")"
		}
		return s + "."
	default:
		return "The decision could not be stored; nothing changed. See the gateway's log."
	}
}

func (p *Page) follow(w http.ResponseWriter, r *http.Request) {
	id, err := p.links.use(r.PathValue("token"))
	if err != nil {
		// A used, expired or forged link shows nothing about any ticket.
		p.render(w, http.StatusGone, "message.html", message{Title: "Link not usable", Text: err.Error() + ". Open the approval page to see the tickets that wait."})
		return
	}
	target := Prefix + "ticket/" + url.PathEscape(id)
	if _, ok := p.currentSession(r); !ok {
		target = Prefix + "login?next=" + url.QueryEscape(target)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (p *Page) loginForm(w http.ResponseWriter, r *http.Request) {
	p.renderLogin(w, r, http.StatusOK, "")
}

func (p *Page) renderLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	csrf, err := randomToken()
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, p.cookie(r, loginCookie, csrf, 10*time.Minute))
	p.render(w, status, "login.html", loginView{Next: safeNext(r.FormValue("next")), CSRF: csrf, Error: problem})
}

func (p *Page) login(w http.ResponseWriter, r *http.Request) {
	if !p.form(w, r) {
		return
	}
	c, err := r.Cookie(loginCookie)
	if err != nil || !validCSRF(r.PostForm.Get("csrf"), c.Value) {
		p.renderLogin(w, r, http.StatusForbidden, "The sign-in form expired or was not sent from this page. Try again.")
		return
	}
	if !p.logins.Allow() {
		w.Header().Set("Retry-After", "1")
		p.renderLogin(w, r, http.StatusTooManyRequests, "Too many sign-in attempts; wait a moment.")
		return
	}
	name, ok := p.approver(strings.TrimSpace(r.PostForm.Get("token")))
	if !ok {
		p.deps.Logger.Warn("approval page: sign-in refused", "remote", r.RemoteAddr)
		p.renderLogin(w, r, http.StatusUnauthorized, "That token is not the admin token or an approver's token.")
		return
	}
	id, _, err := p.sessions.start(name)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	p.deps.Logger.Info("approval page: signed in", "approver", name, "remote", r.RemoteAddr)
	http.SetCookie(w, p.cookie(r, sessionCookie, id, p.sessions.ttl))
	http.SetCookie(w, p.cookie(r, loginCookie, "", -1))
	http.Redirect(w, r, safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
}

func (p *Page) logout(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(sessionCookie)
	if err == nil {
		if sess, ok := p.sessions.get(c.Value); ok && p.form(w, r) && validCSRF(r.PostForm.Get("csrf"), sess.csrf) {
			p.sessions.end(c.Value)
		}
	}
	http.SetCookie(w, p.cookie(r, sessionCookie, "", -1))
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}

func (p *Page) style(w http.ResponseWriter, _ *http.Request) {
	data, _ := webFS.ReadFile("web/style.css")
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(data)
}

// approver finds who a sign-in token belongs to.
func (p *Page) approver(token string) (string, bool) {
	if token == "" || len(token) > 512 {
		return "", false
	}
	sum := sha256.Sum256([]byte(token))
	if subtle.ConstantTimeCompare(sum[:], p.adminDigest[:]) == 1 {
		return AdminName, true
	}
	return p.approvers.lookup(token)
}

func (p *Page) currentSession(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, false
	}
	return p.sessions.get(c.Value)
}

// session returns the signed-in approver or sends the browser to sign in.
func (p *Page) session(w http.ResponseWriter, r *http.Request) (*session, bool) {
	if s, ok := p.currentSession(r); ok {
		return s, true
	}
	if r.Method == http.MethodGet {
		http.Redirect(w, r, Prefix+"login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	} else {
		p.render(w, http.StatusUnauthorized, "message.html", message{Title: "Signed out", Text: "Sign in first."})
	}
	return nil, false
}

func (p *Page) form(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		p.render(w, http.StatusBadRequest, "message.html", message{Title: "Refused", Text: "The form could not be read."})
		return false
	}
	return true
}

// cookie is a page cookie: HttpOnly, SameSite=Strict, limited to the page
// (the session cookie to the admin listener's pages),
// Secure when the page is reached over TLS (directly or, as BaseURL says,
// through a TLS proxy). maxAge < 0 deletes it.
func (p *Page) cookie(r *http.Request, name, value string, maxAge time.Duration) *http.Cookie {
	path := Prefix
	if name == sessionCookie {
		// The console beside the page shares its sign-in.
		path = "/"
	}
	c := &http.Cookie{
		Name: name, Value: value, Path: path, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || strings.HasPrefix(p.baseURL, "https://"),
	}
	if maxAge < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(maxAge / time.Second)
	}
	return c
}

func (p *Page) render(w http.ResponseWriter, status int, name string, data any) {
	var b strings.Builder
	if err := p.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		p.deps.Logger.Error("approval page: template failed", "template", name, "error", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func validCSRF(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

var nextPath = regexp.MustCompile(`^/approvals/(ticket/[A-Za-z0-9_-]{1,64})?$|^/console/[A-Za-z0-9/_?=&%.:+-]{0,512}$`)

// safeNext allows only the page's own list and ticket pages and the
// console's pages as a target after sign-in, never another site.
func safeNext(next string) string {
	if nextPath.MatchString(next) {
		return next
	}
	return Prefix
}

func doneText(done string) string {
	switch done {
	case "approved":
		return "Approved. The client can confirm the ticket now."
	case "denied":
		return "Denied. The ticket can never be confirmed."
	}
	return ""
}

// cleanNote keeps a note safe to log and audit: valid UTF-8, no control
// or invisible formatting characters, at most maxNoteRunes.
func cleanNote(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return ' '
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxNoteRunes {
		s = string([]rune(s)[:maxNoteRunes])
	}
	return s
}

func ago(now, t time.Time) string { return human(now.Sub(t)) + " ago" }

func until(now, t time.Time) string { return "in " + human(t.Sub(now)) }

func human(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
}
