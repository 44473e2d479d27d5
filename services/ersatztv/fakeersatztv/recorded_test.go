package fakeersatztv

import (
	"fmt"
	"net/http/httptest"
	"testing"
)

// A demo stack left running must not grow: the fake keeps only the last
// maxRecorded requests, the newest last.
func TestRecorderIsBounded(t *testing.T) {
	var rec recorder
	for i := range maxRecorded + 5 {
		rec.record(httptest.NewRequest("GET", fmt.Sprintf("/api/v1/channels?n=%d", i), nil), nil)
	}
	got := rec.Requests()
	if len(got) != maxRecorded || got[len(got)-1].Query.Get("n") != fmt.Sprint(maxRecorded+4) {
		t.Fatalf("%d requests kept, last %+v", len(got), got[len(got)-1])
	}
}
