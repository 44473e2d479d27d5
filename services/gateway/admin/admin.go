// Package admin is the gateway's admin HTTP API and its command-line
// client: people approve or deny write tickets and accept changed tool
// definitions here, outside the reach of any model. The API is meant for its
// own loopback listener and takes a separate admin bearer token.
package admin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/gateway/pins"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// DefaultAddr is where the admin API listens unless configured otherwise:
// loopback only, never the client network.
const DefaultAddr = "127.0.0.1:8081"

// MinTokenLen is the shortest accepted admin token.
const MinTokenLen = 16

// DefaultDecider names whoever approved or denied a ticket when the request
// does not say.
const DefaultDecider = "admin"

const (
	maxBodyBytes = 4 << 10
	maxNameRunes = 64
	realm        = `Bearer realm="toolgate-admin"`
)

// TicketStore is the part of the ticket store the admin API uses.
type TicketStore interface {
	List(state tickets.State) []tickets.Ticket
	Approve(id, by string) (tickets.Ticket, error)
	Deny(id, by string) (tickets.Ticket, error)
	Get(id string) (tickets.Ticket, bool)
}

// PinStore is the part of the pin store the admin API uses.
type PinStore interface {
	Pending() []pins.Change
	PendingChange(service, tool string) (pins.Change, bool)
	Accept(service, tool, hash string) error
	Reject(service, tool, hash string) error
}

// PinRecorder, when the Events value also implements it, learns of every
// accepted pin (the gateway audits it and refreshes the service at once).
type PinRecorder interface {
	PinAccepted(service, tool, hash, by string)
}

// PinRejectRecorder, when the Events value also implements it, learns of
// every rejected pin (the gateway audits it).
type PinRejectRecorder interface {
	PinRejected(service, tool, hash, by string)
}

// DecisionRecorder, when the Events value also implements it, records who
// approved or denied which ticket (the gateway writes it to the audit log).
type DecisionRecorder interface {
	TicketDecided(t tickets.Ticket, decision, by string)
}

// Events is the metrics hook; Ticket receives "approved" or "denied".
type Events interface {
	Ticket(event string)
}

// TicketList is the body of GET /admin/tickets. Previews are left out to
// keep it small; GET /admin/tickets/{id} has them.
type TicketList struct {
	Tickets []tickets.Ticket `json:"tickets"`
}

// TicketReply is the body of GET /admin/tickets/{id} and of a decision.
type TicketReply struct {
	Ticket tickets.Ticket `json:"ticket"`
}

// PinChange is a withheld definition with a unified diff from the pinned
// one ("" when the pinned definition is not known, only its hash).
type PinChange struct {
	pins.Change
	Diff string `json:"diff"`
}

// PinList is the body of GET /admin/pins.
type PinList struct {
	Pending []PinChange `json:"pending"`
}

// PinReply is the body of GET /admin/pins/{service}/{tool}.
type PinReply struct {
	Pending PinChange `json:"pending"`
}

// PinAccepted is the body of POST /admin/pins/{service}/{tool}/accept and
// of …/reject.
type PinAccepted struct {
	Service string `json:"service"`
	Tool    string `json:"tool"`
	Hash    string `json:"hash"`
}

// ErrorReply is the body of every error answer.
type ErrorReply struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is a stable code and a message safe to show.
type ErrorDetail struct {
	Code    toolerr.Code `json:"code"`
	Message string       `json:"message"`
}

// decisionBody is the optional body of approve and deny.
type decisionBody struct {
	By *string `json:"by"`
}

// acceptBody is the body of a pin accept: the hash the operator reviewed.
type acceptBody struct {
	Hash string  `json:"hash"`
	By   *string `json:"by,omitempty"`
}

var hashPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// validName accepts what a service or tool name may plausibly be; "/" is
// excluded because the pin store keys tools as "service/tool".
func validName(s string) bool {
	if s == "" || len(s) > 128 || !utf8.ValidString(s) || strings.Contains(s, "/") {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

type handler struct {
	digest  [sha256.Size]byte
	tickets TicketStore
	pins    PinStore
	events  Events
	// explainer answers POST /admin/explain (WithExplainer).
	explainer Explainer
	// catalog answers GET /admin/endpoints and POST /admin/refresh
	// (WithCatalog).
	catalog Catalog
	log     *slog.Logger
	mux     *http.ServeMux
}

// NewHandler returns the admin API. token must be at least MinTokenLen bytes
// (surrounding white space, such as a file's trailing newline, is ignored);
// only its SHA-256 digest is kept. ev and logger may be nil.
func NewHandler(token []byte, t TicketStore, p PinStore, ev Events, logger *slog.Logger, opts ...Option) (http.Handler, error) {
	token = bytes.TrimSpace(token)
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("admin token is too short: need at least %d bytes", MinTokenLen)
	}
	if t == nil || p == nil {
		return nil, errors.New("admin API needs a ticket store and a pin store")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{digest: sha256.Sum256(token), tickets: t, pins: p, events: ev, log: logger, mux: http.NewServeMux()}
	for _, o := range opts {
		o(h)
	}
	h.routeCatalog()
	h.route("GET", "/admin/tickets", h.listTickets)
	h.route("GET", "/admin/tickets/{id}", h.showTicket)
	h.route("POST", "/admin/tickets/{id}/approve", h.decide("approved", t.Approve))
	h.route("POST", "/admin/tickets/{id}/deny", h.decide("denied", t.Deny))
	h.route("GET", "/admin/pins", h.listPins)
	h.route("GET", "/admin/pins/{service}/{tool}", h.showPin)
	h.route("POST", "/admin/pins/{service}/{tool}/accept", h.pinDecision("accepted"))
	h.route("POST", "/admin/pins/{service}/{tool}/reject", h.pinDecision("rejected"))
	h.route("POST", "/admin/explain", h.explain)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, toolerr.NotFound, "no such admin endpoint")
	})
	return h, nil
}

// route registers fn for method and path, and a JSON 405 for other methods
// (the mux's own 405 is plain text and the catch-all would shadow it).
func (h *handler) route(method, path string, fn http.HandlerFunc) {
	h.mux.HandleFunc(method+" "+path, fn)
	h.mux.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", method)
		writeError(w, http.StatusMethodNotAllowed, toolerr.InvalidArgument, "method not allowed; use "+method)
	})
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		h.log.Warn("admin request rejected", "reason", "missing or invalid admin token",
			"method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
		w.Header().Set("WWW-Authenticate", realm)
		writeError(w, http.StatusUnauthorized, toolerr.AuthFailed, "missing or invalid admin token")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// authorized compares digests in constant time, so neither the token's
// content nor its length leaks through timing.
func (h *handler) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(sum[:], h.digest[:]) == 1
}

