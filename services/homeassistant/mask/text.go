package mask

import (
	"strings"

	"github.com/toolgate/toolgate/internal/redact"
)

// textScanner finds the values of credential keys in configuration text
// by YAML's layout, line by line, comments included: a value on the key's
// line (plain, quoted over several lines, a flow collection), on the
// lines after it (a block scalar "|" or ">", a value or list indented
// under the key, a plain scalar continued on deeper lines), behind an
// anchor or tag, under an explicit key ("? password" / ": value"), an
// entry of a "headers:" block, and the anchored value an alias under a
// credential key stands for. It works on text that does not parse too.
type textScanner struct {
	s     string
	lines []line
	spans []span
	// aliases are the names of aliases found under credential keys.
	aliases map[string]bool
	// hdr is the "headers:" block being read, if any.
	hdr *headerBlock
}

type headerBlock struct {
	col, itemCol int
	comment      bool
}

func (t *textScanner) hide(from, to int) {
	if to > from {
		t.spans = append(t.spans, span{from, to})
	}
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c >= 0x80
}

// lineState is what the scan knows about the line it is on: where a
// comment starts, and the flow collections open so far.
type lineState struct {
	li, body, comment int
	flow              flowTracker
	col               colCursor
}

// scan runs over every line; keys inside a value already hidden are
// skipped.
func (t *textScanner) scan() {
	resume := 0
	var ls lineState
	for li, l := range t.lines {
		if l.end <= resume && l.start < resume {
			continue
		}
		t.trackHeaders(li)
		ls.li, ls.body, ls.comment = li, body(t.s, l), commentStart(t.s, l)
		ls.flow.reset(t.s, l.start, l.end)
		for p := max(l.start, resume); p < l.end; p++ {
			if c := t.s[p]; c != ':' && c != '=' {
				continue
			}
			if end, ok := t.keyValue(&ls, p); ok {
				resume = max(resume, end)
				if resume >= l.end {
					break
				}
				p = max(p, resume-1)
			}
		}
	}
	if len(t.aliases) > 0 {
		t.anchoredValues()
	}
}

// keyValue looks at the separator at p: when a credential key stands
// before it, its value is hidden and the end of the value returned.
func (t *textScanner) keyValue(ls *lineState, p int) (int, bool) {
	li := ls.li
	s, l := t.s, t.lines[li]
	sep, v := s[p], p+1
	if sep == ':' && strings.HasPrefix(s[v:], "//") {
		return 0, false // a URL's scheme
	}
	at := p
	if sep == '=' {
		switch {
		case v < l.end && s[v] == '=':
			v++ // a template comparing a code: code == '1234'
		case p > l.start && s[p-1] == '!':
			at = p - 1
		case p > l.start && (s[p-1] == '=' || s[p-1] == '<' || s[p-1] == '>'):
			return 0, false
		case v < l.end && s[v] == '>':
			v++ // password => 'x'
		}
	}
	ns, name := keyBefore(s, l, at)
	if name == "" {
		if sep == ':' && p == ls.body {
			return t.explicitKey(li, p)
		}
		return 0, false
	}
	comment := p > ls.comment
	from := l.start
	if comment {
		from = ls.comment + 1
		if ls.flow.from != from {
			ls.flow.reset(s, from, l.end)
		}
	}
	secret, header := IsSecretKey(name), isHeadersKey(name)
	if !secret && !header && t.hdr == nil && !ls.flow.mayBeOpen(ns) {
		return 0, false // the common case, decided without a column count
	}
	flow, open := ls.flow.at(ns)
	col := ls.col.at(s, l, ns)
	if !secret && ((flow && headersBefore(s, from, open)) || t.inHeaderBlock(col, comment)) {
		secret = !redact.HarmlessHeader(name)
	}
	if !secret {
		if header && !flow && sep == ':' && restEmpty(s, v, l.end) {
			t.hdr = &headerBlock{col: col, itemCol: -1, comment: comment}
		}
		return 0, false
	}
	return t.value(v, li, col, flow, comment, sep == '='), true
}

