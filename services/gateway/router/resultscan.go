package router

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// A one-pass reader of a service's result object for passthrough.
//
// It validates the whole object as encoding/json does (the JSON grammar;
// strings are not checked for UTF-8, as there) and reads what the decoding
// reader (passthroughDecoding) reads, with encoding/json's rules: keys match
// a field case-insensitively, a null leaves a bool or string as it was and
// makes a pointer nil, a value of the wrong type fails the whole result. A
// text item's length is its text's length once decoded: escapes decoded
// (a valid surrogate pair is one 4-byte rune, any other surrogate U+FFFD),
// and each byte of invalid UTF-8 replaced by U+FFFD.
//
// Whatever it is not sure to read exactly as encoding/json would (a key
// with an escape or a non-ASCII byte, a field given twice, a type with an
// escape, nesting past scanMaxDepth, a top-level value that is not an
// object) it leaves to the decoding reader: scanUnsure.

// verdict is what the scanner makes of a result.
type verdict uint8

const (
	scanOK     verdict = iota
	scanRefuse         // the decoding reader refuses it too
	scanUnsure         // leave it to the decoding reader
)

// scanMaxDepth is where the scanner stops following nesting and leaves the
// result to encoding/json (whose own limit is 10000): well below it, so an
// off-by-one in counting cannot matter.
const scanMaxDepth = 1000

// span is a value's bytes in the result: data[start:end].
type span struct{ start, end int }

// The fields of a result and of a content item the scanner reads, with
// their bit in a "seen" set.
const (
	fieldOther = iota
	fieldContent
	fieldStructured
	fieldIsError
	fieldType
	fieldText
)

// resultScanner reads one result object.
type resultScanner struct {
	data  []byte
	i     int
	depth int

	// The content items, as they are: the first few in an array, so that
	// a scanner on the stack does not allocate for them.
	items      [8]span
	nItems     int
	moreItems  []span
	structured span // structuredContent's value; end 0 when absent or null
	isError    bool
	size       int // as capResult measures it
	text       int // decoded bytes of text items
	// itemBad: an item the decoding reader refuses (not an object, an
	// unknown type, a text item without text, a field of the wrong type).
	// It refuses the result only if no later content replaces this one,
	// which is why it is decided at the end.
	itemBad bool
}

// strByte[c]: c may stand in a JSON string as it is (not a quote, a
// backslash or a control character). textByte[c]: also below 0x80, so it
// is one byte of decoded text.
var strByte, textByte = func() (p, a [256]bool) {
	for c := 0x20; c < 256; c++ {
		if c != '"' && c != '\\' {
			p[c] = true
			a[c] = c < utf8.RuneSelf
		}
	}
	return p, a
}()

// result reads the whole result object.
func (s *resultScanner) result() verdict {
	s.ws()
	if !s.at('{') {
		return scanUnsure
	}
	s.i++
	s.depth = 1
	var seen uint8
	v := s.members(func(f int) verdict {
		if f == fieldOther {
			return s.value()
		}
		if seen&(1<<f) != 0 {
			return scanUnsure // a field twice: the last one counts
		}
		seen |= 1 << f
		switch f {
		case fieldContent:
			return s.content()
		case fieldStructured:
			start := s.i
			if v := s.value(); v != scanOK {
				return v
			}
			if string(s.data[start:s.i]) != "null" {
				s.structured = span{start, s.i}
			}
			return scanOK
		default: // fieldIsError
			return s.boolean(&s.isError)
		}
	}, topField)
	if v != scanOK {
		return v
	}
	s.ws()
	if s.i != len(s.data) {
		return scanRefuse
	}
	if s.itemBad {
		return scanRefuse
	}
	s.size += s.structured.end - s.structured.start
	return scanOK
}

// members reads an object's members after its '{' up to and including its
// '}': field says which field a key is for, value reads the value of a
// key for that field.
func (s *resultScanner) members(value func(field int) verdict, field func(key []byte) int) verdict {
	s.ws()
	if s.at('}') {
		s.i++
		s.depth--
		return scanOK
	}
	for {
		if !s.at('"') {
			return scanRefuse
		}
		start := s.i + 1
		flags, v := s.key()
		if v != scanOK {
			return v
		}
		if flags != 0 {
			// encoding/json would decode the key and fold it, Unicode
			// included ("ſ" is "s"): its business.
			return scanUnsure
		}
		f := field(s.data[start : s.i-1])
		s.ws()
		if !s.at(':') {
			return scanRefuse
		}
		s.i++
		s.ws()
		if v := value(f); v != scanOK {
			return v
		}
		s.ws()
		if s.at(',') {
			s.i++
			s.ws()
			continue
		}
		if s.at('}') {
			s.i++
			s.depth--
			return scanOK
		}
		return scanRefuse
	}
}