func (h *handler) listTickets(w http.ResponseWriter, r *http.Request) {
	state := tickets.State(r.URL.Query().Get("state"))
	switch state {
	case "", tickets.Pending, tickets.Ready, tickets.Used, tickets.Denied:
	default:
		writeError(w, http.StatusBadRequest, toolerr.InvalidArgument,
			"state must be one of pending, ready, used, denied")
		return
	}
	list := h.tickets.List(state)
	out := TicketList{Tickets: make([]tickets.Ticket, 0, len(list))}
	for _, t := range list {
		t.Preview = nil
		out.Tickets = append(out.Tickets, t)
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) showTicket(w http.ResponseWriter, r *http.Request) {
	id, ok := ticketID(w, r)
	if !ok {
		return
	}
	t, found := h.tickets.Get(id)
	if !found {
		writeError(w, http.StatusNotFound, toolerr.NotFound, "unknown ticket "+id)
		return
	}
	writeJSON(w, http.StatusOK, TicketReply{Ticket: safePreview(t)})
}

func (h *handler) decide(decision string, apply func(id, by string) (tickets.Ticket, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := ticketID(w, r)
		if !ok {
			return
		}
		by, ok := readBy(w, r)
		if !ok {
			return
		}
		t, err := apply(id, by)
		if err != nil {
			status, code, msg := decisionError(id, t, err)
			h.log.Warn("ticket decision refused", "ticket", id, "decision", decision, "by", by, "error", err)
			writeError(w, status, code, msg)
			return
		}
		h.log.Info("ticket decision", "ticket", t.ID, "decision", decision, "by", by,
			"client", t.Client, "user", t.User, "service", t.Service, "tool", t.Tool)
		if h.events != nil {
			h.events.Ticket(decision)
			if rec, ok := h.events.(DecisionRecorder); ok {
				rec.TicketDecided(t, decision, by)
			}
		}
		writeJSON(w, http.StatusOK, TicketReply{Ticket: safePreview(t)})
	}
}

func decisionError(id string, t tickets.Ticket, err error) (int, toolerr.Code, string) {
	switch {
	case errors.Is(err, tickets.ErrUnknown):
		return http.StatusNotFound, toolerr.NotFound, "unknown ticket " + id
	case errors.Is(err, tickets.ErrExpired):
		return http.StatusConflict, toolerr.Forbidden, "ticket " + id + " has expired"
	case errors.Is(err, tickets.ErrDecided):
		msg := fmt.Sprintf("ticket %s was already decided: it is %s", id, t.State)
		if t.DecidedBy != "" {
			msg += " (decided by " + t.DecidedBy + ")"
		}
		return http.StatusConflict, toolerr.Forbidden, msg
	default:
		return http.StatusInternalServerError, toolerr.Internal, "internal error"
	}
}

func (h *handler) listPins(w http.ResponseWriter, _ *http.Request) {
	pending := h.pins.Pending()
	out := PinList{Pending: make([]PinChange, 0, len(pending))}
	for _, c := range pending {
		out.Pending = append(out.Pending, PinChange{Change: c, Diff: pins.Diff(c)})
	}
	writeJSON(w, http.StatusOK, out)
}

func pinNames(w http.ResponseWriter, r *http.Request) (string, string, bool) {
	service, tool := r.PathValue("service"), r.PathValue("tool")
	if !validName(service) || !validName(tool) {
		writeError(w, http.StatusBadRequest, toolerr.InvalidArgument, "invalid service or tool name")
		return "", "", false
	}
	return service, tool, true
}

func (h *handler) showPin(w http.ResponseWriter, r *http.Request) {
	service, tool, ok := pinNames(w, r)
	if !ok {
		return
	}
	c, found := h.pins.PendingChange(service, tool)
	if !found {
		writeError(w, http.StatusNotFound, toolerr.NotFound, fmt.Sprintf("no pending change for %s/%s", service, tool))
		return
	}
	writeJSON(w, http.StatusOK, PinReply{Pending: PinChange{Change: c, Diff: pins.Diff(c)}})
}

// pinDecision accepts or rejects the pending definition the operator
// reviewed, named by its hash.
func (h *handler) pinDecision(decision string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h.decidePin(w, r, decision) }
}

