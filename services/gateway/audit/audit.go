// Package audit writes the gateway's audit trail: one JSON object per line
// for every call (decision and outcome), write decision and ticket event.
// Records hold an argument digest, never the arguments, and never a token.
package audit

import (
	"io"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/approval"
)

// Event names.
const (
	EventDecision = "decision"
	EventOutcome  = "outcome"
	EventTicket   = "ticket"
	// EventPin: an operator accepted a changed tool definition or
	// service instructions.
	EventPin = "pin"
)

// maxField bounds each string field in bytes so one hostile value cannot
// produce a huge line.
const maxField = 1024

// Record is one audit event. Empty fields are omitted from the line.
type Record struct {
	Time     time.Time
	Event    string // EventDecision, EventOutcome, EventTicket or EventPin
	Client   string
	User     string
	UserRole string
	// Endpoint is the MCP endpoint the call was admitted on ("/mcp",
	// "/mcp/sonarr", "/mcp/discover"); an OpenAPI call names its
	// service's.
	Endpoint string
	Service  string
	Tool     string
	// Phase is what the call was: PhaseRead, PhasePreview (a write
	// without confirm), PhaseConfirm, or PhaseApply (a low-risk write
	// applied without a ticket); "" when it was refused before its
	// arguments were read.
	Phase    string
	Decision string
	Reason   string
	// ReasonID is the stable id of Reason (the policy's reason_id, or
	// the admission step's refusal), for grouping: Reason's words may
	// change, ReasonID does not.
	ReasonID   string
	Approval   approval.Kind
	TicketID   string
	ArgsDigest string
	DurationMS float64
	Outcome    string // ok, an error code, denied, pending, ...
	Bytes      int
	// Sync writes this line, and every line before it, before Log
	// returns, even on a buffered Logger (writes, tickets). Not written.
	Sync bool
	// Args are the call's canonical arguments. Not written: only a tap
	// (the operator console) receives them, beside the line.
	Args []byte
}

// Phases of a call.
const (
	PhaseRead    = "read"
	PhasePreview = "preview"
	PhaseConfirm = "confirm"
	PhaseApply   = "apply"
)

// Logger writes Records to an io.Writer. It is safe for concurrent use.
// Every Write call carries whole lines only: one line for an unbuffered
// Logger, a batch of lines for a buffered one.
type Logger struct {
	mu  sync.Mutex
	w   io.Writer
	err error

	// Buffered loggers only: pending lines, how long they may wait, and
	// the timer that writes them.
	buffered bool
	pending  []byte
	interval time.Duration
	timer    *time.Timer
	closed   bool

	// tap, when set, receives every line without waiting (Tap).
	tap     chan<- Tapped
	dropped atomic.Int64
}

// Tapped is one audit line as a record: exactly what the line says
// (every field as written, so Parse of the line gives the same record)
// plus the call's arguments (Args), which never reach the sink. The tap
// gets the record rather than the line so its reader need not decode
// what was just encoded.
type Tapped struct {
	Record
}

// Tap hands every line logged from now on to ch as well. Log never waits
// for ch: a line that finds it full is only counted (Dropped), so a slow
// reader costs the calls nothing; the sink still gets every line. Call
// Tap before the Logger is used.
func (l *Logger) Tap(ch chan<- Tapped) { l.tap = ch }

// Dropped is how many lines the tap missed because its channel was full.
func (l *Logger) Dropped() int64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// New returns a Logger that writes each record to w at once.
func New(w io.Writer) *Logger { return &Logger{w: w} }

// maxPending is how many bytes of lines a buffered Logger collects before
// it writes them regardless of the interval.
const maxPending = 32 << 10

// NewBuffered returns a Logger that collects lines and writes them to w in
// batches: when maxPending bytes are waiting, at the latest interval after
// the first waiting line, at once for a record marked Sync, and on Flush
// and Close. Close must run before the process exits so no line is lost;
// after Close, records are written at once.
func NewBuffered(w io.Writer, interval time.Duration) *Logger {
	return &Logger{w: w, buffered: true, interval: interval}
}

