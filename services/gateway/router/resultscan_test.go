package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// referencePassthrough is passthrough as it was before the one-pass
// scanner (encoding/json reads the object, then each item), kept here
// unchanged as what passthrough must answer.
func referencePassthrough(raw json.RawMessage, max int) (passed, bool) {
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	if json.Unmarshal(raw, &res) != nil {
		return passed{}, false
	}
	size, text := 0, 0
	for _, item := range res.Content {
		var it struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if json.Unmarshal(item, &it) != nil || !knownContent[it.Type] {
			return passed{}, false
		}
		if it.Type == "text" {
			if it.Text == nil {
				return passed{}, false
			}
			size += len(*it.Text)
			text += len(*it.Text)
			continue
		}
		size += len(item)
	}
	structured := res.StructuredContent
	if string(structured) == "null" {
		structured = nil
	}
	size += len(structured)
	if size > max {
		return passed{}, false
	}
	body := make([]byte, 0, len(raw)+32)
	body = append(body, `{"content":[`...)
	for i, item := range res.Content {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, item...)
	}
	body = append(body, ']')
	if structured != nil {
		body = append(body, `,"structuredContent":`...)
		body = append(body, structured...)
	}
	if res.IsError {
		body = append(body, `,"isError":true`...)
	}
	body = append(body, '}')
	return passed{body: body, structured: structured, isError: res.IsError, text: text}, true
}

// textResult is a result of one text item whose text is the JSON string
// content s (escapes as written).
func textResult(s string) string {
	return `{"content":[{"type":"text","text":"` + s + `"}]}`
}