// keyBefore returns the key written before the separator at p on l: a
// quoted key, or a run of name characters.
func keyBefore(s string, l line, p int) (int, string) {
	ne := p
	for ne > l.start && isBlank(s[ne-1]) {
		ne--
	}
	if ne > l.start && (s[ne-1] == '"' || s[ne-1] == '\'') {
		q := s[ne-1]
		open := strings.LastIndexByte(s[l.start:ne-1], q)
		if open < 0 {
			return 0, ""
		}
		return l.start + open, s[l.start+open+1 : ne-1]
	}
	ns := ne
	for ns > l.start && isNameByte(s[ns-1]) {
		ns--
	}
	return ns, s[ns:ne]
}

// restEmpty reports whether only blanks or a comment follow v on the line.
func restEmpty(s string, v, end int) bool {
	for v < end && isBlank(s[v]) {
		v++
	}
	return v == end || s[v] == '#'
}

// flowTracker follows the flow collections ("{", "[") open on a line as
// the scan moves right, skipping quoted scalars, in one pass per line.
type flowTracker struct {
	s        string
	from, i  int
	opens    []int
	quote    byte // the quote of the scalar the tracker is in, or 0
	anyOpen  bool // a bracket was seen on the line at all
	nextOpen int  // the first '{' or '[' at or after i (len(s) if none)
}

// reset starts over at from on a line that ends at end.
func (f *flowTracker) reset(s string, from, end int) {
	f.s, f.from, f.i, f.opens, f.quote = s, from, from, f.opens[:0], 0
	f.nextOpen = from + strings.IndexAny(s[from:end], "{[")
	if f.nextOpen < from {
		f.nextOpen = end
	}
	f.anyOpen = false
}

// mayBeOpen is false when no flow collection can be open at ns: none
// opened between the line's start and ns. It costs nothing per key.
func (f *flowTracker) mayBeOpen(ns int) bool { return f.anyOpen || f.nextOpen < ns }

// at reports whether ns lies inside a flow collection, and where the
// innermost one opens. Positions before the last one asked are answered
// with the state there.
func (f *flowTracker) at(ns int) (bool, int) {
	s := f.s
	for ; f.i < ns; f.i++ {
		c := s[f.i]
		if f.quote != 0 {
			switch {
			case f.quote == '"' && c == '\\':
				f.i++
			case c == f.quote && f.quote == '\'' && f.i+1 < len(s) && s[f.i+1] == '\'':
				f.i++
			case c == f.quote:
				f.quote = 0
			}
			continue
		}
		switch c {
		case '{', '[':
			f.opens = append(f.opens, f.i)
			f.anyOpen = true
		case '}', ']':
			if len(f.opens) > 0 {
				f.opens = f.opens[:len(f.opens)-1]
			}
		case '"', '\'':
			if f.i == f.from || isBlank(s[f.i-1]) || strings.IndexByte("{[,:", s[f.i-1]) >= 0 {
				f.quote = c
			}
		}
	}
	if len(f.opens) == 0 {
		return false, -1
	}
	return true, f.opens[len(f.opens)-1]
}

// headersBefore reports whether the flow mapping opening at open is the
// value of a "headers" key.
func headersBefore(s string, from, open int) bool {
	if open < 0 || s[open] != '{' {
		return false
	}
	e := open
	for e > from && isBlank(s[e-1]) {
		e--
	}
	if e == from || s[e-1] != ':' {
		return false
	}
	_, name := keyBefore(s, line{start: from, end: e}, e-1)
	return isHeadersKey(name)
}

// trackHeaders ends the "headers:" block being read when line li is no
// longer inside it, and notes the column of its entries.
func (t *textScanner) trackHeaders(li int) {
	h := t.hdr
	if h == nil {
		return
	}
	s, l := t.s, t.lines[li]
	if blankLine(s, l) {
		return
	}
	col, ok := t.indent(l, h.comment)
	if !ok || col <= h.col {
		t.hdr = nil
		return
	}
	if h.itemCol < 0 {
		h.itemCol = col
	}
}

// inHeaderBlock reports whether a key at col is an entry of the
// "headers:" block being read.
func (t *textScanner) inHeaderBlock(col int, comment bool) bool {
	return t.hdr != nil && t.hdr.comment == comment && col == t.hdr.itemCol
}

// indent is the column of a line's first character, or for a comment
// line in comment mode, of the first character after its '#' marks.
func (t *textScanner) indent(l line, comment bool) (int, bool) {
	s := t.s
	if comment {
		b, ok := commentBody(s, l)
		if !ok {
			return 0, false
		}
		return column(s, l, b), true
	}
	return column(s, l, body(s, l)), true
}

