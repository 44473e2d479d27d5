package yamlguard

import (
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/toolgate/toolgate/services/homeassistant/mask"
)

// diffContext is the number of unchanged lines shown around a change.
const diffContext = 3

// maskedDiff is the unified diff of a file before and after a change,
// shown masked. Each side is masked as a whole file, so a value is judged
// with its key and with every alias that refers to it, wherever those
// stand (a hunk alone would not show them); which lines changed is
// decided on the raw text, so a changed credential still shows as a
// changed (masked) line.
func maskedDiff(f File, before, after string) string {
	a, b := difflib.SplitLines(before), difflib.SplitLines(after)
	ma, mb := difflib.SplitLines(mask.Text(before)), difflib.SplitLines(mask.Text(after))
	if len(ma) != len(a) || len(mb) != len(b) {
		// Masking keeps every line; should that ever fail, show no text.
		ma, mb = withheld(len(a)), withheld(len(b))
	}
	var out strings.Builder
	for _, g := range difflib.NewMatcher(a, b).GetGroupedOpCodes(diffContext) {
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", f, f)
		}
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", unifiedRange(first.I1, last.I2), unifiedRange(first.J1, last.J2))
		for _, c := range g {
			if c.Tag == 'e' {
				writeLines(&out, " ", ma[c.I1:c.I2])
				continue
			}
			if c.Tag == 'r' || c.Tag == 'd' {
				writeLines(&out, "-", ma[c.I1:c.I2])
			}
			if c.Tag == 'r' || c.Tag == 'i' {
				writeLines(&out, "+", mb[c.J1:c.J2])
			}
		}
	}
	return out.String()
}

func writeLines(b *strings.Builder, prefix string, lines []string) {
	for _, l := range lines {
		b.WriteString(prefix)
		b.WriteString(l)
	}
}

func withheld(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = mask.Masked + "\n"
	}
	return out
}

// unifiedRange is a hunk's line range as unified diffs write it.
func unifiedRange(start, stop int) string {
	first, n := start+1, stop-start
	switch n {
	case 1:
		return fmt.Sprint(first)
	case 0:
		first--
	}
	return fmt.Sprintf("%d,%d", first, n)
}