// passthroughCases are results that reach the edges of how encoding/json
// reads them. want is the verdict under a large cap, text the decoded text
// bytes when it passes.
var passthroughCases = []struct {
	name string
	raw  string
	want bool
	text int
}{
	{"a plain text result", textResult("hello"), true, 5},
	{"meta, resultType and unknown fields stay behind", `{"_meta":{"a":[1,{"b":null}]},"resultType":"complete","content":[{"type":"text","text":"x"}],"other":-1.5e+3}`, true, 1},
	{"structured content and an error", `{"content":[{"type":"text","text":"no"}],"structuredContent":{"error":{"code":"not_found"}},"isError":true}`, true, 2},
	{"whitespace everywhere", " \t\r\n{ \"content\" : [ { \"type\" : \"text\" , \"text\" : \"a\" } , {\"type\":\"image\",\"data\":\"AA==\",\"mimeType\":\"image/png\"} ] , \"structuredContent\" : [ 1 , 2 ] } \n", true, 1},
	{"an empty object", `{}`, true, 0},
	{"null content", `{"content":null}`, true, 0},
	{"empty content", `{"content":[]}`, true, 0},
	{"null structured content", `{"content":[],"structuredContent":null}`, true, 0},
	{"structured content of every kind of value", `{"structuredContent":{"s":"\u00e9\"\\\/\b\f\n\r\t","n":[0,-0,1.5,-2e10,3E-2,4e+1],"l":[true,false,null,{},[]]}}`, true, 0},
	{"null isError is false", `{"content":[],"isError":null}`, true, 0},
	{"isError false", `{"content":[],"isError":false}`, true, 0},
	{"keys of another case match", `{"CONTENT":[{"TYPE":"text","Text":"ab"}],"StructuredContent":{},"ISERROR":true}`, true, 2},
	{"an escaped key matches", `{"\u0063ontent":[{"type":"text","text":"ab"}]}`, true, 2},
	{"a key folding to a field by Unicode matches", `{"ſtructuredContent":{"a":1},"content":[]}`, true, 0},
	{"a non-ASCII key that matches nothing", `{"_méta":1,"content":[]}`, true, 0},
	{"a key differing by a character", `{"contents":[1],"content":[]}`, true, 0},
	{"the last of two contents counts", `{"content":[1],"content":[{"type":"text","text":"abc"}]}`, true, 3},
	{"the last of two contents counts, even if bad", `{"content":[{"type":"text","text":"abc"}],"content":[1]}`, false, 0},
	{"the last of two structured contents counts", `{"structuredContent":{"a":1},"structuredContent":null}`, true, 0},
	{"a null isError after true leaves it true", `{"isError":true,"isError":null}`, true, 0},
	{"the last of two types counts", `{"content":[{"type":"nope","type":"text","text":"a"}]}`, true, 1},
	{"a null text after a text leaves none", `{"content":[{"type":"text","text":"a","text":null}]}`, false, 0},
	{"an escaped type", `{"content":[{"type":"t\u0065xt","text":"a"}]}`, true, 1},
	{"a non-ASCII type", `{"content":[{"type":"tëxt","text":"a"}]}`, false, 0},
	{"types are case-sensitive", `{"content":[{"type":"Text","text":"a"}]}`, false, 0},
	{"an unknown type", `{"content":[{"type":"video","uri":"x"}]}`, false, 0},
	{"every known type", `{"content":[{"type":"image","data":"","mimeType":"a"},{"type":"audio","data":"","mimeType":"b"},{"type":"resource","resource":{"uri":"x","text":"t"}},{"type":"resource_link","uri":"y","name":"n"}]}`, true, 0},
	{"a text item without text", `{"content":[{"type":"text"}]}`, false, 0},
	{"a text item with null text", `{"content":[{"type":"text","text":null}]}`, false, 0},
	{"a text item with a number for text", `{"content":[{"type":"text","text":1}]}`, false, 0},
	{"an image item with a number for text", `{"content":[{"type":"image","text":1}]}`, false, 0},
	{"an image item with null text", `{"content":[{"type":"image","text":null}]}`, true, 0},
	{"an image item with text", `{"content":[{"type":"image","text":"abc"}]}`, true, 0},
	{"a type that is a number", `{"content":[{"type":1,"text":"a"}]}`, false, 0},
	{"a type that is an object", `{"content":[{"type":{},"text":"a"}]}`, false, 0},
	{"a null type", `{"content":[{"type":null,"text":"a"}]}`, false, 0},
	{"a null item", `{"content":[null]}`, false, 0},
	{"an item that is a list", `{"content":[[]]}`, false, 0},
	{"an item that is a string", `{"content":["text"]}`, false, 0},
	{"nested objects in an item", `{"content":[{"type":"text","text":"a","annotations":{"audience":["user"],"x":{"y":{"z":[{}]}}},"_meta":{"text":5}}]}`, true, 1},
	{"content that is an object", `{"content":{"type":"text","text":"a"}}`, false, 0},
	{"content that is a string", `{"content":"a"}`, false, 0},
	{"isError that is a string", `{"content":[],"isError":"true"}`, false, 0},
	{"isError that is a number", `{"content":[],"isError":1}`, false, 0},
	{"a null result", `null`, true, 0},
	{"a list", `[]`, false, 0},
	{"a string", `"x"`, false, 0},
	{"nothing", ``, false, 0},
	{"only whitespace", ` `, false, 0},
	{"a trailing comma in an object", `{"content":[],}`, false, 0},
	{"a trailing comma in a list", `{"content":[{"type":"text","text":"a"},]}`, false, 0},
	{"a second value", `{"content":[]} {}`, false, 0},
	{"garbage after", `{"content":[]}x`, false, 0},
	{"unclosed", `{"content":[]`, false, 0},
	{"a leading zero", `{"x":01,"content":[]}`, false, 0},
	{"a bare minus", `{"x":-,"content":[]}`, false, 0},
	{"a fraction without digits", `{"x":1.,"content":[]}`, false, 0},
	{"an exponent without digits", `{"x":1e+,"content":[]}`, false, 0},
	{"a plus sign", `{"x":+1,"content":[]}`, false, 0},
	{"a misspelt literal", `{"x":nul,"content":[]}`, false, 0},
	{"a literal run on", `{"x":truex,"content":[]}`, false, 0},
	{"a single-quoted string", `{"x":'a',"content":[]}`, false, 0},
	{"a vertical tab is not whitespace", "{\"content\":[]\v}", false, 0},
	{"a form feed is not whitespace", "{\"content\":[]\f}", false, 0},
	{"a missing colon", `{"x" 1,"content":[]}`, false, 0},
	{"a key that is not a string", `{x:1,"content":[]}`, false, 0},
	{"a control character in a string", "{\"x\":\"a\x01b\",\"content\":[]}", false, 0},
	{"a control character in text", textResult("a\nb"), false, 0},
	{"DEL in text", textResult("a\x7fb"), true, 3},
	{"an unknown escape", textResult(`a\x`), false, 0},
	{"an escaped single quote", textResult(`a\'`), false, 0},
	{"a short \\u escape", textResult(`\u12`), false, 0},
	{"a \\u escape with a non-hex digit", textResult(`\u12g4`), false, 0},
	{"a backslash at the end", `{"content":[{"type":"text","text":"a\`, false, 0},
	{"an unterminated type", `{"content":[{"type":"`, false, 0},
	{"an unterminated text", `{"content":[{"type":"text","text":"abc`, false, 0},
	{"an unterminated key", `{"content":[{"ty`, false, 0},
	{"an unterminated structured content", `{"content":[],"structuredContent":{"a":"`, false, 0},
	{"simple escapes decode to one byte", textResult(`\"\\\/\b\f\n\r\t`), true, 8},
	{"\\u escapes of 1, 2 and 3 bytes", textResult(`\u0000\u0041\u00e9\u07FF\u0800\u20AC\uFFFF`), true, 1 + 1 + 2 + 2 + 3 + 3 + 3},
	{"a surrogate pair is one 4-byte rune", textResult(`\ud83d\ude00`), true, 4},
	{"a lone high surrogate", textResult(`\ud83dx`), true, 4},
	{"a lone high surrogate at the end", textResult(`\ud83d`), true, 3},
	{"a lone low surrogate", textResult(`\ude00`), true, 3},
	{"a reversed pair", textResult(`\ude00\ud83d`), true, 6},
	{"two low surrogates", textResult(`\ude00\ude00`), true, 6},
	{"two high surrogates then a low one", textResult(`\ud83d\ud83d\ude00`), true, 7},
	{"a high surrogate before another escape", textResult(`\ud83d\u0041`), true, 4},
	{"a high surrogate before an escaped backslash", textResult(`\ud83d\\u0041`), true, 3 + 1 + 5},
	{"a high surrogate before a bad escape", textResult(`\ud83d\uZZZZ`), false, 0},
	{"valid UTF-8 keeps its length", textResult("aé€😀"), true, 1 + 2 + 3 + 4},
	{"a literal U+FFFD keeps its length", textResult("\uFFFD"), true, 3},
	{"invalid UTF-8 becomes U+FFFD a byte", textResult("a\xff\xfeb"), true, 1 + 3 + 3 + 1},
	{"a truncated rune", textResult("\xe2\x82"), true, 6},
	{"a truncated rune before the quote", textResult("x\xf0\x9f\x98"), true, 1 + 9},
	{"UTF-8 of a surrogate is invalid", textResult("\xed\xa0\x80"), true, 9},
	{"an overlong encoding is invalid", textResult("\xc0\xaf"), true, 6},
	{"invalid UTF-8 outside text passes as it is", "{\"x\":\"\xff\",\"content\":[],\"structuredContent\":\"\xfe\"}", true, 0},
	{"several text items add up", `{"content":[{"type":"text","text":"ab"},{"type":"text","text":"\u00e9"}]}`, true, 4},
	{"nesting at the scanner's limit", `{"content":[],"structuredContent":` + strings.Repeat("[", scanMaxDepth-1) + strings.Repeat("]", scanMaxDepth-1) + `}`, true, 0},
	{"nesting past the scanner's limit", `{"content":[],"structuredContent":` + strings.Repeat("[", scanMaxDepth) + strings.Repeat("]", scanMaxDepth) + `}`, true, 0},
	{"nesting at encoding/json's limit", `{"content":[],"structuredContent":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`, true, 0},
	{"nesting past encoding/json's limit", `{"content":[],"structuredContent":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, false, 0},
	{"a huge text", textResult(strings.Repeat(`ab\"c\u00e9`, 20000)), true, 20000 * 6},
}

// leftToDecoding are the cases the scanner leaves to encoding/json.
var leftToDecoding = map[string]bool{
	"a null result": true, "a list": true, "a string": true, "nothing": true, "only whitespace": true,
	"an escaped key matches": true, "a key folding to a field by Unicode matches": true, "a non-ASCII key that matches nothing": true,
	"the last of two contents counts": true, "the last of two contents counts, even if bad": true,
	"the last of two structured contents counts": true, "a null isError after true leaves it true": true,
	"the last of two types counts": true, "a null text after a text leaves none": true, "an escaped type": true,
	"nesting past the scanner's limit": true, "nesting at encoding/json's limit": true, "nesting past encoding/json's limit": true,
}

// TestPassthroughReadsAsEncodingJSON: on every edge case the one-pass
// reader answers what decoding with encoding/json answers, and that answer
// is the expected one; the scanner decides all but the odd shapes itself.
func TestPassthroughReadsAsEncodingJSON(t *testing.T) {
	for _, tc := range passthroughCases {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			comparePassthrough(t, raw)
			got, ok := passthrough(raw, 1<<30)
			if ok != tc.want || (ok && got.text != tc.text) {
				t.Fatalf("ok %v text %d, want ok %v text %d", ok, got.text, tc.want, tc.text)
			}
			s := resultScanner{data: raw}
			if left := s.result() == scanUnsure; left != leftToDecoding[tc.name] {
				t.Fatalf("left to encoding/json: %v, want %v", left, leftToDecoding[tc.name])
			}
		})
	}
}

// TestPassthroughOfServiceResults: what toolkit services send is read by
// the scanner alone, as encoding/json reads it.
func TestPassthroughOfServiceResults(t *testing.T) {
	for _, n := range []int{0, 1, 50, 500} {
		raw := serviceResult(t, n)
		comparePassthrough(t, raw)
		if _, ok := scannedSize(raw); !ok {
			t.Fatalf("%d items: not read by the scanner", n)
		}
	}
}

// TestPassthroughOfManyItems: items past the scanner's array of them keep
// their order.
func TestPassthroughOfManyItems(t *testing.T) {
	items := make([]string, 20)
	for i := range items {
		items[i] = fmt.Sprintf(`{"type":"text","text":"%d"}`, i)
	}
	raw := []byte(`{"content":[` + strings.Join(items, " , ") + `]}`)
	comparePassthrough(t, raw)
	got, ok := passthrough(raw, 1<<30)
	if want := `{"content":[` + strings.Join(items, ",") + `]}`; !ok || string(got.body) != want {
		t.Fatalf("got %v %s, want %s", ok, got.body, want)
	}
}

// TestPassthroughCapIsExact: a result passes at exactly its size as
// capResult measures it and not a byte under.
func TestPassthroughCapIsExact(t *testing.T) {
	raw := []byte(`{"content":[{"type":"text","text":"\u00e9\ud83d\ude00\ud83d` + "\xff" + `"},{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"a":[1,2]}}`)
	size := 2 + 4 + 3 + 3 + len(`{"type":"image","data":"AA==","mimeType":"image/png"}`) + len(`{"a":[1,2]}`)
	if _, ok := passthrough(raw, size); !ok {
		t.Fatalf("refused at its size %d", size)
	}
	if _, ok := passthrough(raw, size-1); ok {
		t.Fatalf("passed at %d, a byte under its size", size-1)
	}
	for _, max := range []int{size, size - 1} {
		if _, ok := referencePassthrough(raw, max); ok != (max == size) {
			t.Fatalf("the reference measures it otherwise at %d", max)
		}
	}
}

// comparePassthrough fails unless passthrough answers raw as the
// reference does: under a large cap, and at the boundary of its size.
func comparePassthrough(t *testing.T, raw []byte) {
	t.Helper()
	max := 1 << 30
	if size, ok := scannedSize(raw); ok {
		// At its size exactly, and a byte under.
		comparePassthroughAt(t, raw, size)
		comparePassthroughAt(t, raw, size-1)
	}
	comparePassthroughAt(t, raw, max)
}

// scannedSize is the size the scanner measured when it decided alone.
func scannedSize(raw []byte) (int, bool) {
	s := resultScanner{data: raw}
	if s.result() != scanOK {
		return 0, false
	}
	return s.size, true
}

func comparePassthroughAt(t *testing.T, raw []byte, max int) {
	t.Helper()
	got, ok := passthrough(bytes.Clone(raw), max)
	want, wantOK := referencePassthrough(raw, max)
	switch {
	case ok != wantOK:
		t.Fatalf("max %d: ok %v, want %v for %q", max, ok, wantOK, trim(raw))
	case !ok:
	case !bytes.Equal(got.body, want.body):
		t.Fatalf("max %d: body\n%q\nwant\n%q", max, trim(got.body), trim(want.body))
	case got.text != want.text:
		t.Fatalf("max %d: text %d, want %d for %q", max, got.text, want.text, trim(raw))
	case got.isError != want.isError:
		t.Fatalf("max %d: isError %v, want %v for %q", max, got.isError, want.isError, trim(raw))
	case !bytes.Equal(got.structured, want.structured) || (got.structured == nil) != (want.structured == nil):
		t.Fatalf("max %d: structured %q, want %q", max, trim(got.structured), trim(want.structured))
	}
}

func trim(b []byte) []byte {
	if len(b) > 300 {
		return append(b[:300:300], "…"...)
	}
	return b
}

// FuzzPassthrough holds passthrough to the reference on any bytes: as a
// whole result, as the text of a text item, and as the choices of a result
// built from the fields, types and texts where the two could part.
func FuzzPassthrough(f *testing.F) {
	for _, tc := range passthroughCases {
		if len(tc.raw) < 4096 {
			f.Add([]byte(tc.raw))
		}
	}
	f.Add([]byte(serviceResult(f, 2)))
	f.Add([]byte(`\ud83d\ude00\u00e9\"\\` + "\xff\xed\xa0\x80é"))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Fuzz(func(t *testing.T, raw []byte) {
		comparePassthrough(t, raw)
		comparePassthrough(t, []byte(textResult(string(raw))))
		g := resultGen{choices: raw}
		comparePassthrough(t, g.result())
	})
}

// resultGen builds a result (mostly valid JSON) from a fuzzer's bytes.
type resultGen struct {
	choices []byte
	out     []byte
}

func (g *resultGen) next() int {
	if len(g.choices) == 0 {
		return 0
	}
	c := g.choices[0]
	g.choices = g.choices[1:]
	return int(c)
}

func (g *resultGen) pick(from []string) {
	g.out = append(g.out, from[g.next()%len(from)]...)
}

var (
	genTopKeys  = []string{`"content"`, `"structuredContent"`, `"isError"`, `"_meta"`, `"Content"`, `"ISERROR"`, `"structuredcontent"`, `"\u0063ontent"`, `"ſtructuredContent"`, `"resultType"`, `"contents"`}
	genItemKeys = []string{`"type"`, `"text"`, `"TEXT"`, `"Type"`, `"annotations"`, `"data"`, `"te\u0078t"`, `"_meta"`}
	genTypes    = []string{`"text"`, `"image"`, `"audio"`, `"resource"`, `"resource_link"`, `"Text"`, `"video"`, `"t\u0065xt"`, `""`, `null`, `1`}
	genPieces   = []string{`a`, `é`, `\u00e9`, `\ud83d`, `\ude00`, `\"`, "\xff", "\xed\xa0\x80", `\n`, `\u0000`, `\u20ac`, `😀`, `\\`, "\x01", `\x`}
	genScalars  = []string{`null`, `true`, `false`, `0`, `-1.5e3`, `"s"`, `{}`, `[]`, `01`, `tru`}
)

func (g *resultGen) result() []byte {
	g.out = append(g.out, '{')
	for i := range g.next() % 5 {
		if i > 0 {
			g.out = append(g.out, ',')
		}
		k := g.next() % len(genTopKeys)
		g.out = append(g.out, genTopKeys[k]...)
		g.out = append(g.out, ':')
		switch k {
		case 0, 4, 7:
			g.content()
		case 2, 5:
			g.pick([]string{`true`, `false`, `null`, `"true"`, `1`})
		default:
			g.value(0)
		}
	}
	g.out = append(g.out, '}')
	return g.out
}

func (g *resultGen) content() {
	if g.next()%8 == 0 {
		g.pick([]string{`null`, `{}`, `"x"`, `[null]`, `[1]`, `[[]]`})
		return
	}
	g.out = append(g.out, '[')
	for i := range g.next() % 4 {
		if i > 0 {
			g.out = append(g.out, ',')
		}
		g.out = append(g.out, '{')
		for j := range g.next() % 4 {
			if j > 0 {
				g.out = append(g.out, ',')
			}
			k := g.next() % len(genItemKeys)
			g.out = append(g.out, genItemKeys[k]...)
			g.out = append(g.out, ':')
			switch k {
			case 0, 3:
				g.pick(genTypes)
			case 1, 2, 6:
				g.text()
			default:
				g.value(0)
			}
		}
		g.out = append(g.out, '}')
	}
	g.out = append(g.out, ']')
}

func (g *resultGen) text() {
	if g.next()%8 == 0 {
		g.pick(genScalars)
		return
	}
	g.out = append(g.out, '"')
	for range g.next() % 6 {
		g.pick(genPieces)
	}
	g.out = append(g.out, '"')
}

func (g *resultGen) value(depth int) {
	switch c := g.next() % 4; {
	case c == 0 && depth < 4:
		g.out = append(g.out, '[')
		for i := range g.next() % 3 {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			g.value(depth + 1)
		}
		g.out = append(g.out, ']')
	case c == 1 && depth < 4:
		g.out = append(g.out, '{')
		for i := range g.next() % 3 {
			if i > 0 {
				g.out = append(g.out, ',')
			}
			g.pick(genItemKeys)
			g.out = append(g.out, ':')
			g.value(depth + 1)
		}
		g.out = append(g.out, '}')
	case c == 2:
		g.text()
	default:
		g.pick(genScalars)
	}
}
