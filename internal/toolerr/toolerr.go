// Package toolerr defines the stable error codes that every toolgate tool
// result and gateway refusal carries, so clients and policies can branch on
// a code instead of parsing prose.
package toolerr

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error class.
type Code string

// The codes a tool result may carry. They are part of the public contract:
// never rename one.
const (
	NotFound            Code = "not_found"
	Forbidden           Code = "forbidden"
	InvalidArgument     Code = "invalid_argument"
	UpstreamUnavailable Code = "upstream_unavailable"
	Timeout             Code = "timeout"
	Busy                Code = "busy"
	AuthFailed          Code = "auth_failed"
	TooLarge            Code = "too_large"
	// Internal is used only when nothing more specific is known; its message
	// never carries the underlying error text.
	Internal Code = "internal"
)

// Error is an error with a stable code and a message that is safe to show to
// a client (it never holds upstream bodies or secrets).
type Error struct {
	Code    Code
	Message string
	// Err is the cause, kept for logs and errors.Is; it is never shown to
	// clients.
	Err error
}

// New returns an *Error with a formatted, client-safe message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with a client-safe message and a hidden cause.
func Wrap(code Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

func (e *Error) Error() string {
	return string(e.Code) + ": " + e.Message
}

// Unwrap returns the hidden cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so callers can
// write errors.Is(err, toolerr.New(toolerr.Busy, "")).
func (e *Error) Is(target error) bool {
	var t *Error
	if errors.As(target, &t) {
		return t.Code == e.Code
	}
	return false
}

// CodeOf returns the code of the first *Error in err's chain, or Internal.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// MessageOf returns the client-safe message of err: the message of the first
// *Error in its chain, or a generic text that hides the cause.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}
