// Package config reads a service's settings from environment variables and
// its secrets from files.
//
// A secret NAME is never taken from the environment value NAME: it is read
// from the file named by NAME_FILE (for example
// SONARR_API_KEY_FILE=/run/secrets/sonarr_api_key), so it does not show up
// in `docker inspect`, /proc/<pid>/environ or crash dumps of the
// environment.
//
// A Loader collects every problem instead of stopping at the first, so an
// operator sees all bad settings in one start-up error. Error messages name
// the setting and the expected format but never echo a value: a value
// might be a secret pasted into the wrong variable.
package config

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// MaxSecretSize is the largest secret file accepted. Tokens and keys are far
// smaller; a bigger file is a wrong path (a log, a device).
const MaxSecretSize = 64 << 10

// SettingError is one problem with one setting.
type SettingError struct {
	// Name is the environment variable, e.g. "SONARR_URL" or
	// "SONARR_API_KEY_FILE".
	Name string
	// Problem says what is wrong and what is expected; it never contains
	// the value.
	Problem string
}

func (e *SettingError) Error() string { return e.Name + ": " + e.Problem }

// Loader reads settings through a lookup function and records problems.
// It is meant for start-up and is not safe for concurrent use.
type Loader struct {
	lookup func(string) (string, bool)
	errs   []error
}

// New returns a Loader that reads variables with lookup (os.LookupEnv in
// production, a map in tests).
func New(lookup func(string) (string, bool)) *Loader {
	return &Loader{lookup: lookup}
}

// FromEnv returns a Loader over the process environment.
func FromEnv() *Loader { return New(os.LookupEnv) }

// Err returns every recorded problem joined with errors.Join, each a
// *SettingError, or nil when all settings were fine.
func (l *Loader) Err() error { return errors.Join(l.errs...) }

func (l *Loader) fail(name, problem string) {
	l.errs = append(l.errs, &SettingError{Name: name, Problem: problem})
}

// Fail records a problem the Loader cannot see by itself (two settings
// that contradict each other). problem must not contain the value.
func (l *Loader) Fail(name, problem string) { l.fail(name, problem) }

// Set reports whether name is set to a non-empty value.
func (l *Loader) Set(name string) bool {
	_, ok := l.get(name)
	return ok
}

// Pick returns the name to read a setting from: name itself, or the first
// of its older aliases that is set when name is not. Setting a name and an
// alias at once is recorded as an error (which one was meant?).
func (l *Loader) Pick(name string, aliases ...string) string {
	picked := name
	for _, a := range aliases {
		if a == "" || !l.Set(a) {
			continue
		}
		if l.Set(picked) {
			l.fail(a, "is an older name of "+name+"; set only one of them")
			continue
		}
		picked = a
	}
	return picked
}

// get returns the value of name; unset and empty are both "not set", as
// compose files commonly pass empty variables through.
func (l *Loader) get(name string) (string, bool) {
	v, ok := l.lookup(name)
	if !ok || v == "" {
		return "", false
	}
	return v, true
}

// String returns the value of name, or def when it is unset or empty.
func (l *Loader) String(name, def string) string {
	if v, ok := l.get(name); ok {
		return v
	}
	return def
}

// Required returns the value of name and records an error when it is
// unset, empty or blank.
func (l *Loader) Required(name string) string {
	v, ok := l.get(name)
	if !ok || strings.TrimSpace(v) == "" {
		l.fail(name, "is required")
		return ""
	}
	return v
}

// Bool parses name as true/false, 1/0 or yes/no (any case), returning def
// when unset and recording an error for anything else.
func (l *Loader) Bool(name string, def bool) bool {
	v, ok := l.get(name)
	if !ok {
		return def
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes":
		return true
	case "false", "0", "no":
		return false
	}
	l.fail(name, "must be one of true, false, 1, 0, yes, no")
	return def
}

// Int parses name as a base-10 integer in [min, max], returning def when
// unset and recording an error when malformed or out of range.
func (l *Loader) Int(name string, def, min, max int) int {
	v, ok := l.get(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		l.fail(name, "must be an integer between "+strconv.Itoa(min)+" and "+strconv.Itoa(max))
		return def
	}
	if n < min || n > max {
		l.fail(name, "must be between "+strconv.Itoa(min)+" and "+strconv.Itoa(max))
		return def
	}
	return n
}

