package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
)

// MaxReasonBytes bounds the application's reason in a message: room for a
// validation message or two, too little for a page of anything.
const MaxReasonBytes = 300

const (
	// reasonScan bounds the text cleaned and redacted before the final
	// cut. It is far above MaxReasonBytes plus any secret's length, so a
	// secret is always whole when redaction sees it.
	reasonScan = 4 << 10
	// reasonDepth and reasonItems bound the walk through a JSON error body.
	reasonDepth = 4
	reasonItems = 8
)

// ReasonFunc picks an application's own explanation out of the body of a
// non-2xx answer (a validation message, "Unknown filter field", …). It
// returns "" when the body gives none. Its text is cleaned afterwards (one
// line of printable UTF-8, a 5xx's first line only, secrets redacted, at
// most MaxReasonBytes), so it need not bound or sanitise anything; it must
// never return markup.
type ReasonFunc func(status int, header http.Header, body []byte) string

// reasonKeys are the members of a JSON error object that carry its text,
// most specific first. "description" is left out on purpose: Servarr puts
// the exception with its stack trace there.
var reasonKeys = []string{
	"message", "errorMessage", "error_message", "msg", "detail",
	"errors", "error_description", "error", "title", "reason",
}

// fieldKeys name the field an item of an error list is about.
var fieldKeys = []string{"propertyName", "field", "loc"}

// DefaultReason understands the error bodies web applications commonly
// send: a JSON object with a message (message, errorMessage, msg, detail,
// error — a string or an object with a message of its own — title,
// reason), ASP.NET's ProblemDetails and GraphQL's errors (an "errors" map of
// field → messages or list of objects), a JSON list of such objects or
// strings (FluentValidation's failures, FastAPI's detail), a JSON string,
// and plain text. An HTML or XML page gives no reason, and a text that only
// repeats the status ("400: Bad Request") counts as none.
func DefaultReason(status int, header http.Header, body []byte) string {
	body = bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if len(body) == 0 {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	if isMarkup(mt, body) {
		return ""
	}
	var v any
	if err := json.Unmarshal(body, &v); err == nil {
		return jsonReason(status, v, 0)
	}
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return "" // promised JSON and sent something broken: no telling what
	}
	return string(body)
}

func isMarkup(mt string, body []byte) bool {
	switch {
	case body[0] == '<':
		return true
	case mt == "text/html" || mt == "application/xhtml+xml" || mt == "text/xml" || mt == "application/xml":
		return true
	}
	return strings.HasSuffix(mt, "+xml")
}

// jsonReason returns the text of one JSON value, "" for none.
func jsonReason(status int, v any, depth int) string {
	if depth > reasonDepth {
		return ""
	}
	switch t := v.(type) {
	case string:
		if statusOnly(status, t) {
			return ""
		}
		return t
	case []any:
		var parts []string
		for _, e := range t[:min(len(t), reasonItems)] {
			if s := itemReason(status, e, depth+1); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "; ")
	case map[string]any:
		for _, k := range reasonKeys {
			m, ok := t[k]
			if !ok {
				continue
			}
			if k == "errors" {
				if errs, ok := m.(map[string]any); ok {
					if s := fieldErrors(status, errs, depth+1); s != "" {
						return s
					}
					continue
				}
			}
			if s := jsonReason(status, m, depth+1); s != "" {
				return s
			}
		}
	}
	return ""
}

// itemReason is the text of one entry of an error list, named by its field
// when the text does not name it already.
func itemReason(status int, v any, depth int) string {
	s := jsonReason(status, v, depth)
	obj, ok := v.(map[string]any)
	if s == "" || !ok {
		return s
	}
	for _, k := range fieldKeys {
		f := fieldName(obj[k])
		if f == "" {
			continue
		}
		if !mentions(s, f) {
			s = f + ": " + s
		}
		break
	}
	return s
}

// mentions reports whether text names field already, however spaced or
// cased ("'Indexer Id' must be …" names IndexerId).
func mentions(text, field string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	return strings.Contains(norm(text), norm(field))
}

// fieldName is a field named as a string or as a path (FastAPI's loc).
func fieldName(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, p := range t[:min(len(t), reasonItems)] {
			switch q := p.(type) {
			case string:
				parts = append(parts, q)
			case float64:
				parts = append(parts, strconv.FormatFloat(q, 'f', -1, 64))
			}
		}
		return strings.Join(parts, ".")
	}
	return ""
}

