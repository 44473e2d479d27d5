package fakeersatztv

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// Request is what a fake received, for tests to inspect.
type Request struct {
	Method string
	// Path is the escaped request path.
	Path    string
	Query   url.Values
	Host    string
	IfMatch string
	// Key is the X-Api-Key header as received.
	Key  string
	Body string
}

// recorder keeps the last maxRecorded requests a fake received.
type recorder struct {
	mu   sync.Mutex
	reqs []Request
}

func (r *recorder) record(req *http.Request, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, Request{
		Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.Query(), Host: req.Host,
		IfMatch: req.Header.Get("If-Match"), Key: req.Header.Get("X-Api-Key"), Body: string(body),
	})
	if len(r.reqs) > maxRecorded {
		r.reqs = r.reqs[len(r.reqs)-maxRecorded:]
	}
}

// maxRecorded bounds what a fake keeps: tests look at the last few, and a
// demo stack left running must not grow.
const maxRecorded = 10_000

// Requests returns what the fake received so far.
func (r *recorder) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.reqs...)
}

// Writes returns the requests that were not GETs.
func (r *recorder) Writes() []Request {
	var out []Request
	for _, q := range r.Requests() {
		if q.Method != http.MethodGet {
			out = append(out, q)
		}
	}
	return out
}

// Reset forgets the recorded requests.
func (r *recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = nil
}

// readBody reads a request body of at most 1 MiB, as ASP.NET's limits
// would stop a huge one.
func readBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	return b
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// problem writes an RFC 9457 problem, as ASP.NET's Problem() does.
func problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type": "https://tools.ietf.org/html/rfc9110#section-15", "title": title, "status": status, "detail": detail,
		"traceId": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
	})
}

func pathInt(r *http.Request, name string) (int, bool) {
	n, err := strconv.Atoi(r.PathValue(name))
	return n, err == nil && n >= 0
}

// isIptvPath is ErsatzTV's list of streaming paths, which pass the Host
// check on any port.
func isIptvPath(p string) bool {
	for _, prefix := range []string{"/iptv", "/discover.json", "/device.xml", "/lineup.json", "/lineup_status.json"} {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}
