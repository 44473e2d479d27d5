package toolkittest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// ReadCase is one call of a read tool, usually against a fake of the
// upstream application, and what its answer must show.
type ReadCase struct {
	Name string
	Tool string
	Args map[string]any
	// Before runs ahead of the call (seed the fake, mark its request log).
	Before func()
	// Code is the expected error code; empty expects success.
	Code toolerr.Code
	// Has are substrings of the answer's JSON (a failure's message
	// included); HasNot must not occur in it.
	Has, HasNot []string
	// Check inspects the decoded answer further.
	Check func(t *testing.T, got map[string]any)
}

// RunReads runs each case as a subtest: the call, its outcome and code,
// Has and HasNot, Check, and that no answer holds any of secrets (or the
// test credentials).
func (s *Service) RunReads(t *testing.T, cases []ReadCase, secrets ...string) {
	t.Helper()
	for _, c := range cases {
		name := c.Name
		if name == "" {
			name = c.Tool
		}
		t.Run(name, func(t *testing.T) {
			if c.Before != nil {
				c.Before()
			}
			args := c.Args
			if args == nil {
				args = map[string]any{}
			}
			got, isErr := s.Call(t, c.Tool, args, "")
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			switch {
			case c.Code == "" && isErr:
				t.Fatalf("%s failed: %s", c.Tool, text)
			case c.Code != "" && !isErr:
				t.Fatalf("%s succeeded, want %s: %.500s", c.Tool, c.Code, text)
			case c.Code != "":
				e, _ := got["error"].(map[string]any)
				if code, _ := e["code"].(string); code != string(c.Code) {
					t.Fatalf("%s failed with %s, want %s: %s", c.Tool, code, c.Code, text)
				}
			}
			for _, w := range c.Has {
				if !strings.Contains(text, w) {
					t.Errorf("answer lacks %s:\n%.2000s", w, text)
				}
			}
			for _, w := range c.HasNot {
				if strings.Contains(text, w) {
					t.Errorf("answer contains %s:\n%.2000s", w, text)
				}
			}
			if c.Check != nil {
				c.Check(t, got)
			}
			NoLeaks(t, secrets, map[string]string{"the answer": text})
		})
	}
}
