package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// env returns a lookup over a map, as tests use in place of os.LookupEnv.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// settingErrors returns the *SettingErrors inside err, in order.
func settingErrors(t *testing.T, err error) []SettingError {
	t.Helper()
	if err == nil {
		return nil
	}
	var out []SettingError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var se *SettingError
		if !errors.As(e, &se) {
			t.Fatalf("error %v is not a *SettingError", e)
		}
		out = append(out, *se)
	}
	return out
}

// expectErr checks that Err() holds exactly one error, for name, whose
// problem contains want; want == "" means no error.
func expectErr(t *testing.T, l *Loader, name, want string) {
	t.Helper()
	errs := settingErrors(t, l.Err())
	if want == "" {
		if len(errs) != 0 {
			t.Fatalf("unexpected errors: %v", l.Err())
		}
		return
	}
	if len(errs) != 1 || errs[0].Name != name || !strings.Contains(errs[0].Problem, want) {
		t.Fatalf("errors = %v, want one for %s containing %q", l.Err(), name, want)
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"set", map[string]string{"X": "value"}, "value"},
		{"kept as is", map[string]string{"X": " v "}, " v "},
		{"unset uses default", nil, "def"},
		{"empty uses default", map[string]string{"X": ""}, "def"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(env(tt.env))
			if got := l.String("X", "def"); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			expectErr(t, l, "", "")
		})
	}
}

func TestRequired(t *testing.T) {
	tests := []struct {
		name, want, err string
		env             map[string]string
	}{
		{"set", "v", "", map[string]string{"X": "v"}},
		{"unset", "", "is required", nil},
		{"empty", "", "is required", map[string]string{"X": ""}},
		{"blank", "", "is required", map[string]string{"X": "  \t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(env(tt.env))
			if got := l.Required("X"); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			expectErr(t, l, "X", tt.err)
		})
	}
}

func TestBool(t *testing.T) {
	tests := []struct {
		in        string
		set       bool
		def, want bool
		err       string
	}{
		{"", false, true, true, ""},
		{"", true, true, true, ""},
		{"true", true, false, true, ""},
		{"TRUE", true, false, true, ""},
		{"1", true, false, true, ""},
		{" yes ", true, false, true, ""},
		{"false", true, true, false, ""},
		{"0", true, true, false, ""},
		{"No", true, true, false, ""},
		{"on", true, true, true, "must be one of true, false"},
		{"2", true, false, false, "must be one of"},
		{"tru", true, false, false, "must be one of"},
	}
	for _, tt := range tests {
		m := map[string]string{}
		if tt.set {
			m["FLAG"] = tt.in
		}
		l := New(env(m))
		if got := l.Bool("FLAG", tt.def); got != tt.want {
			t.Errorf("Bool(%q, %v) = %v, want %v", tt.in, tt.def, got, tt.want)
		}
		expectErr(t, l, "FLAG", tt.err)
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		in   string
		set  bool
		want int
		err  string
	}{
		{"", false, 5, ""},
		{"", true, 5, ""},
		{"1", true, 1, ""},
		{"10", true, 10, ""},
		{" 7 ", true, 7, ""},
		{"-3", true, -3, ""},
		{"11", true, 5, "must be between -3 and 10"},
		{"-4", true, 5, "must be between -3 and 10"},
		{"1.5", true, 5, "must be an integer between -3 and 10"},
		{"0x10", true, 5, "must be an integer"},
		{"99999999999999999999999", true, 5, "must be an integer"},
		{"ten", true, 5, "must be an integer"},
	}
	for _, tt := range tests {
		m := map[string]string{}
		if tt.set {
			m["N"] = tt.in
		}
		l := New(env(m))
		if got := l.Int("N", 5, -3, 10); got != tt.want {
			t.Errorf("Int(%q) = %v, want %v", tt.in, got, tt.want)
		}
		expectErr(t, l, "N", tt.err)
	}
}

func TestDuration(t *testing.T) {
	tests := []struct {
		in   string
		set  bool
		want time.Duration
		err  string
	}{
		{"", false, time.Minute, ""},
		{"30s", true, 30 * time.Second, ""},
		{"1h30m", true, 90 * time.Minute, ""},
		{"250ms", true, 250 * time.Millisecond, ""},
		{"0s", true, time.Minute, "greater than zero"},
		{"-5s", true, time.Minute, "greater than zero"},
		{"30", true, time.Minute, "must be a duration"},
		{"soon", true, time.Minute, "must be a duration"},
	}
	for _, tt := range tests {
		m := map[string]string{}
		if tt.set {
			m["D"] = tt.in
		}
		l := New(env(m))
		if got := l.Duration("D", time.Minute); got != tt.want {
			t.Errorf("Duration(%q) = %v, want %v", tt.in, got, tt.want)
		}
		expectErr(t, l, "D", tt.err)
	}
}

