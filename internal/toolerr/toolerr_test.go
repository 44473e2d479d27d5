package toolerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodesAndMessages(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.5:8989: secret-ish detail")
	wrapped := fmt.Errorf("sonarr: %w", Wrap(UpstreamUnavailable, cause, "Sonarr is unreachable"))
	cases := []struct {
		name string
		err  error
		code Code
		msg  string
	}{
		{"direct", New(Busy, "too many calls (%d)", 8), Busy, "too many calls (8)"},
		{"wrapped twice", wrapped, UpstreamUnavailable, "Sonarr is unreachable"},
		{"plain error hides its text", cause, Internal, "internal error"},
	}
	for _, tc := range cases {
		if CodeOf(tc.err) != tc.code || MessageOf(tc.err) != tc.msg {
			t.Errorf("%s: got %s %q", tc.name, CodeOf(tc.err), MessageOf(tc.err))
		}
	}
	if !errors.Is(wrapped, cause) {
		t.Error("the cause is not reachable with errors.Is")
	}
	if !errors.Is(wrapped, New(UpstreamUnavailable, "")) || errors.Is(wrapped, New(Busy, "")) {
		t.Error("errors.Is does not compare codes")
	}
}