// Discard returns a Logger that drops every record.
func Discard() *Logger { return New(io.Discard) }

// Log writes r as one JSON line. A zero Time is set to now. Write errors are
// kept for Err rather than returned, so auditing never fails a call path
// that has already happened.
func (l *Logger) Log(r Record) {
	if l == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	if math.IsNaN(r.DurationMS) || math.IsInf(r.DurationMS, 0) {
		r.DurationMS = 0 // JSON cannot carry them; keep the rest of the record
	}
	ln := line{
		Time:       r.Time.UTC().Format(time.RFC3339Nano),
		Event:      clean(r.Event),
		Client:     clean(r.Client),
		User:       clean(r.User),
		UserRole:   clean(r.UserRole),
		Endpoint:   clean(r.Endpoint),
		Service:    clean(r.Service),
		Tool:       clean(r.Tool),
		Phase:      clean(r.Phase),
		Decision:   clean(r.Decision),
		Reason:     clean(r.Reason),
		ReasonID:   clean(r.ReasonID),
		Approval:   clean(string(r.Approval)),
		TicketID:   clean(r.TicketID),
		ArgsDigest: clean(r.ArgsDigest),
		DurationMS: r.DurationMS,
		Outcome:    clean(r.Outcome),
		Bytes:      r.Bytes,
	}
	b := appendLine(make([]byte, 0, 384), ln)
	if l.tap != nil {
		select {
		case l.tap <- Tapped{Record: ln.record(r.Time, r.Args)}:
		default:
			l.dropped.Add(1)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.buffered || l.closed {
		l.write(append(b, '\n'))
		return
	}
	l.pending = append(append(l.pending, b...), '\n')
	switch {
	case r.Sync || len(l.pending) >= maxPending:
		l.flushLocked()
	case l.timer == nil:
		l.timer = time.AfterFunc(l.interval, func() { _ = l.Flush() })
	}
}

// Flush writes every waiting line and returns the first write error.
func (l *Logger) Flush() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	return l.err
}

// Close writes every waiting line; later records are written at once.
func (l *Logger) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	l.closed = true
	return l.err
}

func (l *Logger) flushLocked() {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if len(l.pending) == 0 {
		return
	}
	l.write(l.pending)
	// A burst must not pin a large buffer for the process's life.
	if cap(l.pending) > 4*maxPending {
		l.pending = nil
	} else {
		l.pending = l.pending[:0]
	}
}

func (l *Logger) write(b []byte) {
	_, err := l.w.Write(b)
	l.keep(err)
}

func (l *Logger) keep(err error) {
	if err != nil && l.err == nil {
		l.err = err
	}
}

// Err returns the first write error, if any, so health checks can report a
// broken audit sink.
func (l *Logger) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// clean drops control and line-separator characters and invalid UTF-8, then
// caps the length on a rune boundary. JSON encoding would escape a newline
// anyway; stripping it also protects anyone who prints the decoded value.
func clean(s string) string {
	ok := len(s) <= maxField
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > maxField {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// record is the Record a line says, at t, with args beside it.
func (l line) record(t time.Time, args []byte) Record {
	return Record{
		Time: t.UTC(), Event: l.Event, Client: l.Client, User: l.User, UserRole: l.UserRole, Endpoint: l.Endpoint,
		Service: l.Service, Tool: l.Tool, Phase: l.Phase, Decision: l.Decision, Reason: l.Reason,
		ReasonID: l.ReasonID, Approval: approval.Kind(l.Approval), TicketID: l.TicketID, ArgsDigest: l.ArgsDigest,
		DurationMS: l.DurationMS, Outcome: l.Outcome, Bytes: l.Bytes, Args: args,
	}
}