// explicitKey handles ": value" on line li after a "? key" written on
// the lines before it.
func (t *textScanner) explicitKey(li, p int) (int, bool) {
	s, l := t.s, t.lines[li]
	col := column(s, l, p)
	for q := li - 1; q >= 0; q-- {
		ql := t.lines[q]
		if blankLine(s, ql) {
			continue
		}
		b := body(s, ql)
		qcol := column(s, ql, b)
		if qcol > col {
			continue
		}
		if qcol < col || s[b] != '?' {
			return 0, false
		}
		key := strings.Join(strings.Fields(s[b+1:t.lines[li-1].end]), " ")
		key = strings.Trim(key, "|>-+ \"'")
		if !IsSecretKey(key) {
			return 0, false
		}
		return t.value(p+1, li, col, false, false, false), true
	}
	return 0, false
}

// value hides the value that starts at v on line li, for a key at column
// keyCol, and returns where it ends.
func (t *textScanner) value(v, li, keyCol int, flow, comment, eq bool) int {
	s, l := t.s, t.lines[li]
	pos := v
	for pos < l.end && isBlank(s[pos]) {
		pos++
	}
	// Anchors and tags come before the value itself.
	for pos < l.end && (s[pos] == '&' || s[pos] == '!') && !eq {
		e := pos
		for e < l.end && !isBlank(s[e]) && (!flow || strings.IndexByte(",]}", s[e]) < 0) {
			e++
		}
		switch tag := s[pos:e]; {
		case tag == "!secret", tag == "!env_var", strings.HasPrefix(tag, "!include"), tag == "!input":
			// The tag rules hide a secret's name and an env_var's default;
			// a file or blueprint input name is no credential.
			return t.trailingComment(e, l, flow, comment)
		}
		pos = e
		for pos < l.end && isBlank(s[pos]) {
			pos++
		}
	}
	if pos >= l.end || s[pos] == '#' {
		// The value is on the lines below (a comment after the key may
		// talk about it, so it goes too).
		t.hide(pos, l.end)
		return t.hideBelow(li, keyCol, comment)
	}
	switch c := s[pos]; {
	case c == '*' && !eq:
		e := pos + 1
		for e < l.end && !isBlank(s[e]) && strings.IndexByte(",]}", s[e]) < 0 {
			e++
		}
		if t.aliases == nil {
			t.aliases = map[string]bool{}
		}
		t.aliases[s[pos+1:e]] = true
		return t.trailingComment(e, l, flow, comment)
	case (c == '|' || c == '>') && !eq && !flow:
		return t.hideOn(pos, li, keyCol, comment)
	case c == '"' || c == '\'':
		limit := len(s)
		if comment {
			limit = l.end
		}
		if e := closeQuote(s, pos, limit); e > 0 {
			t.hide(pos, e)
			if e <= l.end {
				return t.trailingComment(e, l, flow, comment)
			}
			return e
		}
		return t.hideOn(pos, li, keyCol, comment)
	case (c == '{' || c == '[') && !eq:
		limit := len(s)
		if comment {
			limit = l.end
		}
		if e := closeBracket(s, pos, limit); e > 0 {
			t.hide(pos, e)
			return e
		}
		return t.hideOn(pos, li, keyCol, comment)
	}
	end := pos
	switch {
	case eq:
		// name=value in a command line, a URL or a template: one argument.
		for end < l.end && !isBlank(s[end]) && strings.IndexByte("&;,)]}\"'`", s[end]) < 0 {
			end++
		}
	default:
		for end < l.end && !(isBlank(s[end]) && end+1 < l.end && s[end+1] == '#') &&
			!(flow && strings.IndexByte(",]}", s[end]) >= 0) {
			end++
		}
	}
	for end > pos && isBlank(s[end-1]) {
		end--
	}
	if !flow && !eq && !comment {
		// A plain scalar goes on over the lines indented deeper than its
		// key. (Not in comments: "#password: x" and "# note" below it are
		// prose more often than a commented-out value.)
		if _, e, ok := t.deeper(li, keyCol, comment, false); ok {
			t.hide(pos, e)
			return e
		}
	}
	t.hide(pos, end)
	if eq {
		return end
	}
	return t.trailingComment(end, l, flow, comment)
}

