package tools_test

import "testing"

// docs/services/ersatztv.md holds the tool table of each mode as tools/list
// returns it (writes included).
func TestDocsHoldTheToolTables(t *testing.T) {
	startV1(t, nil).service(t).CheckDocTable(t, "../../../docs/services/ersatztv.md")
	startLegacy(t, nil).service(t).CheckDocTable(t, "../../../docs/services/ersatztv.md")
}