func TestURL(t *testing.T) {
	tests := []struct {
		name, in string
		set      bool
		def      string
		want     string // "" means nil
		err      string
	}{
		{"http", "http://sonarr:8989", true, "", "http://sonarr:8989", ""},
		{"https with path", "https://h.example/api/", true, "", "https://h.example/api/", ""},
		{"upper-case scheme", "HTTPS://h", true, "", "https://h", ""},
		{"trimmed", " http://h ", true, "", "http://h", ""},
		{"unset no default", "", false, "", "", ""},
		{"unset default", "", false, "http://d:1", "http://d:1", ""},
		{"empty default", "", true, "http://d:1", "http://d:1", ""},
		{"bad default", "", false, "ftp://d", "", "absolute http"},
		{"no scheme", "sonarr:8989", true, "", "", "absolute http"},
		{"relative", "/api", true, "", "", "absolute http"},
		{"ftp", "ftp://h/", true, "", "", "absolute http"},
		{"no host", "http:///path", true, "", "", "absolute http"},
		{"port only", "http://:80", true, "", "", "absolute http"},
		{"opaque", "http:h", true, "", "", "absolute http"},
		{"unparsable", "http://h\x7f/", true, "", "", "absolute http"},
		{"userinfo", "https://user:pw@h/", true, "", "", "must not contain user:password@"},
		{"user only", "https://user@h/", true, "", "", "must not contain user:password@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]string{}
			if tt.set {
				m["U"] = tt.in
			}
			l := New(env(m))
			got := l.URL("U", tt.def)
			if tt.want == "" && got != nil || tt.want != "" && (got == nil || got.String() != tt.want) {
				t.Fatalf("URL = %v, want %q", got, tt.want)
			}
			expectErr(t, l, "U", tt.err)
		})
	}
}

// writeFile writes content into a new file in dir and returns its path.
func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecret(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := writeFile(t, dir, "unreadable", []byte("x"))
	if err := os.Chmod(unreadable, 0); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(dir, "link")
	if err := os.Symlink(writeFile(t, dir, "target", []byte("via-link\n")), linked); err != nil {
		t.Fatal(err)
	}
	type secretCase struct {
		name string
		env  map[string]string
		want string
		err  string // problem substring; "" = no error
		errN string // setting named by the error
	}
	tests := []secretCase{
		{"plain", map[string]string{"K_FILE": writeFile(t, dir, "plain", []byte("abc"))}, "abc", "", ""},
		{"trailing newline", map[string]string{"K_FILE": writeFile(t, dir, "nl", []byte("abc\n"))}, "abc", "", ""},
		{"trailing crlf", map[string]string{"K_FILE": writeFile(t, dir, "crlf", []byte("abc\r\n\r\n"))}, "abc", "", ""},
		{"inner newline and spaces kept", map[string]string{"K_FILE": writeFile(t, dir, "multi", []byte(" a\nb \n"))}, " a\nb ", "", ""},
		{"exactly 64 KiB", map[string]string{"K_FILE": writeFile(t, dir, "max", bytes.Repeat([]byte("a"), MaxSecretSize))}, strings.Repeat("a", MaxSecretSize), "", ""},
		{"symlink", map[string]string{"K_FILE": linked}, "via-link", "", ""},
		{"unset", nil, "", "is required", "K_FILE"},
		{"empty path", map[string]string{"K_FILE": ""}, "", "is required", "K_FILE"},
		{"missing file", map[string]string{"K_FILE": filepath.Join(dir, "nope")}, "", "does not exist", "K_FILE"},
		{"empty file", map[string]string{"K_FILE": writeFile(t, dir, "empty", nil)}, "", "empty file", "K_FILE"},
		{"newline only", map[string]string{"K_FILE": writeFile(t, dir, "nlonly", []byte("\r\n"))}, "", "empty file", "K_FILE"},
		{"oversize", map[string]string{"K_FILE": writeFile(t, dir, "big", bytes.Repeat([]byte("a"), MaxSecretSize+1))}, "", "larger than 64 KiB", "K_FILE"},
		{"directory", map[string]string{"K_FILE": dir}, "", "regular file", "K_FILE"},
		{"fifo", map[string]string{"K_FILE": fifo}, "", "regular file", "K_FILE"},
		{"device", map[string]string{"K_FILE": "/dev/zero"}, "", "regular file", "K_FILE"},
	}
	if os.Geteuid() != 0 { // root reads anything
		tests = append(tests, secretCase{"permission", map[string]string{"K_FILE": unreadable}, "", "permission denied", "K_FILE"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(env(tt.env))
			got := l.Secret("K")
			if string(got) != tt.want {
				t.Fatalf("Secret = %.40q, want %.40q", got, tt.want)
			}
			expectErr(t, l, tt.errN, tt.err)

			// OptionalSecret: the same, except that unset is no error.
			l = New(env(tt.env))
			got, ok := l.OptionalSecret("K")
			if string(got) != tt.want || ok != (tt.want != "") {
				t.Fatalf("OptionalSecret = %.40q, %v", got, ok)
			}
			if tt.err == "is required" {
				expectErr(t, l, "", "")
			} else {
				expectErr(t, l, tt.errN, tt.err)
			}
		})
	}
}

