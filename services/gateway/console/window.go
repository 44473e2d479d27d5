package console

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/services/gateway/audit"
	"github.com/toolgate/toolgate/services/gateway/policy"
)

// DefaultEntries is how many calls the window keeps.
const DefaultEntries = 2000

// maxArgsKept bounds the arguments kept with one entry; larger ones are
// only counted. Arguments are kept in memory only, never on disk.
const maxArgsKept = 4 << 10

// Outcome classes the activity view filters by.
const (
	ClassOK      = "ok"      // the call ran
	ClassPreview = "preview" // a write previewed; the client may confirm
	ClassWaiting = "waiting" // waits for a person's approval
	ClassRefused = "refused" // the admission step or the policy refused it
	ClassFailed  = "failed"  // it ran and failed (the service, a ticket, a deadline)
)

// Classes lists the classes in the order the page offers them.
var Classes = []string{ClassOK, ClassPreview, ClassWaiting, ClassRefused, ClassFailed}

// Entry is one call as its audit line tells it.
type Entry struct {
	ID uint64
	audit.Record
	// Args are the call's canonical arguments as the tap handed them (not
	// for a line read from the audit file, which never holds them);
	// ArgsSize is their size when they were too large to keep.
	Args     []byte
	ArgsSize int
	// FromFile: read from the audit file on start (which never holds
	// arguments), not from the tap.
	FromFile bool
}

// Class is what became of the call.
func (e Entry) Class() string { return classOf(e.Record) }

func classOf(r audit.Record) string {
	switch {
	case r.Outcome == "ok":
		return ClassOK
	case r.Outcome == "pending", r.Outcome == "preview" && r.Approval == approval.Human:
		return ClassWaiting
	case r.Outcome == "preview":
		return ClassPreview
	case r.Decision == policy.Deny, r.Outcome == "denied":
		return ClassRefused
	}
	return ClassFailed
}

// Why is the reason worth showing: for a call refused or held (waiting
// for a person, or a preview waiting for the client's confirm). A call
// that ran, well or not, was allowed; its outcome says the rest.
func (e Entry) Why() bool {
	c := e.Class()
	return c == ClassRefused || c == ClassWaiting || c == ClassPreview
}

// admissionWords say what the admission step's refusals mean; their audit
// lines carry the id alone as the reason.
var admissionWords = map[string]string{
	"unknown_tool":    "no service offers a tool of this name",
	"not_on_endpoint": "the tool is not on the endpoint the client called",
	"not_visible":     "the policy does not let this client see the tool",
	"no_end_user":     "the client did not say which end user asks",
	"no_client":       "no authenticated client",
}

// ReasonText is the reason in words: the policy's, or what an admission
// refusal means.
func (e Entry) ReasonText() string {
	if e.Reason == e.ReasonID {
		if w, ok := admissionWords[e.ReasonID]; ok {
			return w
		}
	}
	return e.Reason
}

// Window is the operator console's memory of the audit trail: the latest
// calls, and per service the calls, failures and latencies of the last
// hour. It is filled from the audit file on start and then from the audit
// tap; the audit lines stay the source of truth, the window only forgets.
type Window struct {
	mu      sync.Mutex
	ring    []Entry
	next    int // where the next entry goes
	n       int // entries held
	seq     uint64
	stats   *stats
	skipped int // lines of the audit file that could not be read
}

// NewWindow keeps the latest size calls (DefaultEntries when size <= 0).
func NewWindow(size int) *Window {
	if size <= 0 {
		size = DefaultEntries
	}
	return &Window{ring: make([]Entry, size), stats: newStats()}
}

// Load reads the audit file at path into the window (oldest first), so a
// restart keeps what the trail holds. Unreadable lines are counted and
// skipped.
func (w *Window) Load(path string) error {
	return audit.ReadFile(path, func(line []byte) { w.addLine(line, nil, true) })
}

// Run reads the tap until ctx ends. The tap hands on records, each
// exactly what its line says (audit.TestTappedRecordIsTheLine), so the
// window shows the trail without decoding it again.
func (w *Window) Run(ctx context.Context, tap <-chan audit.Tapped) {
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-tap:
			w.add(t.Record, t.Args, false)
		}
	}
}

