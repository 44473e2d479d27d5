package toolkittest

import (
	"sort"
	"strings"
	"testing"
)

// NoLeaks fails t when any secret appears in any of places (name → text:
// results, logs, audit lines, what went over the wire). The message names
// the place and shows only the start of the secret. Empty secrets are
// skipped; ServiceToken and ApprovalKey are always checked.
func NoLeaks(t testing.TB, secrets []string, places map[string]string) {
	t.Helper()
	all := append([]string{ServiceToken, ApprovalKey}, secrets...)
	names := make([]string, 0, len(places))
	for n := range places {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, s := range all {
			if s != "" && strings.Contains(places[name], s) {
				t.Errorf("%s contain a secret (%.8s…)", name, s)
			}
		}
	}
}
