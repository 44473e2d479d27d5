package approval

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var key = []byte("0123456789abcdef0123456789abcdef")

func TestSignVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	s, err := NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	good := Approval{Service: "arr", Tool: "sonarr_grab", ArgsDigest: "d1", PreviewDigest: "p1", TicketID: "tkt_1", Expires: now.Add(time.Minute).Unix()}
	sign := func(a Approval) string {
		tok, err := s.Sign(a)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	other, _ := NewSigner([]byte("another key of at least 32 bytes!!"))
	foreign, _ := other.Sign(good)
	valid := sign(good)
	payload, sig, _ := strings.Cut(valid, ".")
	swapped, _, _ := strings.Cut(sign(Approval{Service: "arr", Tool: "sonarr_grab", ArgsDigest: "d1", PreviewDigest: "p1", TicketID: "tkt_9", Expires: good.Expires}), ".")
	expired := good
	expired.TicketID, expired.Expires = "tkt_2", now.Unix()

	cases := []struct {
		name                  string
		token                 string
		service, tool, digest string
		want                  error
	}{
		{"valid", valid, "arr", "sonarr_grab", "d1", nil},
		{"replayed", valid, "arr", "sonarr_grab", "d1", ErrReplayed},
		{"other key", foreign, "arr", "sonarr_grab", "d1", ErrSignature},
		{"payload swapped under a valid signature", swapped + "." + sig, "arr", "sonarr_grab", "d1", ErrSignature},
		{"no dot", payload + sig, "arr", "sonarr_grab", "d1", ErrMalformed},
		{"bad base64", "!!." + sig, "arr", "sonarr_grab", "d1", ErrMalformed},
		{"expired", sign(expired), "arr", "sonarr_grab", "d1", ErrExpired},
		{"other service", sign(Approval{Service: "web", Tool: "sonarr_grab", ArgsDigest: "d1", TicketID: "t3", Expires: good.Expires}), "arr", "sonarr_grab", "d1", ErrMismatch},
		{"other tool", sign(Approval{Service: "arr", Tool: "radarr_grab", ArgsDigest: "d1", TicketID: "t4", Expires: good.Expires}), "arr", "sonarr_grab", "d1", ErrMismatch},
		{"other arguments", sign(Approval{Service: "arr", Tool: "sonarr_grab", ArgsDigest: "d2", TicketID: "t5", Expires: good.Expires}), "arr", "sonarr_grab", "d1", ErrMismatch},
		{"no ticket id", sign(Approval{Service: "arr", Tool: "sonarr_grab", ArgsDigest: "d1", Expires: good.Expires}), "arr", "sonarr_grab", "d1", ErrMalformed},
	}
	v, err := NewVerifier(key, clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Verify(tc.token, tc.service, tc.tool, tc.digest)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestShortKeysRefused(t *testing.T) {
	if _, err := NewSigner([]byte("short")); err == nil {
		t.Fatal("short signing key accepted")
	}
	if _, err := NewVerifier([]byte("short"), nil); err == nil {
		t.Fatal("short verifying key accepted")
	}
}

func TestConcurrentReplayAppliesOnce(t *testing.T) {
	s, _ := NewSigner(key)
	v, _ := NewVerifier(key, nil)
	tok, _ := s.Sign(Approval{Service: "a", Tool: "b", ArgsDigest: "c", TicketID: "once", Expires: time.Now().Add(time.Minute).Unix()})
	var ok atomic.Int32
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if _, err := v.Verify(tok, "a", "b", "c"); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d verifications succeeded, want 1", ok.Load())
	}
}

func TestReplayCacheIsBoundedAndPruned(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	v, _ := NewVerifier(key, func() time.Time { return now })
	v.maxUsed = 2
	s, _ := NewSigner(key)
	tok := func(id string, ttl time.Duration) string {
		t, _ := s.Sign(Approval{Service: "a", Tool: "b", ArgsDigest: "c", TicketID: id, Expires: now.Add(ttl).Unix()})
		return t
	}
	for _, id := range []string{"1", "2"} {
		if _, err := v.Verify(tok(id, time.Second), "a", "b", "c"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.Verify(tok("3", time.Minute), "a", "b", "c"); !errors.Is(err, ErrFull) {
		t.Fatalf("want ErrFull, got %v", err)
	}
	now = now.Add(2 * time.Second) // 1 and 2 expired: their slots are freed
	if _, err := v.Verify(tok("4", time.Minute), "a", "b", "c"); err != nil {
		t.Fatalf("after pruning: %v", err)
	}
}

func TestDigest(t *testing.T) {
	d := func(v any) string {
		t.Helper()
		s, err := Digest(v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := [][]any{
		{map[string]any{"a": 1, "b": "x"}, json.RawMessage(`{"b":"x","a":1}`), []byte(` { "a" : 1 , "b" : "x" } `)},
		{nil, json.RawMessage(``), json.RawMessage(`null`), map[string]any{}, json.RawMessage(`{}`)},
		{json.RawMessage(`{"id":12345678901234567890}`), map[string]any{"id": json.Number("12345678901234567890")}},
		{json.RawMessage(`{"t":"<&>"}`), map[string]any{"t": "<&>"}},
	}
	for i, group := range same {
		for _, v := range group[1:] {
			if d(v) != d(group[0]) {
				t.Errorf("group %d: %v and %v digest differently", i, group[0], v)
			}
		}
	}
	different := [][2]any{
		{json.RawMessage(`{"a":1}`), json.RawMessage(`{"a":2}`)},
		{json.RawMessage(`{"a":1}`), json.RawMessage(`{"a":"1"}`)},
		{json.RawMessage(`{"id":12345678901234567890}`), json.RawMessage(`{"id":12345678901234567891}`)},
		{json.RawMessage(`{"a":[1,2]}`), json.RawMessage(`{"a":[2,1]}`)},
		{json.RawMessage(`{"force":true}`), json.RawMessage(`{}`)},
	}
	for _, p := range different {
		if d(p[0]) == d(p[1]) {
			t.Errorf("%s and %s digest the same", p[0], p[1])
		}
	}
}
