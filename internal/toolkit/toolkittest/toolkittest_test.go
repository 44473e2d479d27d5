package toolkittest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// recorder is a testing.TB that keeps what a check reports instead of
// failing the test, so a test can assert that the check fails.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestNoLeaksNamesThePlaceNotTheSecret(t *testing.T) {
	r := &recorder{TB: t}
	toolkittest.NoLeaks(r, []string{"upstream-key-4c1d9e", ""}, map[string]string{
		"logs":  `{"msg":"call","key":"upstream-key-4c1d9e"}`,
		"audit": "clean",
		"wire":  "token " + toolkittest.ServiceToken,
	})
	got := strings.Join(r.errors, "\n")
	if len(r.errors) != 2 || !strings.Contains(got, "logs contain a secret") || !strings.Contains(got, "wire contain a secret") {
		t.Fatalf("reported:\n%s", got)
	}
	if strings.Contains(got, "4c1d9e") || strings.Contains(got, toolkittest.ServiceToken) {
		t.Errorf("the report shows a whole secret:\n%s", got)
	}
	r = &recorder{TB: t}
	toolkittest.NoLeaks(r, []string{"upstream-key-4c1d9e"}, map[string]string{"logs": "clean"})
	if len(r.errors) != 0 {
		t.Errorf("clean text reported: %v", r.errors)
	}
}

type lookupArgs struct {
	ID int `json:"id" schema:"minimum=1"`
}

func lookupService(t *testing.T, seen *[]int) *toolkittest.Service {
	return toolkittest.Start(t, "demo", []toolkit.Tool{{
		Name: "demo_lookup", Description: "Look an item up.", Annotations: toolkit.Annotations{ReadOnly: true},
		Handler: toolkit.ReadFor(func(_ context.Context, in lookupArgs) (map[string]any, error) {
			*seen = append(*seen, in.ID)
			if in.ID == 7 {
				return map[string]any{"id": 7, "note": "key upstream-key-77aa"}, nil
			}
			return map[string]any{"id": in.ID, "name": "item"}, nil
		}),
	}})
}

func TestRunReads(t *testing.T) {
	var seen []int
	svc := lookupService(t, &seen)
	marked := false
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "found", Tool: "demo_lookup", Args: map[string]any{"id": 2}, Before: func() { marked = true },
			Has: []string{`"id":2`, `"name":"item"`}, HasNot: []string{"secret"},
			Check: func(t *testing.T, got map[string]any) {
				if got["id"] != 2.0 {
					t.Errorf("id = %v", got["id"])
				}
			}},
		{Name: "bad argument", Tool: "demo_lookup", Args: map[string]any{"id": 0}, Code: "invalid_argument", Has: []string{"/id"}},
	})
	if !marked || len(seen) != 1 || seen[0] != 2 {
		t.Fatalf("Before ran: %v, handler saw %v", marked, seen)
	}
}

// RunReads fails a case whose answer does not hold what it should, whose
// outcome is not the expected one, or that shows a credential. The cases
// run in a child test process, since their failures are the point.
func TestRunReadsReportsFailures(t *testing.T) {
	if os.Getenv("TOOLKITTEST_FAILING_READS") == "1" {
		var seen []int
		lookupService(t, &seen).RunReads(t, []toolkittest.ReadCase{
			{Name: "lacks", Tool: "demo_lookup", Args: map[string]any{"id": 3}, Has: []string{`"name":"other"`}},
			{Name: "leaks", Tool: "demo_lookup", Args: map[string]any{"id": 7}},
			{Name: "wrong outcome", Tool: "demo_lookup", Args: map[string]any{"id": 3}, Code: "not_found"},
		}, "upstream-key-77aa")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunReadsReportsFailures$", "-test.v")
	cmd.Env = append(os.Environ(), "TOOLKITTEST_FAILING_READS=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("failing cases passed:\n%s", out)
	}
	for _, want := range []string{"--- FAIL: TestRunReadsReportsFailures/lacks", `answer lacks "name":"other"`,
		"--- FAIL: TestRunReadsReportsFailures/leaks", "the answer contain a secret",
		"--- FAIL: TestRunReadsReportsFailures/wrong_outcome", "succeeded, want not_found"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
