package approval

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Facts reach the policy, so their shape is bounded and checked on both
// sides: what a service may report and what the gateway accepts.
func TestFactsShape(t *testing.T) {
	long := strings.Repeat("x", MaxFactString+1)
	many := make([]any, MaxFactList+1)
	for i := range many {
		many[i] = "light"
	}
	tooMany := Facts{}
	for i := range MaxFacts + 1 {
		tooMany[string(rune('a'+i))] = true
	}
	cases := []struct {
		name  string
		facts Facts
		ok    bool
	}{
		{"typical", Facts{"domains": []string{"lock"}, "device_classes": []any{"cover.garage"}, "opaque": false, "kind": "intent"}, true},
		{"empty", Facts{}, true},
		{"upper-case name", Facts{"Domains": []string{"lock"}}, false},
		{"dotted name", Facts{"a.b": true}, false},
		{"number", Facts{"count": 3}, false},
		{"object", Facts{"nested": map[string]any{"a": true}}, false},
		{"list of numbers", Facts{"domains": []any{"lock", 3}}, false},
		{"long string", Facts{"kind": long}, false},
		{"long list", Facts{"domains": many}, false},
		{"control character", Facts{"kind": "a\nb"}, false},
		{"too many", tooMany, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.facts.Validate()
			if (err == nil) != c.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrFacts) {
				t.Errorf("error %v is not ErrFacts", err)
			}
		})
	}
}

func TestParseFactsNormalizes(t *testing.T) {
	f, err := ParseFacts([]byte(`{"domains":["lock","light","lock"],"opaque":true}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Facts{"domains": []string{"light", "lock"}, "opaque": true}
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("ParseFacts = %#v, want %#v", f, want)
	}
	for _, raw := range []string{`[]`, `null`, `"x"`, `{"n":1}`, `{` + strings.Repeat(" ", MaxFactsJSONSize) + `}`} {
		if _, err := ParseFacts([]byte(raw)); !errors.Is(err, ErrFacts) {
			t.Errorf("ParseFacts(%.20q) = %v, want ErrFacts", raw, err)
		}
	}
}
