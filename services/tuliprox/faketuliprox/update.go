package faketuliprox

import (
	"encoding/json"
	"net/http"
	"slices"
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
	for _, t := range targets {
		if f.data.target(t) == nil {
			writeError(w, http.StatusBadRequest, "Unknown target: "+t)
			return
		}
	}
	if f.advance(now) != "idle" {
		writeError(w, http.StatusConflict, "A playlist update is already queued")
		return
	}
	if len(targets) == 0 {
		for _, t := range f.data.Targets {
			targets = append(targets, t.Name)
		}
	}
	f.update.seq++
	f.update.active, f.update.runID, f.update.targets, f.update.queuedAt = true, f.update.seq, slices.Clone(targets), now
	writeJSON(w, http.StatusAccepted, map[string]any{"run_id": f.update.runID})
}

// Updates is how many playlist updates the fake accepted.
func (f *Fake) Updates() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.update.seq
}
