package faketuliprox

import (
	"slices"
	"testing"
	"time"
)

// Tuliprox lower-cases each target name it is sent and compares it with
// the configured names ignoring ASCII case only (validate_targets): "MAIN"
// finds "main", but a configured "ÖRF" is found by no spelling, and the
// refusal names the lower-cased name.
func TestTargetNamesMatchAsValidateTargetsMatchesThem(t *testing.T) {
	f := New(Options{Now: func() time.Time { return time.Unix(1_775_000_000, 0) }})
	f.data.Targets = append(f.data.Targets, &Target{ID: 99, Name: "ÖRF"}, &Target{ID: 98, Name: "örtlich"})
	cases := []struct {
		sent    []string
		found   []string
		missing string
	}{
		{[]string{"MAIN"}, []string{"main"}, ""},
		{[]string{"ÖRTLICH"}, []string{"örtlich"}, ""},
		{[]string{"ÖRF"}, nil, "No target found for örf"},
		{[]string{"örf"}, nil, "No target found for örf"},
	}
	for _, c := range cases {
		found, missing := f.validateTargets(c.sent)
		if !slices.Equal(found, c.found) || missing != c.missing {
			t.Errorf("%q: found %q, missing %q; want %q, %q", c.sent, found, missing, c.found, c.missing)
		}
	}
}
