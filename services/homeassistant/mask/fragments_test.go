package mask

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/homeassistant/mask/masktest"
)

// Every credential of every fragment is masked, none of it survives in
// any case, the text around it stays, and the lines stay where they were.
func TestCredentialsInConfigurationAreMasked(t *testing.T) {
	for _, f := range masktest.Fragments {
		t.Run(f.Name, func(t *testing.T) {
			got := Text(f.YAML)
			low := strings.ToLower(got)
			for _, sec := range f.Secrets {
				if strings.Contains(low, strings.ToLower(sec)) {
					t.Errorf("%q survived:\n%s", sec, got)
				}
			}
			for _, k := range f.Keep {
				if !strings.Contains(got, k) {
					t.Errorf("%q was lost:\n%s", k, got)
				}
			}
			if strings.Count(got, "\n") != strings.Count(f.YAML, "\n") {
				t.Errorf("line count changed:\n%s", got)
			}
			if again := Text(got); again != got {
				t.Errorf("not stable:\n%s\n->\n%s", got, again)
			}
		})
	}
}
