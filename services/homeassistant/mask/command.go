package mask

import (
	"regexp"
	"strings"
)

// Credentials on command lines: shell_command, command_line sensors and
// switches run programs whose arguments can carry them.

// cmdArg is one argument: quoted, or a run of non-blanks.
const cmdArg = `("[^"\n]*"|'[^'\n]*'|[^\s'"]+)`

var (
	// userOption is curl's and wget's -u/--user user:password (also
	// written -uuser:pass or --user=user:pass), --proxy-user, and
	// smbclient's -U user%password.
	userOption = regexp.MustCompile(`(?:^|[\s'"(;|&])(?:-u|-U|--user|--proxy-user|--http-user|--ftp-user)(?:[ \t]+|=)?` + cmdArg)
	// longOption is --name value, space-separated; the name decides.
	longOption = regexp.MustCompile(`(?:^|[\s'"(;|&])--([A-Za-z0-9][A-Za-z0-9_-]*)[ \t]+` + cmdArg)
	// toolOptions are the short password options of common tools, each
	// only on a line that runs the tool.
	toolOptions = []struct {
		tool string
		opt  *regexp.Regexp
	}{
		{"sshpass", regexp.MustCompile(`(?:^|\s)-p[ \t]*` + cmdArg)},
		{"mosquitto_", regexp.MustCompile(`(?:^|\s)-P[ \t]*` + cmdArg)},
		{"mysql", regexp.MustCompile(`(?:^|\s)-p` + cmdArg)},
		{"mariadb", regexp.MustCompile(`(?:^|\s)-p` + cmdArg)},
		{"redis-cli", regexp.MustCompile(`(?:^|\s)-a[ \t]+` + cmdArg)},
		{"openssl", regexp.MustCompile(`(?:^|\s)-pass(?:in|out)[ \t]+(?:pass|env|file):` + cmdArg)},
	}
)

// commandLines hides the credentials of command-line options. Each
// pattern runs only on text that holds its literal part.
func commandLines(s string, hide func(from, to int)) {
	if !strings.Contains(s, "-") {
		return
	}
	if strings.Contains(s, "-u") || strings.Contains(s, "-U") || strings.Contains(s, "-user") {
		for _, m := range userOption.FindAllStringSubmatchIndex(s, -1) {
			if c := strings.IndexAny(s[m[2]:m[3]], ":%"); c >= 0 {
				hide(m[2]+c+1, unquotedEnd(s, m[2], m[3]))
			}
		}
	}
	if strings.Contains(s, "--") {
		for _, m := range longOption.FindAllStringSubmatchIndex(s, -1) {
			if IsSecretKey(s[m[2]:m[3]]) {
				hide(unquotedStart(s, m[4], m[5]), unquotedEnd(s, m[4], m[5]))
			}
		}
	}
	for _, o := range toolOptions {
		if !strings.Contains(s, o.tool) {
			continue
		}
		var on lineWith
		for _, m := range o.opt.FindAllStringSubmatchIndex(s, -1) {
			if on.names(s, m[2], o.tool) {
				hide(unquotedStart(s, m[2], m[3]), unquotedEnd(s, m[2], m[3]))
			}
		}
	}
}

// unquotedStart and unquotedEnd keep an argument's quotes visible.
func unquotedStart(s string, from, to int) int {
	if to-from >= 2 && (s[from] == '"' || s[from] == '\'') && s[to-1] == s[from] {
		return from + 1
	}
	return from
}

func unquotedEnd(s string, from, to int) int {
	if to-from >= 2 && (s[from] == '"' || s[from] == '\'') && s[to-1] == s[from] {
		return to - 1
	}
	return to
}

// lineWith remembers the line of the last offset asked about, so the
// matches on one long line look at it once.
type lineWith struct {
	start, end int
	has, valid bool
}

// names reports whether the line holding off names tool.
func (l *lineWith) names(s string, off int, tool string) bool {
	if !l.valid || off >= l.end {
		l.start = strings.LastIndexByte(s[:off], '\n') + 1
		l.end = len(s)
		if e := strings.IndexByte(s[off:], '\n'); e >= 0 {
			l.end = off + e
		}
		l.has, l.valid = strings.Contains(s[l.start:l.end], tool), true
	}
	return l.has
}
