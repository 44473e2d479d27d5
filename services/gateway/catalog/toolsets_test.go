package catalog_test

import (
	"testing"

	"github.com/toolgate/toolgate/services/gateway/catalog"
)

// A toolset holds a tool a pattern names unless a "!pattern" leaves it out,
// whatever the order; so "the rest of a service" is expressible.
func TestToolsetPatternsLeaveToolsOut(t *testing.T) {
	rest := catalog.Toolset{Name: "assist", Service: "homeassistant", Tools: []string{"ha_*", "!ha_entity_*", "!ha_yaml_*"}}
	leadingOut := catalog.Toolset{Name: "assist", Service: "homeassistant", Tools: []string{"!ha_yaml_*", "ha_*"}}
	for _, c := range []struct {
		tool string
		want bool
	}{
		{"ha_HassTurnOn", true},
		{"ha_good_night", true},
		{"ha_entity_list", false},
		{"ha_yaml_update", false},
		{"sonarr_series_list", false},
	} {
		if got := rest.Has(c.tool); got != c.want {
			t.Errorf("%s: Has = %v, want %v", c.tool, got, c.want)
		}
		if c.tool == "ha_yaml_update" && leadingOut.Has(c.tool) {
			t.Error("an exclusion written first does not leave the tool out")
		}
	}
	for _, bad := range [][]string{{"!ha_yaml_*"}, {"!!ha_*"}, {"ha_*", "! ha_x"}} {
		if err := catalog.CheckToolsets([]catalog.Toolset{{Name: "a", Service: "homeassistant", Tools: bad}}, []string{"homeassistant"}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := catalog.CheckToolsets([]catalog.Toolset{rest}, []string{"homeassistant"}); err != nil {
		t.Errorf("%v", err)
	}
}
