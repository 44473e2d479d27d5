package mask

import (
	"strings"
	"testing"
	"time"
)

// Text stays linear on hostile files of a megabyte (the YAML tools read
// up to 2 MiB): every shape below would take minutes with a rule that
// rescans a line or the rest of the file per key. Finishing is the
// assertion about time (with a generous bound for -race on a busy
// machine); the checks are about the result.
func TestHostileTextStaysLinear(t *testing.T) {
	const size = 1 << 20
	rep := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	nested := func(key string, depth int) string {
		var b strings.Builder
		for i := range depth {
			b.WriteString(strings.Repeat(" ", i) + key + ":\n")
		}
		return b.String() + rep(strings.Repeat(" ", depth)+"x\n")
	}
	cases := []struct {
		name, in string
		gone     string // must not survive
	}{
		{"flow keys on one line", "a: {" + rep("password: leak-1, ") + "}", "leak-1"},
		{"names before colons on one line", rep("name: "), ""},
		{"quotes before colons", rep("x': "), ""},
		{"unclosed quotes before keys", rep("' password: leak-2 "), "leak-2"},
		{"an unterminated quote", "password: \"" + rep("leak-3 "), "leak-3"},
		{"an unclosed bracket", "token: [" + rep("leak-4, "), "leak-4"},
		{"deeply nested credential keys", nested("token", 200), ""},
		{"deeply nested flow", "token: " + strings.Repeat("{token: ", 200) + rep("x"), ""},
		{"many explicit keys", rep("? password\n: leak-5\n"), "leak-5"},
		{"many anchors and aliases", rep("a: &k leak-6\npassword: *k\n"), "leak-6"},
		{"many block scalars", rep("password: |\n  leak-7\n"), "leak-7"},
		{"many headers", "headers:\n" + rep("  X-A: leak-8\n"), "leak-8"},
		{"many env defaults", rep("a: !env_var X leak-9\n"), "leak-9"},
		{"comment blocks", rep("# password: |\n#   leak-10\n"), "leak-10"},
		{"command lines", rep("c: curl -u a:leak-11 --password leak-12\n"), "leak-1"},
		{"urls", rep("u: http://a:leak-13@h/ "), "leak-13"},
		{"colons only", rep(":"), ""},
		{"equals only", rep("="), ""},
		{"ampersands only", rep("&"), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			out := Text(c.in)
			if d := time.Since(start); d > 60*time.Second {
				t.Errorf("took %v", d)
			}
			if c.gone != "" && strings.Contains(out, c.gone) {
				t.Errorf("%q survived", c.gone)
			}
			if strings.Count(out, "\n") != strings.Count(c.in, "\n") {
				t.Error("line count changed")
			}
		})
	}
}
