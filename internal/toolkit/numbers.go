package toolkit

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Bounds on one number literal in a call's arguments. The JSON-Schema
// validator compares numbers exactly (math/big): 1e-30000 becomes a fraction
// with a 30,000-digit denominator, and a 256 KiB array of them cost seconds
// of CPU per call. No tool argument needs more than float64's exponent range
// or more than 32 characters (a 64-bit integer has at most 20).
const (
	MaxNumberLen      = 32
	MaxNumberExponent = 308
)

// ErrNumberTooBig is wrapped by CheckNumbers' refusal.
var ErrNumberTooBig = errors.New("number literal out of range")

// CheckNumbers refuses arguments holding a number literal longer than
// MaxNumberLen characters or with an exponent beyond ±MaxNumberExponent,
// before anything parses the numbers exactly. It is one pass over the bytes
// without allocation. Malformed JSON may pass: the caller's own decoding
// reports it.
func CheckNumbers(raw []byte) error {
	inString := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString && c == '\\':
			i++ // the escaped byte cannot end the string
		case c == '"':
			inString = !inString
		case !inString && (c == '-' || '0' <= c && c <= '9'):
			j := i
			for j < len(raw) && isNumberByte(raw[j]) {
				j++
			}
			if !numberOK(raw[i:j]) {
				return toolerr.Wrap(toolerr.InvalidArgument, ErrNumberTooBig,
					"a number in the arguments is longer than %d characters or has an exponent beyond ±%d; write it plainly (e.g. 0.001 or 1500)",
					MaxNumberLen, MaxNumberExponent)
			}
			i = j - 1
		}
	}
	return nil
}

func isNumberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

func numberOK(lit []byte) bool {
	if len(lit) > MaxNumberLen {
		return false
	}
	i := bytes.IndexAny(lit, "eE")
	if i < 0 {
		return true
	}
	exp, err := strconv.Atoi(strings.TrimPrefix(string(lit[i+1:]), "+"))
	return err == nil && exp >= -MaxNumberExponent && exp <= MaxNumberExponent
}
