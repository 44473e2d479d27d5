package toolkit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// wire marshals a result as the server would send it.
func wire(t *testing.T, res *mcp.CallToolResult) toolResult {
	t.Helper()
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatalf("marshal result: %v", err)
	}
	var r toolResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("unmarshal result: %v", err)
	}
	return r
}

func TestSuccess(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   any
		want string // the structured content as compact JSON
	}{
		{name: "object", in: map[string]any{"a": 1, "b": "x"}, want: `{"a":1,"b":"x"}`},
		{name: "struct", in: struct {
			Name string `json:"name"`
		}{"Dune"}, want: `{"name":"Dune"}`},
		{name: "html is not escaped", in: map[string]string{"q": "<a & b>"}, want: `{"q":"<a & b>"}`},
		{name: "array is wrapped", in: []int{1, 2}, want: `{"result":[1,2]}`},
		{name: "string is wrapped", in: "hi", want: `{"result":"hi"}`},
		{name: "number is wrapped", in: 4.5, want: `{"result":4.5}`},
		{name: "nil is wrapped", in: nil, want: `{"result":null}`},
		{name: "raw object", in: json.RawMessage(`{"k":[true]}`), want: `{"k":[true]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := toolkit.Success(tc.in, toolkit.DefaultMaxResultBytes)
			if err != nil {
				t.Fatal(err)
			}
			r := wire(t, res)
			if r.IsError {
				t.Error("success marked as error")
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.StructuredContent, want) {
				t.Errorf("structuredContent = %v, want %s", r.StructuredContent, tc.want)
			}
			if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != tc.want {
				t.Errorf("text mirror = %+v, want %s", r.Content, tc.want)
			}
		})
	}

	if _, err := toolkit.Success(map[string]any{"c": make(chan int)}, 0); err == nil {
		t.Error("Success accepted a value that cannot be JSON")
	}
}

func TestSuccessTruncation(t *testing.T) {
	t.Parallel()
	// Runes of 1, 2, 3 and 4 bytes so that every cut position lands
	// inside some rune.
	long := strings.Repeat("aé€😀", 300)
	full, err := toolkit.Success(map[string]any{"text": long}, 0)
	if err != nil {
		t.Fatal(err)
	}
	fullJSON := wire(t, full).Content[0].Text
	for maxBytes := 300; maxBytes < 340; maxBytes++ {
		res, err := toolkit.Success(map[string]any{"text": long}, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		r := wire(t, res)
		if r.IsError {
			t.Fatalf("max %d: truncated result marked as error", maxBytes)
		}
		text := r.Content[0].Text
		if !utf8.ValidString(text) {
			t.Fatalf("max %d: text is not valid UTF-8", maxBytes)
		}
		if len(text) > maxBytes {
			t.Errorf("max %d: text is %d bytes", maxBytes, len(text))
		}
		head, note, ok := strings.Cut(text, toolkit.TruncationMarker)
		if !ok {
			t.Fatalf("max %d: no truncation marker in %q", maxBytes, text)
		}
		if !strings.HasPrefix(fullJSON, head) || len(head) == 0 {
			t.Errorf("max %d: head is not a prefix of the full JSON", maxBytes)
		}
		if !strings.Contains(note, fmt.Sprintf("showing %d of %d bytes", len(head), len(fullJSON))) {
			t.Errorf("max %d: note %q does not state the sizes", maxBytes, note)
		}
		sc := r.StructuredContent
		if sc["truncated"] != true || sc["total_bytes"] != float64(len(fullJSON)) || sc["shown_bytes"] != float64(len(head)) {
			t.Errorf("max %d: structuredContent = %v", maxBytes, sc)
		}
		if _, ok := sc["text"]; ok {
			t.Errorf("max %d: structuredContent carries a partial object", maxBytes)
		}
	}

	// At or below the cap nothing is cut; zero means no cap.
	for _, maxBytes := range []int{len(fullJSON), len(fullJSON) + 1, 0} {
		res, err := toolkit.Success(map[string]any{"text": long}, maxBytes)
		if err != nil {
			t.Fatal(err)
		}
		if r := wire(t, res); r.Content[0].Text != fullJSON || r.StructuredContent["text"] != long {
			t.Errorf("max %d: result was altered", maxBytes)
		}
	}
}

func TestFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		err     error
		code    toolerr.Code
		message string
	}{
		{name: "coded", err: toolerr.New(toolerr.NotFound, "no movie %d", 7), code: toolerr.NotFound, message: "no movie 7"},
		{name: "wrapped coded", err: fmt.Errorf("lookup: %w", toolerr.Wrap(toolerr.Busy, errors.New("pool full secret-xyz"), "try again")),
			code: toolerr.Busy, message: "try again"},
		{name: "plain", err: errors.New("dial 10.0.0.5: secret-xyz"), code: toolerr.Internal, message: "internal error"},
		{name: "plain wrapping", err: fmt.Errorf("get: %w", errors.New("secret-xyz")), code: toolerr.Internal, message: "internal error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := toolkit.Failure(tc.err)
			data, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), "secret-xyz") {
				t.Errorf("cause leaks: %s", data)
			}
			r := wire(t, res)
			if code := errorCode(t, r); code != tc.code {
				t.Errorf("code %q, want %q", code, tc.code)
			}
			if msg := errorMessage(r); msg != tc.message {
				t.Errorf("message %q, want %q", msg, tc.message)
			}
			var mirror toolkit.ErrorBody
			if err := json.Unmarshal([]byte(r.Content[0].Text), &mirror); err != nil {
				t.Fatalf("text mirror: %v", err)
			}
			if mirror.Error.Code != tc.code || mirror.Error.Message != tc.message {
				t.Errorf("text mirror = %+v", mirror)
			}
		})
	}
}

// Results larger than the service's cap are truncated on the wire.
func TestResultCapOverHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *toolkit.Options) { o.MaxResultBytes = 64 })
	res, _ := f.callRaw("test_leak", map[string]any{}, nil)
	if res.IsError || res.StructuredContent["truncated"] != true {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(res.Content[0].Text, toolkit.TruncationMarker) {
		t.Errorf("text = %q", res.Content[0].Text)
	}
}
