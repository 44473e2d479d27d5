package mcpwire

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestCheckEnvelope(t *testing.T) {
	cases := []struct {
		name string
		body string
		code int // 0: valid
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"ping"}`, 0},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, 0},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"x"}}`, 0},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`, 0},
		{"not JSON", `{"jsonrpc":`, -32700},
		{"empty", ``, -32700},
		{"trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"ping"} x`, -32700},
		{"string", `"x"`, -32600},
		{"null", `null`, -32600},
		{"empty batch", `[]`, -32600},
		{"batch with a bad member", `[{"jsonrpc":"2.0","id":1,"method":"ping"},5]`, -32600},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600},
		{"no version", `{"id":1,"method":"ping"}`, -32600},
		{"no method", `{"jsonrpc":"2.0","id":1}`, -32600},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, -32600},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, -32600},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read([]byte(tc.body))
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("valid message refused: %v", err)
				}
				return
			}
			var ee *Error
			if !errors.As(err, &ee) || ee.Code != tc.code {
				t.Fatalf("want %d, got %v", tc.code, err)
			}
		})
	}
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[]`, `{`, `[{"jsonrpc":"2.0","id":"x","result":1}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		msg, err := Read([]byte(body))
		if err == nil {
			if !json.Valid([]byte(body)) {
				t.Fatalf("invalid JSON accepted: %q", body)
			}
			// A single message comes back as it parses on its own.
			var want *Message
			if trimmed := strings.TrimSpace(body); trimmed[0] == '{' {
				want = new(Message)
				if err := json.Unmarshal([]byte(trimmed), want); err != nil {
					t.Fatal(err)
				}
				want.body = []byte(trimmed) // kept for plainCall's duplicate check
			}
			if !reflect.DeepEqual(msg, want) {
				t.Fatalf("%q parsed as %+v, want %+v", body, msg, want)
			}
			return
		}
		var ee *Error
		if !errors.As(err, &ee) || (ee.Code != -32700 && ee.Code != -32600) {
			t.Fatalf("unexpected error %v for %q", err, body)
		}
	})
}
