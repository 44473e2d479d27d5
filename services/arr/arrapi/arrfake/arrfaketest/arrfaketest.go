// Package arrfaketest drives the fake *arr applications in their own
// tests: one request at a time in-process, or a table of requests with
// the status (and a part of the body) each must answer.
package arrfaketest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Do sends one request to h in-process, with key in X-Api-Key unless it
// is empty, and returns the status and the body.
func Do(t *testing.T, h http.Handler, method, target, key, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// Case is one request and what the fake must answer.
type Case struct {
	Name                      string
	Method, Target, Key, Body string
	Status                    int
	// Contains must be part of the body ("" for any body).
	Contains string
}

// Check sends cases to h in order (a case may depend on the ones before,
// e.g. a grab on a search) and reports every answer that differs.
func Check(t *testing.T, h http.Handler, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		status, body := Do(t, h, tc.Method, tc.Target, tc.Key, tc.Body)
		if status != tc.Status || !strings.Contains(body, tc.Contains) {
			t.Errorf("%s (%s %s): HTTP %d, want %d with %q: %.200s", tc.Name, tc.Method, tc.Target, status, tc.Status, tc.Contains, body)
		}
	}
}