func (w *Window) addLine(line, args []byte, fromFile bool) {
	rec, err := audit.Parse(line)
	if err != nil {
		w.mu.Lock()
		w.skipped++
		w.mu.Unlock()
		return
	}
	w.add(rec, args, fromFile)
}

// Add puts one audit record into the window; only call outcomes are
// calls (decision, ticket and pin lines are not).
func (w *Window) Add(rec audit.Record, args []byte) { w.add(rec, args, false) }

func (w *Window) add(rec audit.Record, args []byte, fromFile bool) {
	if rec.Event != audit.EventOutcome {
		return
	}
	rec.Args = nil // kept beside, bounded
	e := Entry{Record: rec, FromFile: fromFile}
	if len(args) > maxArgsKept {
		e.ArgsSize = len(args)
	} else {
		e.Args = args
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	e.ID = w.seq
	w.ring[w.next] = e
	w.next = (w.next + 1) % len(w.ring)
	if w.n < len(w.ring) {
		w.n++
	}
	w.stats.add(rec, e.Class())
}

// Filter selects entries; empty fields select all.
type Filter struct {
	Client, Service, Class, ReasonID string
}

func (f Filter) match(e *Entry) bool {
	return (f.Client == "" || e.Client == f.Client) && (f.Service == "" || e.Service == f.Service) &&
		(f.Class == "" || e.Class() == f.Class) && (f.ReasonID == "" || e.ReasonID == f.ReasonID)
}

// Activity is a page of the window: the newest entries that match.
type Activity struct {
	Entries []Entry
	// Matched is how many entries matched in all; Held how many the
	// window holds.
	Matched, Held int
	// Clients and Services are the names the window holds, for the
	// filter's choices.
	Clients, Services []string
	// Reasons are the reason ids of the refused, waiting and failed calls
	// that match the filter (without its reason), most frequent first.
	Reasons []ReasonCount
}

// ReasonCount is how often one reason id came up, with its latest words.
type ReasonCount struct {
	ID, Reason string
	Count      int
}

// Latest returns up to limit of the newest entries that match f.
func (w *Window) Latest(f Filter, limit int) Activity {
	w.mu.Lock()
	defer w.mu.Unlock()
	var a Activity
	clients, services := map[string]bool{}, map[string]bool{}
	reasons := map[string]*ReasonCount{}
	all := f
	all.ReasonID = ""
	for i := range w.n {
		e := &w.ring[(w.next-1-i+len(w.ring))%len(w.ring)]
		clients[e.Client], services[e.Service] = true, true
		if all.match(e) && e.Why() && e.ReasonID != "" {
			rc := reasons[e.ReasonID]
			if rc == nil {
				rc = &ReasonCount{ID: e.ReasonID, Reason: e.ReasonText()}
				reasons[e.ReasonID] = rc
			}
			rc.Count++
		}
		if !f.match(e) {
			continue
		}
		a.Matched++
		if len(a.Entries) < limit {
			a.Entries = append(a.Entries, *e)
		}
	}
	a.Held = w.n
	a.Clients, a.Services = names(clients), names(services)
	for _, rc := range reasons {
		a.Reasons = append(a.Reasons, *rc)
	}
	slices.SortFunc(a.Reasons, func(x, y ReasonCount) int {
		if x.Count != y.Count {
			return y.Count - x.Count
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return a
}

// Get returns the entry with id, if the window still holds it.
func (w *Window) Get(id uint64) (Entry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id == 0 || id > w.seq || w.seq-id >= uint64(w.n) {
		return Entry{}, false
	}
	i := (w.next - 1 - int(w.seq-id) + len(w.ring)) % len(w.ring)
	return w.ring[i], true
}

// Skipped is how many audit-file lines could not be read.
func (w *Window) Skipped() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.skipped
}

// Services returns each service's figures over the hour before now.
func (w *Window) Services(now time.Time) []ServiceFigures {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats.figures(now)
}

func names(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		if k != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
