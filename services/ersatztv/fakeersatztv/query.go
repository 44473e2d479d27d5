package fakeersatztv

import (
	"errors"
	"strconv"
	"strings"
)

// The fake understands the part of ErsatzTV's Lucene query syntax the
// service and the demo use: terms joined by AND, OR and parentheses,
// field:value, field:"quoted value", field:(a OR b) and
// field:[from TO to]; the fields id, type, title, library_id and
// release_date (yyyyMMdd); a bare word matches titles; * matches all.

type matcher func(m *MediaItem) bool

var errQuery = errors.New("malformed search query")

func parseQuery(q string) (matcher, error) {
	q = strings.TrimSpace(q)
	if q == "" || q == "*" {
		return func(*MediaItem) bool { return true }, nil
	}
	p := &qparser{toks: tokenize(q)}
	m, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, errQuery
	}
	return m, nil
}

func tokenize(q string) []string {
	var toks []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			toks = append(toks, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			flush()
		case c == '(' || c == ')':
			flush()
			toks = append(toks, string(c))
		case c == '"' || c == '[':
			end := byte('"')
			if c == '[' {
				end = ']'
			}
			j := strings.IndexByte(q[i+1:], end)
			if j < 0 {
				j = len(q) - i - 1
			}
			cur.WriteString(q[i : i+2+j])
			i += j + 1
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return toks
}

type qparser struct {
	toks []string
	pos  int
}

func (p *qparser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *qparser) or() (matcher, error) {
	left, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.peek() == "OR" {
		p.pos++
		right, err := p.and()
		if err != nil {
			return nil, err
		}
		l := left
		left = func(m *MediaItem) bool { return l(m) || right(m) }
	}
	return left, nil
}

func (p *qparser) and() (matcher, error) {
	left, err := p.atom()
	if err != nil {
		return nil, err
	}
	for p.peek() == "AND" {
		p.pos++
		right, err := p.atom()
		if err != nil {
			return nil, err
		}
		l := left
		left = func(m *MediaItem) bool { return l(m) && right(m) }
	}
	return left, nil
}

func (p *qparser) atom() (matcher, error) {
	t := p.peek()
	switch t {
	case "", ")", "AND", "OR":
		return nil, errQuery
	case "(":
		p.pos++
		m, err := p.or()
		if err != nil || p.peek() != ")" {
			return nil, errQuery
		}
		p.pos++
		return m, nil
	}
	p.pos++
	field, value, hasField := strings.Cut(t, ":")
	if !hasField {
		word := strings.Trim(t, `"`)
		return func(m *MediaItem) bool { return contains(m.Title, word) }, nil
	}
	if value != "" {
		return fieldMatcher(field, value)
	}
	// field:(a OR b …)
	if p.peek() != "(" {
		return nil, errQuery
	}
	p.pos++
	var any []matcher
	for {
		v := p.peek()
		if v == "" || v == "(" || v == ")" || v == "AND" || v == "OR" {
			return nil, errQuery
		}
		p.pos++
		m, err := fieldMatcher(field, v)
		if err != nil {
			return nil, err
		}
		any = append(any, m)
		if p.peek() == ")" {
			p.pos++
			break
		}
		if p.peek() != "OR" {
			return nil, errQuery
		}
		p.pos++
	}
	return func(m *MediaItem) bool {
		for _, a := range any {
			if a(m) {
				return true
			}
		}
		return false
	}, nil
}

func fieldMatcher(field, value string) (matcher, error) {
	value = strings.Trim(value, `"`)
	switch field {
	case "id", "library_id":
		n, err := strconv.Atoi(value)
		if err != nil {
			return nil, errQuery
		}
		if field == "id" {
			return func(m *MediaItem) bool { return m.ID == n }, nil
		}
		return func(m *MediaItem) bool { return m.LibraryID == n }, nil
	case "type":
		return func(m *MediaItem) bool { return m.Kind == value }, nil
	case "title":
		return func(m *MediaItem) bool { return contains(m.Title, value) }, nil
	case "release_date":
		from, to, ok := strings.Cut(strings.Trim(value, "[]"), " TO ")
		lo, err1 := strconv.Atoi(strings.TrimSpace(from))
		hi, err2 := strconv.Atoi(strings.TrimSpace(to))
		if !ok || err1 != nil || err2 != nil {
			return nil, errQuery
		}
		return func(m *MediaItem) bool { d := m.Year*10000 + 101; return d >= lo && d <= hi }, nil
	}
	// Fields the fake does not index match nothing, as in Lucene.
	return func(*MediaItem) bool { return false }, nil
}
