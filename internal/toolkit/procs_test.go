package toolkit_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// TestRunsOnOnePUnlessTold: unset, a serving process sets one P; an
// operator's GOMAXPROCS (which the runtime applied before main) is left
// alone.
func TestRunsOnOnePUnlessTold(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int
	}{
		{"unset", nil, 1},
		{"empty", map[string]string{"GOMAXPROCS": ""}, 1},
		{"operator's number", map[string]string{"GOMAXPROCS": "4"}, 0},
		{"one", map[string]string{"GOMAXPROCS": "1"}, 0},
		{"invalid (the runtime ignores it)", map[string]string{"GOMAXPROCS": "many"}, 0},
		{"other settings only", map[string]string{"TOOLGATE_LISTEN": ":8080"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			if got := toolkit.Procs(lookup); got != tc.want {
				t.Fatalf("Procs = %d, want %d", got, tc.want)
			}
		})
	}
}
