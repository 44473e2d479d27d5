package audit

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// appendLine appends l as encoding/json writes it (field order, omitempty,
// HTML-safe string escapes, number format) without reflection: one line per
// call is the gateway's hot path. TestAppendLineIsJSONMarshal holds the two
// to the same bytes.
func appendLine(b []byte, l line) []byte {
	b = append(b, `{"time":`...)
	b = appendString(b, l.Time)
	for _, f := range [...]struct {
		key, v string
	}{
		{`,"event":`, l.Event}, {`,"client":`, l.Client}, {`,"user":`, l.User}, {`,"user_role":`, l.UserRole},
		{`,"service":`, l.Service}, {`,"tool":`, l.Tool}, {`,"decision":`, l.Decision}, {`,"reason":`, l.Reason},
		{`,"approval":`, l.Approval}, {`,"ticket_id":`, l.TicketID}, {`,"args_digest":`, l.ArgsDigest},
	} {
		if f.v != "" {
			b = append(b, f.key...)
			b = appendString(b, f.v)
		}
	}
	if l.DurationMS != 0 {
		b = append(b, `,"duration_ms":`...)
		b = appendFloat(b, l.DurationMS)
	}
	if l.Outcome != "" {
		b = append(b, `,"outcome":`...)
		b = appendString(b, l.Outcome)
	}
	if l.Bytes != 0 {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, int64(l.Bytes), 10)
	}
	for _, f := range [...]struct {
		key, v string
	}{{`,"endpoint":`, l.Endpoint}, {`,"phase":`, l.Phase}, {`,"reason_id":`, l.ReasonID}} {
		if f.v != "" {
			b = append(b, f.key...)
			b = appendString(b, f.v)
		}
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string with encoding/json's escapes:
// quote, backslash, control characters, <, > and & (HTML-safe), U+2028 and
// U+2029, and invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat appends f as encoding/json writes a float64: the shortest
// decimal, in exponent form (without a leading zero in the exponent) below
// 1e-6 or from 1e21.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// line fixes the on-disk field names; they are a stable interface for log
// shippers and must not be renamed.
type line struct {
	Time       string  `json:"time"`
	Event      string  `json:"event,omitempty"`
	Client     string  `json:"client,omitempty"`
	User       string  `json:"user,omitempty"`
	UserRole   string  `json:"user_role,omitempty"`
	Service    string  `json:"service,omitempty"`
	Tool       string  `json:"tool,omitempty"`
	Decision   string  `json:"decision,omitempty"`
	Reason     string  `json:"reason,omitempty"`
	Approval   string  `json:"approval,omitempty"`
	TicketID   string  `json:"ticket_id,omitempty"`
	ArgsDigest string  `json:"args_digest,omitempty"`
	DurationMS float64 `json:"duration_ms,omitempty"`
	Outcome    string  `json:"outcome,omitempty"`
	Bytes      int     `json:"bytes,omitempty"`
	// Added later, so after the older fields.
	Endpoint string `json:"endpoint,omitempty"`
	Phase    string `json:"phase,omitempty"`
	ReasonID string `json:"reason_id,omitempty"`
}
