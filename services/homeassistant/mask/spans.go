package mask

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// span is a part of the text to hide, as byte offsets [from, to).
type span struct{ from, to int }

// render replaces every hidden part by Masked once, keeping its line
// breaks, so the text keeps its line numbers: a value over several lines
// becomes "***" on its first line and empty lines after it.
func render(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		from, to := spans[i].from, spans[i].to
		for i++; i < len(spans) && spans[i].from <= to; i++ {
			to = max(to, spans[i].to)
		}
		from = max(from, last)
		if to <= from {
			continue
		}
		b.WriteString(s[last:from])
		b.WriteString(Masked)
		for k := from; k < to; k++ {
			if s[k] == '\n' {
				if k > from && s[k-1] == '\r' {
					b.WriteByte('\r')
				}
				b.WriteByte('\n')
			}
		}
		last = to
	}
	b.WriteString(s[last:])
	return b.String()
}

// line is one line of the text: its content is s[start:end] (without
// "\r\n" or "\n"); the next line starts at next.
type line struct{ start, end, next int }

func lineTable(s string) []line {
	var lines []line
	for start := 0; start < len(s); {
		nl := strings.IndexByte(s[start:], '\n')
		next := len(s)
		if nl >= 0 {
			next = start + nl + 1
		}
		end := next
		if nl >= 0 {
			end--
		}
		if end > start && s[end-1] == '\r' {
			end--
		}
		lines = append(lines, line{start, end, next})
		start = next
	}
	return lines
}

// lineAt returns the index of the line holding byte offset off.
func lineAt(lines []line, off int) int {
	i, _ := slices.BinarySearchFunc(lines, off, func(l line, off int) int {
		switch {
		case off < l.start:
			return 1
		case off >= l.next:
			return -1
		}
		return 0
	})
	return min(i, len(lines)-1)
}

// tabWidth is how far a tab moves the column, as editors show it; YAML
// forbids tabs in indentation, and counting them wide errs towards
// hiding a line rather than showing it.
const tabWidth = 8

// column is the display column (0-based, in characters) of off in l.
func column(s string, l line, off int) int { return advance(s, l.start, off, 0) }

// advance returns the column at off, counting on from column col at i.
func advance(s string, i, off, col int) int {
	for i < off {
		if s[i] == '\t' {
			col = (col/tabWidth + 1) * tabWidth
			i++
			continue
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
		col++
	}
	return col
}

// colCursor answers column for offsets that mostly move right along a
// line, counting each character once: a line with many keys costs one
// pass, not one per key.
type colCursor struct {
	l        line
	off, col int
	valid    bool
}

func (c *colCursor) at(s string, l line, off int) int {
	if !c.valid || c.l != l || off < c.off {
		c.l, c.off, c.col, c.valid = l, l.start, 0, true
	}
	c.col = advance(s, c.off, off, c.col)
	c.off = off
	return c.col
}

// offsetCursor finds the byte offset of a column in a line as yaml.v3
// counts columns (one per character, a tab one too), moving right along
// the line from the last answer, so a line with many nodes costs one
// pass.
type offsetCursor struct {
	l        line
	col, off int
	valid    bool
}

func (c *offsetCursor) at(s string, l line, col int) int {
	if !c.valid || c.l != l || col < c.col {
		c.l, c.col, c.off, c.valid = l, 0, l.start, true
	}
	for ; c.col < col && c.off < l.end; c.col++ {
		_, n := utf8.DecodeRuneInString(s[c.off:])
		c.off += n
	}
	return c.off
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// body is the offset of the first character of l that is not a blank.
func body(s string, l line) int {
	i := l.start
	for i < l.end && isBlank(s[i]) {
		i++
	}
	return i
}

func blankLine(s string, l line) bool { return body(s, l) == l.end }

// commentBody returns, for a line that is a comment, the offset after
// its '#' marks and blanks, where a commented-out key would start.
func commentBody(s string, l line) (int, bool) {
	i := body(s, l)
	if i >= l.end || s[i] != '#' {
		return 0, false
	}
	for i < l.end && s[i] == '#' {
		i++
	}
	for i < l.end && isBlank(s[i]) {
		i++
	}
	return i, true
}

// commentStart is the offset of the '#' that starts a comment on l, or
// l.end: a '#' at the start of the line or after a blank.
func commentStart(s string, l line) int {
	for i := l.start; i < l.end; i++ {
		if s[i] == '#' && (i == l.start || isBlank(s[i-1])) {
			return i
		}
	}
	return l.end
}
