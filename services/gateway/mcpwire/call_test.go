package mcpwire

import (
	"strings"
	"testing"
)

// TestPlainCall: which requests, as Read parsed them, the direct
// path serves, and what it reads from them; everything else is mcp-go's.
func TestPlainCall(t *testing.T) {
	cases := []struct {
		name, body string
		ok         bool
		id, tool   string
		args       string
	}{
		{"plain call", echoCall, true, "7", "demo_echo", `{"text":"hi"}`},
		{"string id, no arguments", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"demo_echo"}}`, true, `"a"`, "demo_echo", ""},
		{"surrounding space", " \n" + echoCall + "\n ", true, "7", "demo_echo", `{"text":"hi"}`},
		{"_meta of a progress token", withMeta(`"_meta":{"progressToken":3}`), true, "7", "demo_echo", `{"text":"hi"}`},
		{"_meta of a string progress token", withMeta(`"_meta":{"progressToken":"p"}`), true, "7", "demo_echo", `{"text":"hi"}`},
		{"empty _meta", withMeta(`"_meta":{}`), false, "", "", ""},
		{"_meta of a fraction token", withMeta(`"_meta":{"progressToken":0.5}`), false, "", "", ""},
		{"_meta of a token and more", withMeta(`"_meta":{"progressToken":3,"x":1}`), false, "", "", ""},
		{"_meta twice", withMeta(`"_meta":{"progressToken":3},"_meta":{"progressToken":4}`), false, "", "", ""},
		{"a task", strings.Replace(echoCall, `"arguments"`, `"task":{},"arguments"`, 1), false, "", "", ""},
		// A message member twice: the Message keeps the last, mcp-go reads
		// the first too (a task in it is refused there), so mcp-go answers.
		{"params twice", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_echo","task":5},"params":{"name":"demo_echo","arguments":{}}}`, false, "", "", ""},
		{"params twice but for case", `{"jsonrpc":"2.0","id":7,"method":"tools/call","Params":{"name":"demo_echo","task":5},"params":{"name":"demo_echo","arguments":{}}}`, false, "", "", ""},
		{"id twice", `{"jsonrpc":"2.0","id":6,"id":7,"method":"tools/call","params":{"name":"demo_echo"}}`, false, "", "", ""},
		{"members once, one in another case", `{"jsonrpc":"2.0","id":7,"Method":"tools/call","params":{"name":"demo_echo"}}`, true, "7", "demo_echo", ""},
		{"another method", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"name":"x"}}`, false, "", "", ""},
		{"notification", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"demo_echo"}}`, false, "", "", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"demo_echo"}}`, false, "", "", ""},
		{"no params", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}`, false, "", "", ""},
		{"null params", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":null}`, false, "", "", ""},
		{"params an array", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":["demo_echo"]}`, false, "", "", ""},
		{"name not a string", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":5}}`, false, "", "", ""},
		{"empty name", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":""}}`, false, "", "", ""},
		{"batch", "[" + echoCall + "]", false, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := Read([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			p, ok := msg.PlainCall()
			if ok != tc.ok {
				t.Fatalf("served directly: %t, want %t", ok, tc.ok)
			}
			if ok && (string(p.ID) != tc.id || p.Name != tc.tool || string(p.Args) != tc.args) {
				t.Fatalf("read id %s, tool %q, arguments %s", p.ID, p.Name, p.Args)
			}
			if got, want := msg.Tool(), map[bool]string{true: tc.tool}[ok]; ok && got != want {
				t.Errorf("Tool %q, want %q", got, want)
			}
		})
	}
}

const echoCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"hi"}}}`

func withMeta(member string) string {
	return strings.Replace(echoCall, `"arguments"`, member+`,"arguments"`, 1)
}
