package faketuliprox

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A demo stack left running must not grow: the fake remembers only the
// last maxRecorded requests, the newest last.
func TestRecordedRequestsAreBounded(t *testing.T) {
	f := New(Options{NoAuth: true})
	for i := range maxRecorded + 5 {
		f.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/status?n=%d", i), nil))
	}
	got := f.Requests()
	if len(got) != maxRecorded || got[len(got)-1].Query != fmt.Sprintf("n=%d", maxRecorded+4) {
		t.Fatalf("%d requests kept, last %+v", len(got), got[len(got)-1])
	}
}