// fieldErrors reads ProblemDetails' errors: field → messages.
func fieldErrors(status int, errs map[string]any, depth int) string {
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys[:min(len(keys), reasonItems)] {
		s := jsonReason(status, errs[k], depth)
		if s == "" {
			continue
		}
		if k != "" && !mentions(s, strings.TrimPrefix(k, "$.")) {
			s = k + ": " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// statusOnly reports whether s says no more than the status does
// ("Bad Request", "400: Bad Request", "NotFound").
func statusOnly(status int, s string) bool {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	n := norm(s)
	return n == "" || n == norm(http.StatusText(status))
}

// cleanReason turns extracted text into one bounded line safe to quote:
// invalid UTF-8 dropped, a 5xx's first line only (the rest is often a
// stack trace), control and format characters (bidi overrides, zero-width)
// turned into spaces, secrets redacted, at most MaxReasonBytes.
func cleanReason(status int, s string, red *redact.Redactor) string {
	s = strings.TrimSpace(s)
	if status >= 500 {
		if i := strings.IndexAny(s, "\r\n\u2028\u2029"); i >= 0 {
			s = s[:i]
		}
	}
	s = cutRunes(s, reasonScan)
	s = strings.ToValidUTF8(s, "")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	s = red.String(b.String())
	if statusOnly(status, s) {
		return ""
	}
	if len(s) > MaxReasonBytes {
		s = strings.TrimSpace(cutRunes(s, MaxReasonBytes-len("…"))) + "…"
	}
	return s
}

// cutRunes shortens s to at most n bytes without splitting a UTF-8
// sequence.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// said frames a cleaned reason as the application's words, quoted so that
// no part of it reads as the message's own text.
func said(name, reason string) string {
	if reason == "" {
		return ""
	}
	if name == "" {
		name = "the application"
	}
	return name + " said: " + strconv.Quote(reason)
}

// withSaid appends the framed reason to a message.
func withSaid(msg, s string) string {
	if s == "" || strings.Contains(msg, s) {
		return msg
	}
	return strings.TrimRight(msg, ". ") + ". " + s
}

// Explain adds the application's reason found in err's chain to err's
// client-safe message, for a service that words its own message around a
// status: `… (HTTP 409). Sonarr said: "…"`. Code and chain are kept; an
// error without a reason, or whose message has it already, is returned as
// it is.
func Explain(err error) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return err
	}
	return explain(err, se)
}

// Explain adds r's reason to err's client-safe message, like the package
// function Explain, for an error built from r without r's StatusError in
// its chain. r's StatusError joins the chain, so Status still finds it.
func (r *Response) Explain(err error) error {
	if err == nil || r == nil || (r.Status >= 200 && r.Status < 300) {
		return err
	}
	return explain(err, r.StatusError())
}

func explain(err error, se *StatusError) error {
	var te *toolerr.Error
	if err == nil || se.Reason == "" || !errors.As(err, &te) {
		return err
	}
	msg := withSaid(te.Message, se.Said())
	if msg == te.Message {
		return err
	}
	cause := err
	var have *StatusError
	if !errors.As(err, &have) {
		cause = errors.Join(err, se)
	}
	return &toolerr.Error{Code: te.Code, Message: msg, Err: cause}
}

// Said cleans text the application sent in a successful answer (GraphQL's
// errors arrive with HTTP 200) exactly as a reason from an error status is
// cleaned — status picks the 5xx rule — and frames it with the client's
// name: `Unraid said: "…"`, or "" when nothing is left.
func (c *Client) Said(status int, text string) string {
	return said(c.name, cleanReason(status, text, c.red))
}

// secretValues are the values of h's headers that carry a credential
// (X-Api-Key, Authorization, Cookie, …), with a scheme's token and each
// cookie's value on their own, so a reason quoting just the token loses it.
func secretValues(h http.Header) [][]byte {
	var out [][]byte
	for k, vs := range h {
		if !redact.IsSecretKey(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, []byte(v))
			if _, tok, ok := strings.Cut(v, " "); ok {
				out = append(out, []byte(strings.TrimSpace(tok)))
			}
			if strings.EqualFold(k, "Cookie") {
				for _, c := range strings.Split(v, ";") {
					if _, val, ok := strings.Cut(c, "="); ok {
						out = append(out, []byte(strings.TrimSpace(val)))
					}
				}
			}
		}
	}
	return out
}

// redactorFor is the client's redactor, extended by credentials req
// carries beyond the client's own (a session cookie, a renewed token).
func (c *Client) redactorFor(req http.Header) *redact.Redactor {
	extra := secretValues(req)
	extra = slices.DeleteFunc(extra, func(v []byte) bool {
		return slices.ContainsFunc(c.secrets, func(k []byte) bool { return bytes.Equal(k, v) })
	})
	if len(extra) == 0 {
		return c.red
	}
	return redact.New(append(slices.Clone(c.secrets), extra...)...)
}

// clientSecrets are what a client's reasons are redacted with: the
// configured secrets, the credential headers and the base URL's password.
func clientSecrets(cfg Config, base *url.URL) [][]byte {
	out := slices.Clone(cfg.Secrets)
	out = append(out, secretValues(cfg.Header)...)
	if base.User != nil {
		if p, ok := base.User.Password(); ok {
			out = append(out, []byte(p))
		}
	}
	return out
}
