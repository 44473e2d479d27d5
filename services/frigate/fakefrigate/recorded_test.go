package fakefrigate

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A demo stack left running must not grow: the fake remembers only the
// last maxRecorded requests, the newest last.
func TestRecordedRequestsAreBounded(t *testing.T) {
	f := New(Options{Unauthenticated: true})
	h := f.Handler()
	for i := range maxRecorded + 5 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/version?n=%d", i), nil))
	}
	got := f.Requests()
	if len(got) != maxRecorded || got[len(got)-1] != fmt.Sprintf("GET /api/version?n=%d", maxRecorded+4) {
		t.Fatalf("%d requests kept, last %q", len(got), got[len(got)-1])
	}
}
