package arrfake

import (
	"fmt"
	"net/http/httptest"
	"testing"
)

// A demo stack left running must not grow: a Recorder keeps only the last
// MaxRecorded requests, the newest last.
func TestRecorderIsBounded(t *testing.T) {
	var rec Recorder
	for i := range MaxRecorded + 5 {
		rec.Record(httptest.NewRequest("GET", fmt.Sprintf("/api/v3/series?n=%d", i), nil), nil)
	}
	got := rec.Requests()
	if len(got) != MaxRecorded || got[len(got)-1].Query.Get("n") != fmt.Sprint(MaxRecorded+4) {
		t.Fatalf("%d requests kept, last %+v", len(got), got[len(got)-1])
	}
}
