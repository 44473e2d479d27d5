// Package arrfake is the plumbing the fake Sonarr, Radarr and Prowlarr
// (test and demo fixtures) share: the API-key check the *arr applications
// make, JSON answers, request recording, the paging envelope, and the
// hooks that make release searches slow or hold them. What each fake
// answers (routes, seeded data, error bodies) stays in the fake.
package arrfake

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Authorized reports whether r carries key the way the *arr applications
// accept it: the X-Api-Key header, else the apikey query parameter.
func Authorized(r *http.Request, key string) bool {
	got := r.Header.Get("X-Api-Key")
	if got == "" {
		got = r.URL.Query().Get("apikey")
	}
	return got == key
}

// Unauthorized answers like the applications do for a missing or wrong
// key: 401 with an empty body.
func Unauthorized(w http.ResponseWriter) { w.WriteHeader(http.StatusUnauthorized) }

// WriteJSON answers v as JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// Problem answers an error the way Sonarr and Radarr do:
// {"message": msg, "description": ""}.
func Problem(w http.ResponseWriter, status int, msg string) {
	WriteJSON(w, status, map[string]any{"message": msg, "description": ""})
}

// maxBody bounds the request bodies a fake reads.
const maxBody = 1 << 20

// ReadBody reads up to 1 MiB of r's body and puts the bytes back, so the
// handler can still decode them after the request was recorded.
func ReadBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}

// IntParam reads the integer query parameter name, def when it is absent.
func IntParam(q url.Values, name string, def int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	return strconv.Atoi(v)
}

// Request is one request a fake received.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	// Body is the request body (empty for GETs and where not recorded).
	Body string
}

// Recorder keeps the requests a fake received. The zero value is ready;
// it is safe for concurrent use.
type Recorder struct {
	mu   sync.Mutex
	reqs []Request
}

// Record appends r with body.
func (rec *Recorder) Record(r *http.Request, body []byte) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.reqs = append(rec.reqs, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: string(body)})
	if len(rec.reqs) > MaxRecorded {
		rec.reqs = rec.reqs[len(rec.reqs)-MaxRecorded:]
	}
}

// MaxRecorded bounds what a Recorder keeps: tests look at the last few,
// and a demo stack left running must not grow.
const MaxRecorded = 10_000

// Requests returns the last MaxRecorded requests, oldest first.
func (rec *Recorder) Requests() []Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reqs)
}

// Page is the paging envelope (…PagingResource) of queue, history and
// wanted/missing.
type Page struct {
	Page          int    `json:"page"`
	PageSize      int    `json:"pageSize"`
	SortKey       string `json:"sortKey"`
	SortDirection string `json:"sortDirection"`
	TotalRecords  int    `json:"totalRecords"`
	Records       any    `json:"records"`
}

// PageOf is the envelope of page (from 1) of all with size records a
// page; page and size must be positive.
func PageOf[T any](all []T, page, size int, sortKey, sortDirection string) Page {
	from := min((page-1)*size, len(all))
	to := min(from+size, len(all))
	return Page{Page: page, PageSize: size, SortKey: sortKey, SortDirection: sortDirection, TotalRecords: len(all), Records: all[from:to]}
}

// QueuePageOf is PageOf as the queue controllers of Sonarr and Radarr page:
// a page past the end is answered with an earlier one, page
// max(TotalRecords / PageSize, 1) in integer division (the source takes
// the ceiling after truncating, so with 45 records of 20 a page it is page
// 2, not the last page 3).
func QueuePageOf[T any](all []T, page, size int, sortKey, sortDirection string) Page {
	p := PageOf(all, page, size, sortKey, sortDirection)
	if page > 1 && (page-1)*size >= len(all) {
		p = PageOf(all, max(len(all)/size, 1), size, sortKey, sortDirection)
	}
	return p
}

// SearchHooks make a fake's release searches slow or hold them, to test
// deadlines and the demo's feel without timing assumptions. The zero
// value adds no wait; it is safe for concurrent use.
type SearchHooks struct {
	mu    sync.Mutex
	delay time.Duration
	block chan struct{}
}

// SetSearchDelay makes every search wait d (or until the client gives up).
func (h *SearchHooks) SetSearchDelay(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.delay = d
}

// BlockSearches makes searches hang until the client gives up or release
// is called.
func (h *SearchHooks) BlockSearches() (release func()) {
	ch := make(chan struct{})
	h.mu.Lock()
	h.block = ch
	h.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(ch) }) }
}

// WaitSearch waits as the hooks say: until a block is released, then for
// the delay. It returns false when ctx ended first (the client gave up);
// the handler then answers nothing.
func (h *SearchHooks) WaitSearch(ctx context.Context) bool {
	h.mu.Lock()
	delay, block := h.delay, h.block
	h.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return false
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
