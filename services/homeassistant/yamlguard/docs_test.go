package yamlguard

import "testing"

// The YAML tools' table in docs/services/homeassistant.md is what
// tools/list returns with HA_YAML_WRITE and writes on.
func TestDocTable(t *testing.T) {
	newHarness(t, nil).svc.CheckDocTable(t, "../../../docs/services/homeassistant.md")
}
