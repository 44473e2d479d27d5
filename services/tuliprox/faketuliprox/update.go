package faketuliprox

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// An update the fake accepted stays queued for UpdateQueued, then runs for
// UpdateRuns, then is finished: time enough to see a 409 and the status.
const (
	UpdateQueued = 5 * time.Second
	UpdateRuns   = 15 * time.Second
)

type updateState struct {
	seq      int
	active   bool
	runID    int
	targets  []string
	queuedAt time.Time
	last     map[string]any

	// The released queue (main_api.rs): a channel of capacity 1 that the
	// update worker empties when it starts a run.
	running []string // targets of the run in progress; nil when idle
	started time.Time
	waiting []string // targets of the request in the channel
	hasWait bool
	dropped int
	runs    [][]string
}

// advance moves the update along the clock; f.mu is held.
func (f *Fake) advance(now time.Time) string {
	u := &f.update
	if !u.active {
		return "idle"
	}
	switch d := now.Sub(u.queuedAt); {
	case d < UpdateQueued:
		return "queued"
	case d < UpdateQueued+UpdateRuns:
		return "running"
	}
	u.active = false
	u.last = map[string]any{"run_id": u.runID, "targets": u.targets, "finished_at": rfc(u.queuedAt.Add(UpdateQueued + UpdateRuns)), "result": "success"}
	return "idle"
}

// updateStatus is GET /playlist/update/status.
func (f *Fake) updateStatus(w http.ResponseWriter, _ *http.Request) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	state := f.advance(now)
	resp := map[string]any{"state": state, "run_id": nil, "targets": []string{}, "queued_at": nil, "last_run": f.update.last}
	if state != "idle" {
		resp["run_id"], resp["targets"], resp["queued_at"] = f.update.runID, f.update.targets, rfc(f.update.queuedAt)
	}
	writeJSON(w, http.StatusOK, resp)
}

// playlistUpdate is POST /playlist/update with a JSON list of target names
// (empty: every target): 202 with a run id, 409 while one is queued, 400
// for an unknown target.
func (f *Fake) playlistUpdate(w http.ResponseWriter, r *http.Request) {
	var targets []string
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&targets); err != nil {
		http.Error(w, "Failed to deserialize the JSON body", http.StatusUnprocessableEntity)
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	targets, msg := f.validateTargets(targets)
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	if f.advance(now) != "idle" {
		writeError(w, http.StatusConflict, "A playlist update is already queued")
		return
	}
	f.update.seq++
	f.update.active, f.update.runID, f.update.targets, f.update.queuedAt = true, f.update.seq, slices.Clone(targets), now
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": f.update.runID})
}

// Updates is how many playlist updates the fake queued (a dropped one does
// not count).
func (f *Fake) Updates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.update.seq
}

// validateTargets is validate_targets (model/config/source.rs): each name
// sent is lower-cased (Unicode) and then compared with the configured
// names ignoring ASCII case only, so a configured name with a non-ASCII
// capital ("ÖRF") is never found; missing ones are named lower-cased. No
// names means every target. f.mu is held.
func (f *Fake) validateTargets(names []string) ([]string, string) {
	if len(names) == 0 {
		all := make([]string, 0, len(f.data.Targets))
		for _, t := range f.data.Targets {
			all = append(all, t.Name)
		}
		return all, ""
	}
	var out, missing []string
	for _, n := range names {
		found := false
		for _, t := range f.data.Targets {
			if asciiEqualFold(t.Name, strings.ToLower(n)) {
				out, found = append(out, t.Name), true
			}
		}
		if !found && !slices.Contains(missing, strings.ToLower(n)) {
			missing = append(missing, strings.ToLower(n))
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, "No target found for " + strings.Join(missing, ", ")
	}
	return out, ""
}

// advanceReleased moves the released queue along the clock: a run takes
// UpdateRuns, and the waiting request starts when it ends. f.mu is held.
func (f *Fake) advanceReleased(now time.Time) {
	u := &f.update
	for u.running != nil && !now.Before(u.started.Add(UpdateRuns)) {
		end := u.started.Add(UpdateRuns)
		u.running = nil
		if u.hasWait {
			u.running, u.started, u.waiting, u.hasWait = u.waiting, end, nil, false
		}
	}
}

// playlistUpdateReleased is the released POST /playlist/update
// (v1_api_playlist.rs): 400 for an unknown target, otherwise 202 with an
// empty body, whether the request entered the channel or was dropped
// because one already waits there.
func (f *Fake) playlistUpdateReleased(w http.ResponseWriter, r *http.Request) {
	var names []string
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&names); err != nil {
		http.Error(w, "Failed to deserialize the JSON body", http.StatusUnprocessableEntity)
		return
	}
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	targets, msg := f.validateTargets(names)
	if msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return
	}
	f.advanceReleased(now)
	u := &f.update
	switch {
	case u.hasWait:
		u.dropped++ // "Manual playlist update deduplicated"
	case u.running == nil:
		u.seq++
		u.running, u.started = slices.Clone(targets), now
		u.runs = append(u.runs, u.running)
	default:
		u.seq++
		u.waiting, u.hasWait = slices.Clone(targets), true
		u.runs = append(u.runs, u.waiting)
	}
	w.WriteHeader(http.StatusAccepted)
}

// DroppedUpdates is how many update requests the released queue dropped
// because one was already waiting.
func (f *Fake) DroppedUpdates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.update.dropped
}

// TakenUpdates lists the targets of every update the released queue took,
// in order.
func (f *Fake) TakenUpdates() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.update.runs)
}
