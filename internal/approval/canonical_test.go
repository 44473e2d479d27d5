package approval

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// roundTrip is Canonical as it was before decoded values skipped the
// round trip: the reference the fast path must match byte for byte, since
// gateway and services must agree on every digest.
func roundTrip(t testing.TB, v any) ([]byte, error) {
	t.Helper()
	switch raw := v.(type) {
	case json.RawMessage:
		v = decodeRaw(raw)
	case []byte:
		v = decodeRaw(raw)
	}
	if v == nil {
		return []byte("{}"), nil
	}
	first, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	generic := decodeRaw(first)
	if generic == nil {
		return []byte("{}"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func decodeJSON(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func TestCanonicalOfDecodedArgumentsIsTheRoundTrip(t *testing.T) {
	type pair struct {
		B string `json:"b"`
		A int    `json:"a"`
	}
	cases := []struct {
		name string
		v    any
	}{
		{"decoded object", decodeJSON(t, `{"z":1,"a":{"y":[1,2.50,"x"],"b":null},"m":true}`)},
		{"html and line separators", decodeJSON(t, `{"q":"<a href='x'>&</a>\u2028\u2029"}`)},
		{"numbers as written", decodeJSON(t, `{"a":1.0,"b":-0,"c":1e5,"d":12345678901234567890}`)},
		{"replacement character", decodeJSON(t, "{\"s\":\"\xff\"}")},
		{"empty object", map[string]any{}},
		{"nil map", map[string]any(nil)},
		{"nil slice", []any(nil)},
		{"top-level string", "text"},
		{"float64", map[string]any{"f": 1e21, "g": 0.1, "h": math.Copysign(0, -1)}},
		{"empty number", map[string]any{"n": json.Number("")}},
		{"invalid UTF-8 value", map[string]any{"s": "a\xffb"}},
		{"invalid UTF-8 key", map[string]any{"\xfe": 1}},
		{"struct inside", map[string]any{"p": pair{B: "x", A: 1}}},
		{"typed slice", map[string]any{"ids": []int{3, 1}}},
		{"raw message", json.RawMessage(`{"b":1,"a":2}`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, gerr := Canonical(tc.v)
			want, werr := roundTrip(t, tc.v)
			if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("Canonical = %q, %v; round trip = %q, %v", got, gerr, want, werr)
			}
		})
	}
}

func TestCanonicalRefusesWhatTheRoundTripRefuses(t *testing.T) {
	for name, v := range map[string]any{
		"NaN":            map[string]any{"x": math.NaN()},
		"invalid number": map[string]any{"x": json.Number("abc")},
		"channel":        map[string]any{"x": make(chan int)},
	} {
		if _, err := Canonical(v); err == nil {
			t.Errorf("%s: Canonical accepted it", name)
		}
		if _, err := roundTrip(t, v); err == nil {
			t.Errorf("%s: the reference accepted it", name)
		}
	}
}

// FuzzCanonical: for arguments as the gateway decodes them, Canonical is
// byte for byte the round trip.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"b":[1,{"c":"<>&"}],"a":"\u2028"}`, `{"n":1.50e-3}`, "{\"k\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		got, gerr := Canonical(v)
		want, werr := roundTrip(t, v)
		if (gerr != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("Canonical = %q, %v; round trip = %q, %v", got, gerr, want, werr)
		}
	})
}

func BenchmarkCanonical(b *testing.B) {
	v := decodeJSON(b, `{"text":"benchmark","ids":[1,2,3],"filter":{"domain":"light","area":"kitchen"}}`)
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Canonical(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("round trip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := roundTrip(b, v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
