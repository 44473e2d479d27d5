package fakeunraid

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// A demo stack left running must not grow: the fake remembers only the
// last maxRecorded calls; a throttle still counts every call served.
func TestRecordedCallsAreBounded(t *testing.T) {
	doc := unraidapi.Documents()[0]
	f := New(Options{ViewerKey: viewer, AdminKey: admin}, DemoState(time.Unix(1_765_000_000, 0)))
	f.mu.Lock()
	f.calls = make([]Call, maxRecorded)
	f.served = maxRecorded
	f.mu.Unlock()
	if status, _ := post(t, f.Handler(), viewer, doc, varsFor[doc.Name]); status != 200 {
		t.Fatalf("HTTP %d", status)
	}
	if got := f.Calls(); len(got) != maxRecorded || got[len(got)-1].Operation != doc.Name {
		t.Fatalf("%d calls kept, last %+v", len(got), got[len(got)-1])
	}
	throttled := New(Options{ViewerKey: viewer, AdminKey: admin, Throttle: maxRecorded + 1}, DemoState(time.Unix(1_765_000_000, 0)))
	throttled.mu.Lock()
	throttled.calls, throttled.served = make([]Call, maxRecorded), maxRecorded+1
	throttled.mu.Unlock()
	if status, _ := post(t, throttled.Handler(), viewer, doc, varsFor[doc.Name]); status != 429 {
		t.Fatalf("past the throttle: HTTP %d", status)
	}
}