// trailingComment hides the comment after a credential's value on its
// line ("password: !secret mqtt  # was hunter2"): a note beside a
// credential is where its old value is kept. The '#' stays. It returns
// where the hidden text ends (end when there is no comment).
func (t *textScanner) trailingComment(end int, l line, flow, comment bool) int {
	if flow || comment {
		return end
	}
	s, p := t.s, end
	for p < l.end && !(s[p] == '#' && p > l.start && isBlank(s[p-1])) {
		p++
	}
	if p >= l.end {
		return end
	}
	c := p + 1
	for c < l.end && isBlank(s[c]) {
		c++
	}
	if c >= l.end {
		return end
	}
	t.hide(c, l.end)
	return l.end
}

// closeQuote returns the offset after the quote that closes the one at
// pos, or -1 before limit.
func closeQuote(s string, pos, limit int) int {
	q := s[pos]
	for i := pos + 1; i < limit; i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < limit && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i + 1
		}
	}
	return -1
}

// closeBracket returns the offset after the bracket that closes the flow
// collection opening at pos, or -1 before limit.
func closeBracket(s string, pos, limit int) int {
	depth := 0
	for i := pos; i < limit; i++ {
		switch c := s[i]; c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '"', '\'':
			if e := closeQuote(s, i, limit); e > 0 {
				i = e - 1
			}
		}
	}
	return -1
}

// deeper finds the lines after li indented deeper than keyCol (in
// comment mode: comment lines whose text is), and with seq also a list
// written at the key's own column, as YAML allows under a key. It returns
// where their text starts and where the last one ends; ok is false when
// there are none.
func (t *textScanner) deeper(li, keyCol int, comment, seq bool) (from, end int, ok bool) {
	s := t.s
	first, last := -1, -1
	for j := li + 1; j < len(t.lines); j++ {
		l := t.lines[j]
		if blankLine(s, l) {
			continue
		}
		col, ok := t.indent(l, comment)
		if !ok {
			break
		}
		if col <= keyCol {
			b := body(s, l)
			if comment {
				b, _ = commentBody(s, l)
			}
			if !seq || col != keyCol || s[b] != '-' || b+1 < l.end && !isBlank(s[b+1]) {
				break
			}
		}
		if first < 0 {
			first = j
		}
		last = j
	}
	if first < 0 {
		return 0, t.lines[li].end, false
	}
	from = body(s, t.lines[first])
	if comment {
		from, _ = commentBody(s, t.lines[first])
	}
	return from, t.lines[last].end, true
}

// hideOn hides from pos on line li to the end of the line, and on over
// the deeper lines that follow, as one value; it returns where it ends.
func (t *textScanner) hideOn(pos, li, keyCol int, comment bool) int {
	end := t.lines[li].end
	if _, e, ok := t.deeper(li, keyCol, comment, false); ok {
		end = e
	}
	t.hide(pos, end)
	return end
}

// hideBelow hides the value written on the lines below a key.
func (t *textScanner) hideBelow(li, keyCol int, comment bool) int {
	from, end, ok := t.deeper(li, keyCol, comment, true)
	if ok {
		t.hide(from, end)
	}
	return end
}

// anchoredValues hides the values that carry an anchor an alias under a
// credential key refers to ("x: &pw hunter2" … "password: *pw").
func (t *textScanner) anchoredValues() {
	s := t.s
	var tracker flowTracker
	var cols colCursor
	trackLine := -1
	for i := strings.IndexByte(s, '&'); i >= 0; {
		e := i + 1
		for e < len(s) && !isBlank(s[e]) && strings.IndexByte(",]}\r\n", s[e]) < 0 {
			e++
		}
		if t.aliases[s[i+1:e]] && (i == 0 || isBlank(s[i-1]) || strings.IndexByte("\n-[{,:", s[i-1]) >= 0) {
			li := lineAt(t.lines, i)
			l := t.lines[li]
			if li != trackLine {
				trackLine = li
				tracker.reset(s, l.start, l.end)
			}
			keyCol := cols.at(s, l, body(s, l))
			k := i
			for k > l.start && isBlank(s[k-1]) {
				k--
			}
			if k > l.start && s[k-1] == ':' {
				if ns, name := keyBefore(s, l, k-1); name != "" {
					keyCol = cols.at(s, l, ns)
				}
			}
			flow, _ := tracker.at(i)
			t.value(e, li, keyCol, flow, false, false)
		}
		n := strings.IndexByte(s[e:], '&')
		if n < 0 {
			break
		}
		i = e + n
	}
}