// Duration parses name in Go duration syntax ("30s", "1m30s"), returning
// def when unset and recording an error when malformed or not positive.
func (l *Loader) Duration(name string, def time.Duration) time.Duration {
	v, ok := l.get(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		l.fail(name, `must be a duration such as "30s", "5m" or "1h30m"`)
		return def
	}
	if d <= 0 {
		l.fail(name, "must be greater than zero")
		return def
	}
	return d
}

// URL parses name (or def when unset) as an absolute http or https URL and
// records an error otherwise. A URL with user:password@ is rejected:
// credentials belong in secret files. It returns nil when name is unset
// and def is empty, or on error.
func (l *Loader) URL(name, def string) *url.URL {
	v, ok := l.get(name)
	if !ok {
		if def == "" {
			return nil
		}
		v = def
	}
	u, err := url.Parse(strings.TrimSpace(v))
	switch {
	case err != nil, u.Scheme != "http" && u.Scheme != "https", u.Hostname() == "", u.Opaque != "":
		// url.Parse errors quote the input, so they are not passed on.
		l.fail(name, "must be an absolute http:// or https:// URL with a host")
		return nil
	case u.User != nil:
		l.fail(name, "must not contain user:password@; put credentials in a secret file")
		return nil
	}
	return u
}

// File returns the value of name as the path of a readable regular file
// (a CA bundle, say), or "" when unset; a path that is missing, unreadable
// or no regular file is recorded, without the path.
func (l *Loader) File(name string) string {
	path, ok := l.get(name)
	if !ok {
		return ""
	}
	fi, err := os.Stat(path)
	if err == nil && !fi.Mode().IsRegular() {
		l.fail(name, "does not name a regular file")
		return ""
	}
	if err == nil {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			f.Close()
		}
	}
	if err != nil {
		l.fail(name, fileProblem(err))
		return ""
	}
	return path
}

// Secret returns the required secret NAME read from the file at NAME_FILE,
// recording an error when NAME_FILE is unset or the file is unusable, and
// also when the plain variable NAME is set.
func (l *Loader) Secret(name string) []byte {
	b, ok := l.secret(name)
	if !ok && !l.hasFile(name) {
		l.fail(name+"_FILE", "is required: set it to the path of a file holding "+name)
	}
	return b
}

// OptionalSecret is Secret for an optional secret: it returns (nil, false)
// without an error when NAME_FILE is unset. A set but unusable file, or a
// plain NAME, is still an error.
func (l *Loader) OptionalSecret(name string) ([]byte, bool) {
	return l.secret(name)
}

func (l *Loader) hasFile(name string) bool {
	_, ok := l.get(name + "_FILE")
	return ok
}

func (l *Loader) secret(name string) ([]byte, bool) {
	if _, plain := l.get(name); plain {
		l.fail(name, "must not hold a secret in the environment; set "+name+"_FILE instead of "+name)
	}
	fileVar := name + "_FILE"
	path, ok := l.get(fileVar)
	if !ok {
		return nil, false
	}
	b, problem := readSecretFile(path)
	if problem != "" {
		l.fail(fileVar, problem)
		return nil, false
	}
	return b, true
}

// readSecretFile reads a secret file and trims its trailing line ending. It
// returns a problem description, free of the path and the content, or "".
func readSecretFile(path string) ([]byte, string) {
	// Stat before opening: opening a FIFO would block start-up.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fileProblem(err)
	}
	if !fi.Mode().IsRegular() {
		return nil, "does not name a regular file"
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fileProblem(err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSecretSize+1))
	if err != nil {
		return nil, "names a file that cannot be read"
	}
	if len(b) > MaxSecretSize {
		return nil, "names a file larger than 64 KiB"
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) == 0 {
		return nil, "names an empty file"
	}
	return b, ""
}

// fileProblem describes an os error without its text, which holds the path.
func fileProblem(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "names a file that does not exist"
	case errors.Is(err, fs.ErrPermission):
		return "names a file that cannot be read (permission denied)"
	default:
		return "names a file that cannot be read"
	}
}
