package tools

import (
	"sync"
)

// What a Tuliprox release must have for a tool, said when it lacks the
// route (read in euzu/tuliprox: the v3.3.0 tag and develop at 3.3.3).
const (
	// needsSeedAPI: the routes of the seed's catalog that no published
	// Tuliprox has.
	needsSeedAPI = "the playlist, EPG, event and update-status API of Tuliprox's MCP operator reference; no published release has it (checked to 3.3.3)"
	// needsHistory: stream history and QoS snapshots came after v3.3.0.
	needsHistory = "Tuliprox 3.3.1 or later; the v3.3.0 release has no stream history or QoS snapshots"
)

// historyForm is how the running Tuliprox's /stream-history takes a query.
type historyForm int

const (
	// formUnknown: not learned yet.
	formUnknown historyForm = iota
	// formPaged: the seed's API pages and searches (page, page_size,
	// search, search_mode, search_field) and answers an object.
	formPaged
	// formFiltered: the released API takes from, to and exact filter
	// fields only, answers 400 "Unknown filter field" to anything else, and
	// answers the whole range as a bare array.
	formFiltered
)

// release is what this process learned of the running Tuliprox's API.
// Every answer checks it: an answer of the other form overturns it at
// once, so an updated Tuliprox costs one extra request, never a wrong
// answer.
type release struct {
	mu      sync.Mutex
	history historyForm
}

func (r *release) historyForm() historyForm {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.history
}

func (r *release) learnHistory(f historyForm) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.history = f
}