// topField and itemField name the field a plain key (no escapes, ASCII)
// is for, matching as encoding/json does: ignoring ASCII case.
func topField(key []byte) int {
	switch {
	case foldEq(key, "content"):
		return fieldContent
	case foldEq(key, "structuredcontent"):
		return fieldStructured
	case foldEq(key, "iserror"):
		return fieldIsError
	}
	return fieldOther
}

func itemField(key []byte) int {
	switch {
	case foldEq(key, "type"):
		return fieldType
	case foldEq(key, "text"):
		return fieldText
	}
	return fieldOther
}

// foldEq reports whether key is lower (all lower case) but for ASCII case.
func foldEq(key []byte, lower string) bool {
	if len(key) != len(lower) {
		return false
	}
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// content reads the content array (or null, no items).
func (s *resultScanner) content() verdict {
	if s.at('n') {
		return s.literal("null")
	}
	if !s.at('[') {
		return scanRefuse // not a list: encoding/json fails
	}
	if v := s.open(); v != scanOK {
		return v
	}
	s.ws()
	if s.at(']') {
		s.i++
		s.depth--
		return scanOK
	}
	for {
		start := s.i
		if v := s.item(); v != scanOK {
			return v
		}
		if s.nItems < len(s.items) {
			s.items[s.nItems] = span{start, s.i}
		} else {
			s.moreItems = append(s.moreItems, span{start, s.i})
		}
		s.nItems++
		s.ws()
		if s.at(',') {
			s.i++
			s.ws()
			continue
		}
		if s.at(']') {
			s.i++
			s.depth--
			return scanOK
		}
		return scanRefuse
	}
}

// item reads one content item and adds it to the size: a text item by its
// decoded text, any other by its bytes.
func (s *resultScanner) item() verdict {
	if !s.at('{') {
		// null has no type; anything else is not an item.
		s.itemBad = true
		return s.value()
	}
	start := s.i
	if v := s.open(); v != scanOK {
		return v
	}
	var (
		seen    uint8
		typ     []byte
		hasText bool
		text    int
	)
	v := s.members(func(f int) verdict {
		if f == fieldOther {
			return s.value()
		}
		if seen&(1<<f) != 0 {
			return scanUnsure
		}
		seen |= 1 << f
		switch {
		case s.at('n'):
			// A null leaves the type empty and the text absent.
			return s.literal("null")
		case !s.at('"'):
			s.itemBad = true // not a string
			return s.value()
		case f == fieldType:
			start := s.i + 1
			flags, v := s.key()
			if v != scanOK {
				return v
			}
			if flags&strEscaped != 0 {
				return scanUnsure // an escaped type may still be a known one
			}
			typ = s.data[start : s.i-1]
			return scanOK
		default: // fieldText
			n, v := s.textStr()
			hasText, text = true, n
			return v
		}
	}, itemField)
	if v != scanOK {
		return v
	}
	switch {
	case !knownContent[string(typ)]:
		s.itemBad = true
	case string(typ) != "text":
		s.size += s.i - start
	case !hasText:
		s.itemBad = true
	default:
		s.size += text
		s.text += text
	}
	return scanOK
}

// boolean reads true, false or null (which leaves b as it is).
func (s *resultScanner) boolean(b *bool) verdict {
	switch {
	case s.at('t'):
		*b = true
		return s.literal("true")
	case s.at('f'):
		*b = false
		return s.literal("false")
	case s.at('n'):
		return s.literal("null")
	}
	return scanRefuse // not a bool: encoding/json fails
}

// value checks any JSON value.
func (s *resultScanner) value() verdict {
	if s.i >= len(s.data) {
		return scanRefuse
	}
	switch c := s.data[s.i]; c {
	case '"':
		return s.str()
	case '{':
		if v := s.open(); v != scanOK {
			return v
		}
		return s.object()
	case '[':
		if v := s.open(); v != scanOK {
			return v
		}
		return s.array()
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		return s.number()
	}
}

// open enters an object or array at its opening byte.
func (s *resultScanner) open() verdict {
	s.i++
	s.depth++
	if s.depth > scanMaxDepth {
		return scanUnsure
	}
	return scanOK
}

// object checks an object's members after its '{' up to its '}'.
func (s *resultScanner) object() verdict {
	s.ws()
	if s.at('}') {
		s.i++
		s.depth--
		return scanOK
	}
	for {
		if !s.at('"') {
			return scanRefuse
		}
		if v := s.str(); v != scanOK {
			return v
		}
		s.ws()
		if !s.at(':') {
			return scanRefuse
		}
		s.i++
		s.ws()
		if v := s.value(); v != scanOK {
			return v
		}
		s.ws()
		if s.at(',') {
			s.i++
			s.ws()
			continue
		}
		if s.at('}') {
			s.i++
			s.depth--
			return scanOK
		}
		return scanRefuse
	}
}

// array checks an array's elements after its '[' up to its ']'.
func (s *resultScanner) array() verdict {
	s.ws()
	if s.at(']') {
		s.i++
		s.depth--
		return scanOK
	}
	for {
		if v := s.value(); v != scanOK {
			return v
		}
		s.ws()
		if s.at(',') {
			s.i++
			s.ws()
			continue
		}
		if s.at(']') {
			s.i++
			s.depth--
			return scanOK
		}
		return scanRefuse
	}
}

func (s *resultScanner) literal(lit string) verdict {
	if len(s.data)-s.i < len(lit) || string(s.data[s.i:s.i+len(lit)]) != lit {
		return scanRefuse
	}
	s.i += len(lit)
	return scanOK
}

// number checks a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// What follows it is for the caller to check.
func (s *resultScanner) number() verdict {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digits(d, i+1)
	default:
		return scanRefuse
	}
	if i < len(d) && d[i] == '.' {
		j := digits(d, i+1)
		if j == i+1 {
			return scanRefuse
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := digits(d, i)
		if j == i {
			return scanRefuse
		}
		i = j
	}
	s.i = i
	return scanOK
}

func digits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

// str checks a string at its opening quote and moves past its closing one.
func (s *resultScanner) str() verdict {
	d, i := s.data, s.i+1
	for {
		i = skipStr(d, i)
		if i >= len(d) {
			return scanRefuse
		}
		switch d[i] {
		case '"':
			s.i = i + 1
			return scanOK
		case '\\':
			n := escapeLen(d, i)
			if n == 0 {
				return scanRefuse
			}
			i += n
		default: // a control character
			return scanRefuse
		}
	}
}

// What key found in a string.
const (
	strEscaped  = 1 << iota // an escape
	strNonASCII             // a byte outside ASCII
)

// key is str for a key (or a type), saying what it found.
func (s *resultScanner) key() (flags int, v verdict) {
	d, i := s.data, s.i+1
	for {
		for i < len(d) && strByte[d[i]] {
			if d[i] >= utf8.RuneSelf {
				flags |= strNonASCII
			}
			i++
		}
		if i >= len(d) {
			return 0, scanRefuse
		}
		switch d[i] {
		case '"':
			s.i = i + 1
			return flags, scanOK
		case '\\':
			flags |= strEscaped
			n := escapeLen(d, i)
			if n == 0 {
				return 0, scanRefuse
			}
			i += n
		default: // a control character
			return 0, scanRefuse
		}
	}
}

// textStr checks a string at its opening quote, moves past its closing one
// and returns its length once decoded as encoding/json decodes it.
func (s *resultScanner) textStr() (int, verdict) {
	d, i := s.data, s.i+1
	// The decoded length is the string's length in the data plus what
	// escapes and invalid UTF-8 change.
	start, diff := i, 0
	for {
		// skipStr for textByte, by hand: this loop is most of a read's
		// time.
		for i+8 <= len(d) {
			w := binary.LittleEndian.Uint64(d[i:])
			if m := (strMask(w) | w) & highs; m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(d) && textByte[d[i]] {
			i++
		}
		if i >= len(d) {
			return 0, scanRefuse
		}
		switch c := d[i]; {
		case c == '"':
			s.i = i + 1
			return i - start + diff, scanOK
		case c == '\\':
			if i+1 < len(d) {
				switch d[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					i += 2
					diff--
					continue
				}
			}
			r := u4(d, i)
			if r < 0 {
				return 0, scanRefuse
			}
			i += 6
			if !utf16.IsSurrogate(r) {
				diff += utf8.RuneLen(r) - 6
				continue
			}
			// A high surrogate and a low one right after it are one rune;
			// any other surrogate is U+FFFD and the next escape its own.
			if r < 0xdc00 {
				if r2 := u4(d, i); 0xdc00 <= r2 && r2 < 0xe000 {
					i += 6
					diff += 4 - 12
					continue
				}
			}
			diff += 3 - 6 // U+FFFD
		case c < 0x20:
			return 0, scanRefuse
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size == 1 {
				diff += 3 - 1 // U+FFFD
			}
			i += size
		}
	}
}

// Word at a time: the bytes of w that are a quote, a backslash or a
// control character have their top bit set in strMask(w)&highs (OR w for
// bytes above ASCII too, as textStr wants); the lowest one set is the
// first such byte (bits set above it may be wrong, from a borrow).
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

func strMask(w uint64) uint64 {
	q := w ^ (ones * '"')
	b := w ^ (ones * '\\')
	return ((q - ones) &^ q) | ((b - ones) &^ b) | ((w - ones*0x20) &^ w)
}

// skipStr is the index of the first byte from i on that is not strByte.
func skipStr(d []byte, i int) int {
	for ; i+8 <= len(d); i += 8 {
		if m := strMask(binary.LittleEndian.Uint64(d[i:])) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(d) && strByte[d[i]] {
		i++
	}
	return i
}

// escapeLen is the length of the valid escape at d[i] ('\\'), 0 if it is
// not one: 2, or 6 for \u and four hex digits.
func escapeLen(d []byte, i int) int {
	if i+1 >= len(d) {
		return 0
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if u4(d, i) < 0 {
			return 0
		}
		return 6
	}
	return 0
}

// u4 is the code unit of a \uXXXX escape at d[i], -1 if there is none.
func u4(d []byte, i int) rune {
	if i+6 > len(d) || d[i] != '\\' || d[i+1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range d[i+2 : i+6] {
		h := hexVal[c]
		if h < 0 {
			return -1
		}
		r = r<<4 | rune(h)
	}
	return r
}

// hexVal[c] is the value of the hex digit c, -1 if it is not one.
var hexVal = func() (t [256]int8) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9':
			t[c] = int8(c - '0')
		case 'a' <= c && c <= 'f':
			t[c] = int8(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			t[c] = int8(c - 'A' + 10)
		default:
			t[c] = -1
		}
	}
	return t
}()

func (s *resultScanner) ws() {
	if s.i < len(s.data) && s.data[s.i] > ' ' {
		return
	}
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *resultScanner) at(c byte) bool { return s.i < len(s.data) && s.data[s.i] == c }

// body builds the result object the client gets, as passthroughDecoding
// does: {"content":[items…],"structuredContent":…,"isError":true}.
func (s *resultScanner) body() passed {
	n := len(`{"content":[]}`)
	for i := range s.nItems {
		it := s.itemAt(i)
		n += it.end - it.start
		if i > 0 {
			n++
		}
	}
	structured := s.data[s.structured.start:s.structured.end]
	if s.structured.end > 0 {
		n += len(`,"structuredContent":`) + len(structured)
	}
	if s.isError {
		n += len(`,"isError":true`)
	}
	body := make([]byte, 0, n)
	body = append(body, `{"content":[`...)
	for i := range s.nItems {
		if i > 0 {
			body = append(body, ',')
		}
		it := s.itemAt(i)
		body = append(body, s.data[it.start:it.end]...)
	}
	body = append(body, ']')
	p := passed{isError: s.isError, text: s.text}
	if s.structured.end > 0 {
		body = append(body, `,"structuredContent":`...)
		at := len(body)
		body = append(body, structured...)
		p.structured = body[at:len(body):len(body)]
	}
	if s.isError {
		body = append(body, `,"isError":true`...)
	}
	p.body = append(body, '}')
	return p
}

// itemAt is the i-th content item.
func (s *resultScanner) itemAt(i int) span {
	if i < len(s.items) {
		return s.items[i]
	}
	return s.moreItems[i-len(s.items)]
}
