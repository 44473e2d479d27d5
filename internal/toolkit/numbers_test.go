package toolkit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// idsSchema is shaped like prowlarr_search's indexer_ids.
const idsSchema = `{"type":"object","additionalProperties":false,"properties":{
	"ids":{"type":"array","items":{"type":"integer","minimum":1,"maximum":2147483647}},
	"ratio":{"type":"number"},
	"text":{"type":"string"}}}`

// numberArray is {"ids":[lit(1), lit(2), …]} of about size bytes.
func numberArray(size int, lit func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"ids":[`)
	for i := 1; b.Len() < size; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString(lit(i))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func hostileNumbers(size int) []byte {
	return numberArray(size, func(i int) string { return fmt.Sprintf("%de-30000", i%9+1) })
}

func plainNumbers(size int) []byte {
	return numberArray(size, func(i int) string { return fmt.Sprint(100000 + i) })
}

func TestNumbersBeyondSaneRangeAreRefusedBeforeValidation(t *testing.T) {
	v := mustValidator(t, idsSchema)
	long := "1" + strings.Repeat("0", toolkit.MaxNumberLen)
	cases := []struct {
		name string
		args string
		ok   bool
	}{
		{"tiny exponent", `{"ids":[1e-30000]}`, false},
		{"huge exponent", `{"ratio":1E+400}`, false},
		{"exponent that overflows an int", `{"ratio":1e99999999999999999999}`, false},
		{"33 characters", `{"ratio":` + long + `}`, false},
		{"long fraction", `{"ratio":0.` + strings.Repeat("1", toolkit.MaxNumberLen) + `}`, false},
		{"negative huge exponent", `{"ratio":-5e-309}`, false},
		{"nested deep in an array", `{"ids":[1,2,[3,{"x":1e-999}]]}`, false},
		{"plain integers", `{"ids":[1,2,2147483647]}`, true},
		{"float64 range", `{"ratio":1.7976931348623157e308}`, true},
		{"small exponent", `{"ratio":-2.5E-7}`, true},
		{"32 characters", `{"ratio":` + long[:toolkit.MaxNumberLen] + `}`, true},
		{"exponent inside a string", `{"text":"1e-30000 and 1` + strings.Repeat("0", 60) + `"}`, true},
		{"escaped quote inside a string", `{"text":"a\" 1e-30000 \\"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(json.RawMessage(tc.args))
			if tc.ok {
				if err != nil && errors.Is(err, toolkit.ErrNumberTooBig) {
					t.Fatalf("refused a sane number: %v", err)
				}
				return
			}
			if !errors.Is(err, toolkit.ErrNumberTooBig) || toolerr.CodeOf(err) != toolerr.InvalidArgument {
				t.Fatalf("want invalid_argument for the number, got %v", err)
			}
			if msg := toolerr.MessageOf(err); !strings.Contains(msg, "number") {
				t.Errorf("message does not say what is wrong: %q", msg)
			}
		})
	}
}

// allocated returns the bytes f allocates (deterministic, unlike time).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileNumbersCostNoMoreThanPlainOnes bounds the work of a 32 KiB
// array of 1e-30000 literals against an array of plain numbers of the same
// size, as a ratio of allocated bytes (exact big.Rat arithmetic allocates
// in proportion to its CPU time). It was about 40 times the CPU before the
// literals were refused.
func TestHostileNumbersCostNoMoreThanPlainOnes(t *testing.T) {
	v := mustValidator(t, idsSchema)
	hostile, plain := hostileNumbers(32<<10), plainNumbers(32<<10)
	if err := v.Validate(plain); err != nil {
		t.Fatalf("plain numbers refused: %v", err)
	}
	bad := allocated(func() { _ = v.Validate(hostile) })
	good := allocated(func() { _ = v.Validate(plain) })
	if bad > good {
		t.Fatalf("hostile numbers allocated %d bytes, plain ones %d (ratio %.1f): validated exactly instead of refused", bad, good, float64(bad)/float64(good))
	}
}

func BenchmarkValidateHostileNumbers(b *testing.B) {
	v := mustValidator(b, idsSchema)
	raw := hostileNumbers(toolkit.MaxArgsBytes - 64)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = v.Validate(raw)
	}
}

func BenchmarkValidatePlainNumbers(b *testing.B) {
	v := mustValidator(b, idsSchema)
	raw := plainNumbers(toolkit.MaxArgsBytes - 64)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = v.Validate(raw)
	}
}
