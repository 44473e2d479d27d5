package router

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// requestCases: bodies the one-pass reader must read exactly as
// checkEnvelope and plainCall do, and whether it reads them itself (fast)
// or leaves them to those two.
var requestCases = []struct {
	name string
	body string
	fast bool
}{
	// Read in one pass.
	{"plain call", echoCall, true},
	{"bench call", benchCall, true},
	{"string id", `{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"demo_echo","arguments":{}}}`, true},
	{"string id with escapes", `{"jsonrpc":"2.0","id":"a\"b\\c\u00e9\ud83d\ude00","method":"tools/call","params":{"name":"x"}}`, true},
	{"string id non-ASCII", `{"jsonrpc":"2.0","id":"é😀","method":"tools/call","params":{"name":"x"}}`, true},
	{"negative id", `{"jsonrpc":"2.0","id":-3,"method":"tools/call","params":{"name":"x"}}`, true},
	{"largest exact id", `{"jsonrpc":"2.0","id":9007199254740991,"method":"tools/call","params":{"name":"x"}}`, true},
	{"smallest exact id", `{"jsonrpc":"2.0","id":-9007199254740991,"method":"tools/call","params":{"name":"x"}}`, true},
	{"minus zero id", `{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"x"}}`, true},
	{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"demo_echo"}}`, true},
	{"notification call", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"demo_echo"}}`, true},
	{"no arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo"}}`, true},
	{"null arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo","arguments":null}}`, true},
	{"array arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo","arguments":[1,2]}}`, true},
	{"string arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo","arguments":"x"}}`, true},
	{"number arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo_echo","arguments":12}}`, true},
	{"arguments first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"a":1},"name":"demo_echo"}}`, true},
	{"arguments with escapes", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"t\u0065xt":"a\nb\"c\\\/\b\f\r\t\u0000\ud800"}}}`, true},
	{"arguments non-ASCII", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"text":"héllo wörld 😀 \u2028"}}}`, true},
	{"arguments nested", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}}`, true},
	{"arguments huge numbers", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"a":1e999,"b":123456789012345678901234567890,"c":-0.0e-0}}}`, true},
	{"arguments with duplicate keys", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"a":1,"a":2,"A":3}}}`, true},
	{"arguments all literals", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{"a":true,"b":false,"c":null,"d":[],"e":{}}}}`, true},
	{"name null", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":null,"arguments":{}}}`, true},
	{"name a number", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, true},
	{"name an object", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"a":1}}}`, true},
	{"name empty", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":""}}`, true},
	{"no name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}`, true},
	{"empty params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, true},
	{"_meta", strings.Replace(echoCall, `"arguments"`, `"_meta":{"progressToken":1},"arguments"`, 1), true},
	{"_meta after arguments", benchProgressCall, true},
	{"_meta first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"x"}}`, true},
	{"_meta alone", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}`, true},
	{"progress token 0", withMeta(`"_meta":{"progressToken":0}`), true},
	{"progress token negative", withMeta(`"_meta":{"progressToken":-7}`), true},
	{"progress token minus zero", withMeta(`"_meta":{"progressToken":-0}`), true},
	{"progress token of 20 bytes", withMeta(`"_meta":{"progressToken":-9223372036854775808}`), true},
	{"progress token of 21 bytes", withMeta(`"_meta":{"progressToken":123456789012345678901}`), true},
	{"progress token of 400 digits", withMeta(`"_meta":{"progressToken":1` + strings.Repeat("0", 400) + `}`), true},
	{"progress token a fraction", withMeta(`"_meta":{"progressToken":1.5}`), true},
	{"progress token with an exponent", withMeta(`"_meta":{"progressToken":1e3}`), true},
	{"progress token 1.0", withMeta(`"_meta":{"progressToken":1.0}`), true},
	{"progress token an empty string", withMeta(`"_meta":{"progressToken":""}`), true},
	{"progress token with escapes", withMeta(`"_meta":{"progressToken":"a\"\u00e9\ud83d\ude00\ud800"}`), true},
	{"progress token non-ASCII", withMeta(`"_meta":{"progressToken":"é😀"}`), true},
	{"progress token null", withMeta(`"_meta":{"progressToken":null}`), true},
	{"progress token true", withMeta(`"_meta":{"progressToken":true}`), true},
	{"progress token false", withMeta(`"_meta":{"progressToken":false}`), true},
	{"progress token an object", withMeta(`"_meta":{"progressToken":{"a":1}}`), true},
	{"progress token an array", withMeta(`"_meta":{"progressToken":[1]}`), true},
	{"_meta with spaces", withMeta(" \"_meta\" :\n{ \"progressToken\"\t: 5 } "), true},
	{"_meta empty", withMeta(`"_meta":{}`), true},
	{"_meta null", withMeta(`"_meta":null`), true},
	{"_meta a string", withMeta(`"_meta":"p"`), true},
	{"_meta a number", withMeta(`"_meta":1`), true},
	{"_meta an array", withMeta(`"_meta":[{"progressToken":1}]`), true},
	{"_meta of another key", withMeta(`"_meta":{"traceparent":"t"}`), true},
	{"_meta with another key after", withMeta(`"_meta":{"progressToken":1,"traceparent":"t"}`), true},
	{"_meta with another key before", withMeta(`"_meta":{"traceparent":"t","progressToken":1}`), true},
	{"_meta with protocolVersion", withMeta(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}`), true},
	{"_meta with another object", withMeta(`"_meta":{"progressToken":1,"x":{"y":[1,{"z":null}]}}`), true},
	{"progressToken spelt otherwise", withMeta(`"_meta":{"ProgressToken":1}`), true},
	{"progressToken lower case", withMeta(`"_meta":{"progresstoken":1}`), true},
	{"_meta spelt otherwise", withMeta(`"_Meta":{"progressToken":1}`), true},
	{"_meta and a task", withMeta(`"_meta":{"progressToken":1},"task":{}`), true},
	{"_meta and a bad name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":5}}`, true},
	{"_meta on tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":1}}}`, true},
	{"_meta on a notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","_meta":{"progressToken":1}}}`, true},
	{"a task", strings.Replace(echoCall, `"arguments"`, `"task":{},"arguments"`, 1), true},
	{"Name in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"demo_echo"}}`, true},
	{"null params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}`, true},
	{"array params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["demo_echo"]}`, true},
	{"string params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"demo_echo"}`, true},
	{"no params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, true},
	{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, true},
	{"tools/list with params", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"x","cursor":"c"}}`, true},
	{"ping", `{"jsonrpc":"2.0","id":"p","method":"ping"}`, true},
	{"initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, true},
	{"initialized", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{"other method", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"x"}}`, true},
	{"method tools/call spelt otherwise", `{"jsonrpc":"2.0","id":1,"method":"Tools/Call","params":{"name":"x"}}`, true},
	{"members in another order", `{"params":{"name":"demo_echo","arguments":{}},"id":9,"method":"tools/call","jsonrpc":"2.0"}`, true},
	{"spaces everywhere", " \t\r\n{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\"\r: 7 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"demo_echo\" , \"arguments\" : { \"a\" : [ 1 , 2 ] } } } \n\t\r ", true},

	// Valid, but left to encoding/json.
	{"Method spelt otherwise", `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"x"}}`, false},
	{"JSONRPC spelt otherwise", `{"JSONRPC":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`, false},
	{"ID spelt otherwise", `{"jsonrpc":"2.0","ID":1,"method":"tools/call","params":{"name":"x"}}`, false},
	{"Params spelt otherwise", `{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{"name":"x"}}`, false},
	{"escaped key", `{"jsonrpc":"2.0","id":1,"meth\u006fd":"tools/call","params":{"name":"x"}}`, false},
	{"key with long s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","paramſ":{"name":"x"}}`, false},
	{"key with Kelvin sign", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"\u212a":1}`, false},
	{"method twice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"x"}}`, false},
	{"method twice, other spelling", `{"jsonrpc":"2.0","id":1,"method":"tools/list","METHOD":"tools/call","params":{"name":"x"}}`, false},
	{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"x"}}`, false},
	{"params twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"params":{"name":"y"}}`, false},
	{"jsonrpc twice", `{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"ping"}`, false},
	{"name twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","name":"y"}}`, false},
	{"_meta twice", withMeta(`"_meta":{"progressToken":1},"_meta":{"progressToken":2}`), false},
	{"_meta twice, the first unreadable by mcp-go", withMeta(`"_meta":{"progressToken":1` + strings.Repeat("0", 400) + `},"_meta":{"progressToken":1}`), false},
	{"_meta twice, one escaped", withMeta(`"_meta":{"progressToken":1},"_\u006deta":{"progressToken":1}`), false},
	{"_meta escaped", withMeta(`"_\u006deta":{"progressToken":1}`), false},
	{"progressToken twice", withMeta(`"_meta":{"progressToken":1,"progressToken":2}`), true}, // mcp-go's: another member
	{"progressToken escaped", withMeta(`"_meta":{"progress\u0054oken":1}`), false},
	{"progressToken with a long s", withMeta(`"_meta":{"progreſſToken":1}`), false},
	{"deep _meta", withMeta(`"_meta":{"progressToken":1,"x":` + strings.Repeat(`[`, 1100) + strings.Repeat(`]`, 1100) + `}`), false},
	{"arguments twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1},"arguments":{"a":2}}}`, false},
	{"escaped name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"demo\u005fecho"}}`, false},
	{"escaped key in params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"demo_echo"}}`, false},
	{"escaped key in params twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"demo_echo"}}`, false},
	{"non-ASCII name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"démo"}}`, false},
	{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"},"extra":1}`, false},
	{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, false},
	{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}`, false},
	{"batch", "[" + echoCall + "]", false},
	{"batch of two", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`, false},
	{"escaped version", `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, false},
	{"version with space", `{"jsonrpc": "2.0" ,"id":1,"method":"ping"}`, true},
	{"escaped method", `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}`, false},
	{"non-ASCII method", `{"jsonrpc":"2.0","id":1,"method":"tóols/call"}`, false},
	{"id of 33 digits", `{"jsonrpc":"2.0","id":123456789012345678901234567890123,"method":"tools/call","params":{"name":"x"}}`, false},
	{"leading vertical tab", "\v" + echoCall, false},
	{"trailing form feed", echoCall + "\f", false},
	{"trailing no-break space", echoCall + "\u00a0", false},
	{"leading next line", "\u0085" + echoCall, false},
	{"invalid UTF-8 in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"t":"` + "\xff\xfe" + `"}}}`, false},
	{"invalid UTF-8 in name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x` + "\xff" + `"}}`, false},
	{"surrogate in UTF-8", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"` + "\xed\xa0\x80" + `"}}`, false},
	{"deep arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":` + strings.Repeat(`[`, 1100) + strings.Repeat(`]`, 1100) + `}}`, false},
	{"null method with result", `{"jsonrpc":"2.0","id":1,"method":null,"result":1}`, false},

	// Refused, by checkEnvelope.
	{"empty", ``, false},
	{"only space", " \n\t", false},
	{"open brace", `{`, false},
	{"empty object", `{}`, false},
	{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, false},
	{"extra brace", `{"jsonrpc":"2.0","id":1,"method":"ping"}}`, false},
	{"two objects", `{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
	{"trailing NUL", echoCall + "\x00", false},
	{"byte order mark", "\ufeff" + echoCall, false},
	{"a string", `"x"`, false},
	{"null", `null`, false},
	{"a number", `5`, false},
	{"true", `true`, false},
	{"empty batch", `[]`, false},
	{"batch of a number", `[5]`, false},
	{"batch with a bad member", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":1,"method":"ping"}]`, false},
	{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, false},
	{"version with a space inside", `{"jsonrpc":"2.0 ","id":1,"method":"ping"}`, false},
	{"version a number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, false},
	{"version null", `{"jsonrpc":null,"id":1,"method":"ping"}`, false},
	{"no version", `{"id":1,"method":"ping"}`, false},
	{"no method", `{"jsonrpc":"2.0","id":1}`, false},
	{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, false},
	{"method a number", `{"jsonrpc":"2.0","id":1,"method":5}`, false},
	{"method an object", `{"jsonrpc":"2.0","id":1,"method":{}}`, false},
	{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, false},
	{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, false},
	{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, false},
	{"trailing comma", `{"jsonrpc":"2.0","method":"ping",}`, false},
	{"missing colon", `{"jsonrpc" "2.0","method":"ping"}`, false},
	{"missing comma", `{"jsonrpc":"2.0" "method":"ping"}`, false},
	{"single quotes", `{'jsonrpc':'2.0','method':'ping'}`, false},
	{"unterminated string", `{"jsonrpc":"2.0","method":"ping`, false},
	{"control character in a string", "{\"jsonrpc\":\"2.0\",\"method\":\"pi\nng\"}", false},
	{"control character in arguments", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":\"a\tb\"}}", false},
	{"bad escape", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"\x"}}`, false},
	{"short unicode escape", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"\u12"}}`, false},
	{"leading zero id", `{"jsonrpc":"2.0","id":01,"method":"ping"}`, false},
	{"lone minus id", `{"jsonrpc":"2.0","id":-,"method":"ping"}`, false},
	{"bare point id", `{"jsonrpc":"2.0","id":1.,"method":"ping"}`, false},
	// Numeric ids some decoders alter: refused by checkEnvelope.
	{"fraction id", `{"jsonrpc":"2.0","id":1.5e3,"method":"tools/call","params":{"name":"x"}}`, false},
	{"id of 32 digits", `{"jsonrpc":"2.0","id":12345678901234567890123456789012,"method":"tools/call","params":{"name":"x"}}`, false},
	{"id 2^53", `{"jsonrpc":"2.0","id":9007199254740992,"method":"tools/call","params":{"name":"x"}}`, false},
	{"id beyond float64", `{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"x"}}`, false},
	{"bare exponent id", `{"jsonrpc":"2.0","id":1e,"method":"ping"}`, false},
	{"plus id", `{"jsonrpc":"2.0","id":+1,"method":"ping"}`, false},
	{"NaN in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":NaN}}`, false},
	{"comment", `{"jsonrpc":"2.0",/* */"method":"ping"}`, false},
	{"missing value in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":}}}`, false},
	{"trailing comma in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,}}}`, false},
	{"unclosed arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}`, false},
	{"bad literal", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":tru}}`, false},
	{"too deep", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":` + strings.Repeat(`[`, 10001) + strings.Repeat(`]`, 10001) + `}}`, false},
	{"_meta unclosed", withMeta(`"_meta":{"progressToken":1`), false},
	{"_meta with a trailing comma", withMeta(`"_meta":{"progressToken":1,}`), false},
	{"_meta with a bad token", withMeta(`"_meta":{"progressToken":01}`), false},
	{"_meta with a lone minus", withMeta(`"_meta":{"progressToken":-}`), false},
	{"_meta with a bare key", withMeta(`"_meta":{progressToken:1}`), false},
	{"_meta with a bad literal", withMeta(`"_meta":{"progressToken":nul}`), false},
	{"_meta with a control character", withMeta("\"_meta\":{\"progressToken\":\"a\tb\"}"), false},
	{"params with a number key", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{1:"x"}}`, false},
}

const benchCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"benchmark"}}}`

// benchProgressCall is benchCall as the TypeScript SDK sends it when the
// caller asks for progress: the request id as the token, after arguments.
const benchProgressCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"benchmark"},"_meta":{"progressToken":7}}}`

// TestRequestScanReadsAsEncodingJSON: the one-pass reader and the
// reference agree on every case, and the reader reads the cases it should
// itself.
func TestRequestScanReadsAsEncodingJSON(t *testing.T) {
	if len(requestCases) < 80 {
		t.Fatalf("only %d cases", len(requestCases))
	}
	for _, tc := range requestCases {
		t.Run(tc.name, func(t *testing.T) {
			if fast := compareRequest(t, []byte(tc.body)); fast != tc.fast {
				t.Errorf("read in one pass: %t, want %t", fast, tc.fast)
			}
		})
	}
}

// TestPlainCallsAreReadInOnePass: the bodies a client sends for a call
// take the scanner's way, so that it cannot silently fall out of use.
func TestPlainCallsAreReadInOnePass(t *testing.T) {
	for _, body := range []string{echoCall, benchCall, benchProgressCall, withMeta(`"_meta":{"progressToken":"8f2c"}`),
		`{"jsonrpc":"2.0","id":"0f3c","method":"tools/call","params":{"name":"unraid_list_containers","arguments":{}}}`,
		"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 12,\n  \"method\": \"tools/call\",\n  \"params\": {\n    \"name\": \"gitea_search\",\n    \"arguments\": {\"q\": \"héllo \\\"x\\\"\"}\n  }\n}\n",
	} {
		m, err := scanEnvelope([]byte(body))
		if err != nil || !m.scanned {
			t.Fatalf("%s: not read in one pass (%v)", body, err)
		}
		if p, ok := directCall(m); !ok || p.name == "" {
			t.Fatalf("%s: not a plain call", body)
		}
	}
}

// compareRequest holds scanEnvelope and directCall to checkEnvelope and
// plainCall on body, and reports whether the scanner read it itself.
func compareRequest(t testing.TB, body []byte) bool {
	t.Helper()
	want, wantErr := checkEnvelope(body)
	got, gotErr := scanEnvelope(body)
	if wantErr != nil || gotErr != nil {
		var we, ge *envelopeError
		if !errors.As(wantErr, &we) || !errors.As(gotErr, &ge) || *we != *ge || (got == nil) != (want == nil) {
			t.Fatalf("%q: error %v (message %v), want %v", trim(body), gotErr, got, wantErr)
		}
		return false
	}
	if (got == nil) != (want == nil) {
		t.Fatalf("%q: message %v, want %v", trim(body), got, want)
	}
	if got == nil {
		return false
	}
	same := func(what string, a, b []byte) {
		t.Helper()
		if !bytes.Equal(a, b) || (a == nil) != (b == nil) {
			t.Fatalf("%q: %s %q, want %q", trim(body), what, a, b)
		}
		if got.scanned && cap(a) != len(a) {
			// An append to it must not write into the body.
			t.Fatalf("%q: %s has room past its end", trim(body), what)
		}
	}
	switch {
	case got.JSONRPC != want.JSONRPC:
		t.Fatalf("%q: jsonrpc %q, want %q", trim(body), got.JSONRPC, want.JSONRPC)
	case (got.Method == nil) != (want.Method == nil) || got.Method != nil && *got.Method != *want.Method:
		t.Fatalf("%q: method %v, want %v", trim(body), got.Method, want.Method)
	}
	same("id", got.ID, want.ID)
	same("params", got.Params, want.Params)
	same("result", got.Result, want.Result)
	same("error", got.Error, want.Error)
	gp, gok := directCall(got)
	wp, wok := plainCall(want)
	if gok != wok || gp.name != wp.name {
		t.Fatalf("%q: call %t %q, want %t %q", trim(body), gok, gp.name, wok, wp.name)
	}
	same("call id", gp.id, wp.id)
	same("arguments", gp.args, wp.args)
	return got.scanned
}

// FuzzRequestScan holds the one-pass reader to the reference on any bytes,
// and on requests built from them where the two could part.
func FuzzRequestScan(f *testing.F) {
	for _, tc := range requestCases {
		if len(tc.body) < 4096 {
			f.Add([]byte(tc.body))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		compareRequest(t, raw)
		g := requestGen{choices: raw}
		compareRequest(t, g.request())
	})
}

// requestGen builds a request, mostly valid JSON, from a fuzzer's bytes:
// members and spellings the scanner reads or must leave alone.
type requestGen struct {
	choices []byte
	out     []byte
}

func (g *requestGen) next() int {
	if len(g.choices) == 0 {
		return 0
	}
	c := int(g.choices[0])
	g.choices = g.choices[1:]
	return c
}

func (g *requestGen) pick(options ...string) {
	g.ws()
	g.out = append(g.out, options[g.next()%len(options)]...)
	g.ws()
}

func (g *requestGen) ws() {
	if c := g.next(); c >= 240 {
		g.out = append(g.out, " \t\r\n\v\f\x00 "[c%8])
	}
}

func (g *requestGen) request() []byte {
	g.pick("{", "[{", " {", "\v{")
	n := 1 + g.next()%6
	for i := range n {
		if i > 0 {
			g.pick(",", ",", ",", "", ",,")
		}
		switch g.next() % 6 {
		case 0:
			g.pick(`"jsonrpc"`, `"JSONRPC"`, `"jsonRPC"`, `"jsonrpc\u0000"`, `"json\u0072pc"`)
			g.pick(":")
			g.pick(`"2.0"`, `"2.0"`, `"1.0"`, `2.0`, `null`, `"2\u002e0"`, `""`)
		case 1:
			g.pick(`"id"`, `"Id"`, `"ID"`, `"\u0069d"`, `"ıd"`)
			g.pick(":")
			g.pick(`1`, `"a"`, `null`, `-0.5e+3`, `{}`, `[]`, `true`, `01`, `"\"\\"`, `12345678901234567890123456789012345`, `"é"`)
		case 2:
			g.pick(`"method"`, `"Method"`, `"METHOD"`, `"meth\u006fd"`, `"method "`)
			g.pick(":")
			g.pick(`"tools/call"`, `"tools/call"`, `"tools/list"`, `"ping"`, `""`, `null`, `5`, `"tools\/call"`, `"tools/call\u0000"`, `"tóols"`)
		case 3:
			g.pick(`"params"`, `"Params"`, `"paramſ"`, `"par\u0061ms"`)
			g.pick(":")
			g.params()
		case 4:
			g.pick(`"result"`, `"error"`, `"extra"`, `"Result"`)
			g.pick(":")
			g.pick(`{}`, `null`, `1`, `[`, `"x"`)
		default:
			g.pick(`"jsonrpc":"2.0","id":7,"method":"tools/call"`, `"params":{"name":"demo_echo","arguments":{"text":"hi"}}`)
		}
	}
	g.pick("}", "}", "}]", "} ", "}\u00a0", "}x", "")
	g.out = append(g.out, g.choices...)
	return g.out
}

func (g *requestGen) params() {
	if c := g.next(); c%8 == 0 {
		g.pick(`null`, `[]`, `"x"`, `1`, `{`)
		return
	}
	g.pick("{")
	n := g.next() % 4
	for i := range n {
		if i > 0 {
			g.pick(",", ",", ",", "")
		}
		switch g.next() % 4 {
		case 0:
			g.pick(`"name"`, `"Name"`, `"n\u0061me"`, `"nam"`, `"_meta"`)
			g.pick(":")
			g.pick(`"demo_echo"`, `"demo_echo"`, `""`, `null`, `5`, `"d\u00e9mo"`, `"démo"`, "\"d\xffmo\"", `{"a":1}`)
		case 1:
			g.pick(`"arguments"`, `"Arguments"`, `"arguments"`, `"task"`)
			g.pick(":")
			g.pick(`{"text":"hi"}`, `{}`, `null`, `[1,2,]`, `{"a":1,"a":2}`, `"\u00"`, `1e999`, "[[[[[[[[[[]]]]]]]]]]", `{"a" 1}`)
		case 2:
			g.pick(`"_meta"`, `"_meta"`, `"_Meta"`, `"_\u006deta"`)
			g.pick(":")
			g.meta()
		default:
			g.pick(`"x":1`, `"name":"a","name":"b"`, `"arguments":{},"arguments":null`)
		}
	}
	g.pick("}", "}", "", "]")
}

// meta writes a _meta value: mostly a progress token of some kind.
func (g *requestGen) meta() {
	if c := g.next(); c%8 == 0 {
		g.pick(`null`, `{}`, `[]`, `"x"`, `1`, `{`)
		return
	}
	g.pick("{")
	n := 1 + g.next()%3
	for i := range n {
		if i > 0 {
			g.pick(",", ",", ",", "")
		}
		g.pick(`"progressToken"`, `"progressToken"`, `"progressToken"`, `"ProgressToken"`, `"progress\u0054oken"`, `"traceparent"`, `"io.modelcontextprotocol/protocolVersion"`)
		g.pick(":")
		g.pick(`1`, `0`, `-0`, `-12`, `7`, `1.5`, `1e3`, `01`, `-`, `12345678901234567890`, `123456789012345678901`, `-1234567890123456789`, `-12345678901234567890`,
			`1`+strings.Repeat("0", 400), `"p"`, `""`, `"\u00e9\"x"`, `"é"`, "\"\xff\"", `"\u00"`, `null`, `true`, `{}`, `[1]`, `{"a":[1]}`)
	}
	g.pick("}", "}", "}", "", "]")
}

// BenchmarkReadRequest: reading a typical tools/call body, as
// checkEnvelope and plainCall do (reference) and in one pass (scan), plain
// and with the progressToken many clients send.
func BenchmarkReadRequest(b *testing.B) {
	for _, body := range []struct{ name, body string }{{"plain", benchCall}, {"progress", benchProgressCall}} {
		b.Run(body.name+"/reference", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				m, err := checkEnvelope([]byte(body.body))
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := plainCall(m); !ok {
					b.Fatal("not a plain call")
				}
			}
		})
		b.Run(body.name+"/scan", func(b *testing.B) {
			data := []byte(body.body)
			b.ReportAllocs()
			for b.Loop() {
				m, err := scanEnvelope(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := directCall(m); !ok {
					b.Fatal("not a plain call")
				}
			}
		})
	}
}
