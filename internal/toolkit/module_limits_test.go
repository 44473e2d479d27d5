package toolkit

import (
	"strings"
	"testing"
)

// A module's Limits are defaults; <SERVICE>_MAX_CONCURRENT and
// <SERVICE>_MAX_RESULT_BYTES override them, and a bad value is named
// without being echoed.
func TestModuleLimitsFromEnv(t *testing.T) {
	defaults := Limits{MaxConcurrent: 4, MaxResultBytes: 256 << 10}
	cases := []struct {
		name     string
		env      map[string]string
		defaults Limits
		want     Limits
		wantErr  string
	}{
		{name: "no defaults, no settings", want: Limits{}},
		{name: "module defaults", defaults: defaults, want: defaults},
		{name: "settings override", defaults: defaults, env: map[string]string{"UNRAID_SSH_MAX_CONCURRENT": "2", "UNRAID_SSH_MAX_RESULT_BYTES": "8192"},
			want: Limits{MaxConcurrent: 2, MaxResultBytes: 8192}},
		{name: "concurrency out of range", env: map[string]string{"UNRAID_SSH_MAX_CONCURRENT": "65"}, wantErr: "UNRAID_SSH_MAX_CONCURRENT"},
		{name: "result bytes not a number", env: map[string]string{"UNRAID_SSH_MAX_RESULT_BYTES": "lots-7e1c"}, wantErr: "UNRAID_SSH_MAX_RESULT_BYTES"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			got, err := newLimits(limitParams{Name: "unraid-ssh", Defaults: limitDefaults(c.defaults)})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "7e1c") {
					t.Fatalf("err = %v, want %s named without its value", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("limits = %+v, want %+v", got, c.want)
			}
		})
	}
}