func TestSecretRejectsPlainEnv(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		env     map[string]string
		want    []SettingError
		wantVal string
	}{
		{"plain only", map[string]string{"K": "v"}, []SettingError{
			{"K", "must not hold a secret in the environment; set K_FILE instead of K"},
			{"K_FILE", "is required: set it to the path of a file holding K"},
		}, ""},
		{"plain and file", map[string]string{"K": "v", "K_FILE": writeFile(t, dir, "k", []byte("f"))}, []SettingError{
			{"K", "must not hold a secret in the environment; set K_FILE instead of K"},
		}, "f"},
		{"empty plain is ignored", map[string]string{"K": "", "K_FILE": writeFile(t, dir, "k2", []byte("f"))}, nil, "f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(env(tt.env))
			if got := l.Secret("K"); string(got) != tt.wantVal {
				t.Fatalf("Secret = %q, want %q", got, tt.wantVal)
			}
			if got := settingErrors(t, l.Err()); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("errors = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestErrReportsAllProblems checks that every bad setting is reported at
// once, in call order, each naming its setting.
func TestErrReportsAllProblems(t *testing.T) {
	l := New(env(map[string]string{
		"GOOD_URL": "http://h",
		"BAD_URL":  "nope",
		"BAD_BOOL": "maybe",
		"BAD_INT":  "x",
		"BAD_DUR":  "-1s",
		"TOKEN":    "plain",
	}))
	l.URL("GOOD_URL", "")
	l.URL("BAD_URL", "")
	l.Bool("BAD_BOOL", false)
	l.Int("BAD_INT", 1, 0, 9)
	l.Duration("BAD_DUR", time.Second)
	l.Required("MISSING")
	l.OptionalSecret("TOKEN")
	l.Secret("API_KEY")

	err := l.Err()
	var names []string
	for _, se := range settingErrors(t, err) {
		names = append(names, se.Name)
		if !strings.Contains(err.Error(), se.Name+": "+se.Problem) {
			t.Errorf("Err() text lacks %q", se.Name+": "+se.Problem)
		}
	}
	want := []string{"BAD_URL", "BAD_BOOL", "BAD_INT", "BAD_DUR", "MISSING", "TOKEN", "API_KEY_FILE"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("error names = %v, want %v", names, want)
	}
	var se *SettingError
	if !errors.As(err, &se) || se.Name != "BAD_URL" {
		t.Fatalf("errors.As found %v", se)
	}
	if got := strings.Count(err.Error(), "\n") + 1; got != len(want) {
		t.Fatalf("Err() has %d lines, want %d:\n%v", got, len(want), err)
	}
}

func TestErrNilWhenFine(t *testing.T) {
	dir := t.TempDir()
	l := New(env(map[string]string{"U": "https://h", "K_FILE": writeFile(t, dir, "k", []byte("s\n"))}))
	l.URL("U", "")
	l.Secret("K")
	l.String("S", "d")
	l.Bool("B", true)
	l.Int("I", 1, 0, 2)
	l.Duration("D", time.Second)
	if err := l.Err(); err != nil {
		t.Fatalf("Err() = %v", err)
	}
}

// TestNoValueInErrors plants a distinctive canary in every place a value
// can come from, drives every error path, and checks that no error text
// contains it (or a large piece of it).
func TestNoValueInErrors(t *testing.T) {
	const canary = "CANARY-7f3a9e-s3cr3t-v4lue"
	dir := t.TempDir()
	// A directory named after the canary: the path must not be echoed either.
	cdir := filepath.Join(dir, canary)
	if err := os.Mkdir(cdir, 0o700); err != nil {
		t.Fatal(err)
	}
	big := append([]byte(canary), bytes.Repeat([]byte("x"), MaxSecretSize)...)
	m := map[string]string{
		"PLAIN":          canary,                                     // secret in plain env
		"PLAIN_FILE":     writeFile(t, cdir, "ok", []byte(canary)),   // good file, plain also set
		"MISSING_FILE":   filepath.Join(cdir, "missing"),             // file does not exist
		"EMPTY_FILE":     writeFile(t, cdir, "empty", nil),           // empty file
		"BIG_FILE":       writeFile(t, cdir, "big", big),             // oversize
		"DIR_FILE":       cdir,                                       // directory
		"PASTED_FILE":    canary,                                     // secret pasted into _FILE
		"OPT_FILE":       writeFile(t, cdir, "empty2", []byte("\n")), // optional, empty
		"URL_USERINFO":   "https://admin:" + canary + "@h/",          // credentials in URL
		"URL_BAD":        "http://" + canary + "\x00/",               // unparsable
		"URL_SCHEME":     canary + "://h",                            // wrong scheme
		"INT_BAD":        canary,                                     // malformed int
		"INT_RANGE":      "123456789",                                // out of range
		"BOOL_BAD":       canary,                                     // malformed bool
		"DUR_BAD":        canary,                                     // malformed duration
		"REQUIRED_BLANK": " ",                                        // blank required
	}
	l := New(env(m))
	l.Secret("PLAIN")
	l.Secret("MISSING")
	l.Secret("EMPTY")
	l.Secret("BIG")
	l.Secret("DIR")
	l.Secret("PASTED")
	l.OptionalSecret("OPT")
	l.URL("URL_USERINFO", "")
	l.URL("URL_BAD", "")
	l.URL("URL_SCHEME", "")
	l.Int("INT_BAD", 0, 0, 10)
	l.Int("INT_RANGE", 0, 0, 10)
	l.Bool("BOOL_BAD", false)
	l.Duration("DUR_BAD", time.Second)
	l.Required("REQUIRED_BLANK")

	err := l.Err()
	if got := len(settingErrors(t, err)); got != 15 {
		t.Fatalf("got %d errors, want 15:\n%v", got, err)
	}
	text := err.Error()
	for i := 0; i+8 <= len(canary); i++ {
		if piece := canary[i : i+8]; strings.Contains(text, piece) {
			t.Fatalf("error text contains %q from a value:\n%s", piece, text)
		}
	}
	if strings.Contains(text, dir) {
		t.Fatalf("error text contains a file path:\n%s", text)
	}
}

func TestPickOlderNames(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string // the setting named in the error
	}{
		{name: "neither set", want: "NEW"},
		{name: "new name", env: map[string]string{"NEW": "a"}, want: "NEW"},
		{name: "older name", env: map[string]string{"OLD": "a"}, want: "OLD"},
		{name: "empty older name is unset", env: map[string]string{"NEW": "a", "OLD": ""}, want: "NEW"},
		{name: "both", env: map[string]string{"NEW": "a", "OLD": "b"}, want: "NEW", wantErr: "OLD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(env(c.env))
			if got := l.Pick("NEW", "OLD", ""); got != c.want {
				t.Errorf("Pick = %s, want %s", got, c.want)
			}
			if c.wantErr == "" {
				if err := l.Err(); err != nil {
					t.Fatal(err)
				}
				return
			}
			expectErr(t, l, c.wantErr, "set only one")
		})
	}
}

func TestFailRecordsAContradiction(t *testing.T) {
	l := New(env(nil))
	l.Fail("A_ALLOW_HTTP", "must be true when A_URL uses plain http://")
	expectErr(t, l, "A_ALLOW_HTTP", "A_URL uses plain http")
}

func TestFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "ca.pem", []byte("pem"))
	cases := []struct {
		name, value, want, wantErr string
	}{
		{name: "unset"},
		{name: "readable file", value: file, want: file},
		{name: "missing", value: filepath.Join(dir, "gone-4f4f"), wantErr: "does not exist"},
		{name: "a directory", value: dir, wantErr: "regular file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := New(env(map[string]string{"X_CA_FILE": c.value}))
			if got := l.File("X_CA_FILE"); got != c.want {
				t.Errorf("File = %q, want %q", got, c.want)
			}
			if c.wantErr == "" {
				if err := l.Err(); err != nil {
					t.Fatal(err)
				}
				return
			}
			expectErr(t, l, "X_CA_FILE", c.wantErr)
			if strings.Contains(l.Err().Error(), dir) {
				t.Errorf("error echoes the path: %v", l.Err())
			}
		})
	}
}