func (h *handler) decidePin(w http.ResponseWriter, r *http.Request, decision string) {
	service, tool, ok := pinNames(w, r)
	if !ok {
		return
	}
	var body acceptBody
	if !readJSON(w, r, &body, `{"hash":"sha256:…","by":"name"}`) {
		return
	}
	hash := strings.ToLower(strings.TrimSpace(body.Hash))
	if !strings.HasPrefix(hash, "sha256:") {
		hash = "sha256:" + hash
	}
	if !hashPattern.MatchString(hash) {
		writeError(w, http.StatusBadRequest, toolerr.InvalidArgument,
			`body must name the reviewed definition: {"hash":"sha256:<64 hex digits>"}, as pins list shows it`)
		return
	}
	by := DefaultDecider
	if body.By != nil {
		if n := SanitizeName(*body.By); n != "" {
			by = n
		}
	}
	apply, verb := h.pins.Accept, "accepted"
	if decision == "rejected" {
		apply, verb = h.pins.Reject, "rejected"
	}
	err := apply(service, tool, hash)
	switch {
	case err == nil:
	case errors.Is(err, pins.ErrNoChange):
		writeError(w, http.StatusNotFound, toolerr.NotFound, fmt.Sprintf("no pending change for %s/%s", service, tool))
		return
	case errors.Is(err, pins.ErrHashMismatch):
		now := ""
		if c, found := h.pins.PendingChange(service, tool); found {
			now = " (now " + c.Current + ")"
		}
		h.log.Warn("pin decision refused: the pending definition changed", "decision", decision, "service", service, "tool", tool, "by", by, "reviewed", hash)
		writeError(w, http.StatusConflict, toolerr.Forbidden, fmt.Sprintf(
			"the pending definition of %s/%s is not %s%s; nothing was %s — review it again with pins show", service, tool, hash, now, verb))
		return
	default:
		h.log.Error("pin decision failed", "decision", decision, "service", service, "tool", tool, "by", by, "error", err)
		writeError(w, http.StatusInternalServerError, toolerr.Internal, "internal error")
		return
	}
	h.log.Info("pin "+verb, "service", service, "tool", tool, "hash", hash, "by", by)
	if decision == "rejected" {
		if rec, ok := h.events.(PinRejectRecorder); ok {
			rec.PinRejected(service, tool, hash, by)
		}
	} else if rec, ok := h.events.(PinRecorder); ok {
		rec.PinAccepted(service, tool, hash, by)
	}
	writeJSON(w, http.StatusOK, PinAccepted{Service: service, Tool: tool, Hash: hash})
}

func ticketID(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		writeError(w, http.StatusBadRequest, toolerr.InvalidArgument, "invalid ticket id")
		return "", false
	}
	return id, true
}

// readBy reads the optional {"by": NAME} body; an empty body means
// DefaultDecider.
func readBy(w http.ResponseWriter, r *http.Request) (string, bool) {
	var body decisionBody
	if !readJSON(w, r, &body, `{"by":"name"}`) {
		return "", false
	}
	if body.By == nil {
		return DefaultDecider, true
	}
	by := SanitizeName(*body.By)
	if by == "" {
		return DefaultDecider, true
	}
	return by, true
}

// readJSON reads an optional JSON object body into v (an empty body leaves
// v as it is); unknown fields are refused with example as the hint.
func readJSON(w http.ResponseWriter, r *http.Request, v any, example string) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, toolerr.TooLarge,
				fmt.Sprintf("request body is larger than %d bytes", maxBodyBytes))
		} else {
			writeError(w, http.StatusBadRequest, toolerr.InvalidArgument, "cannot read request body")
		}
		return false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return true
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.Decode(new(json.RawMessage)) != io.EOF {
		writeError(w, http.StatusBadRequest, toolerr.InvalidArgument, "body must be a JSON object like "+example)
		return false
	}
	return true
}

// SanitizeName makes a decider's name safe to store, log and show: valid
// UTF-8, no control or invisible formatting characters (which could spoof a
// terminal or a log line), trimmed, at most 64 characters.
func SanitizeName(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > maxNameRunes {
		s = strings.TrimSpace(string([]rune(s)[:maxNameRunes]))
	}
	return s
}

// safePreview makes sure the ticket encodes: a preview that is not JSON is
// shown as a JSON string instead of failing the whole answer.
func safePreview(t tickets.Ticket) tickets.Ticket {
	if len(t.Preview) > 0 && !json.Valid(t.Preview) {
		b, _ := json.Marshal(string(t.Preview))
		t.Preview = b
	}
	return t
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data, _ = json.Marshal(ErrorReply{Error: ErrorDetail{Code: toolerr.Internal, Message: "internal error"}})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(data, '\n'))
}

func writeError(w http.ResponseWriter, status int, code toolerr.Code, msg string) {
	writeJSON(w, status, ErrorReply{Error: ErrorDetail{Code: code, Message: msg}})
}
