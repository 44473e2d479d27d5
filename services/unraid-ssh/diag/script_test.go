package diag

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/services/unraid-ssh/diag/sshdtest"
)

// shells that run the script: Debian's /bin/sh (dash) as the sshd tests
// do, and bash, which is /bin/sh on Unraid. Those missing are skipped.
var shells = []string{"dash", "bash", "busybox"}

// runScript runs the shipped script as sshd would, with request in
// SSH_ORIGINAL_COMMAND, under shell.
func runScript(t *testing.T, shell, request, syslog string) (stdout, stderr string, status int) {
	t.Helper()
	args := []string{sshdtest.Script(t)}
	if shell == "busybox" {
		args = append([]string{"sh"}, args...)
	}
	cmd := exec.Command(shell, args...)
	cmd.Env = []string{"SSH_ORIGINAL_COMMAND=" + request, "TOOLGATE_DIAG_SYSLOG=" + syslog, "PATH=" + os.Getenv("PATH")}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		status = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), status
}

// Line numbers are decimal however they are written: a leading zero
// never makes one octal (`syslog 5 010` reads lines 10-14, not 8-12),
// and no spelling makes the shell fail instead of the script refusing
// (`08` once aborted the arithmetic with a shell error).
func TestLineNumbersAreDecimalOrRefused(t *testing.T) {
	var syslog strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&syslog, "line %d\n", i)
	}
	file := filepath.Join(t.TempDir(), "syslog")
	if err := os.WriteFile(file, []byte(syslog.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	window := func(from, n int) string {
		var b strings.Builder
		for i := from; i < from+n && i <= 300; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	cases := []struct {
		request string
		want    string // the lines shown; "" means refused
	}{
		{"syslog 5 010", window(10, 5)},
		{"syslog 5 08", window(8, 5)},
		{"syslog 5 09", window(9, 5)},
		{"syslog 08 5", window(5, 8)},
		{"syslog 010 1", window(1, 10)},
		{"syslog 010", window(291, 10)},
		{"syslog 5 0000000000000000000000010", window(10, 5)},
		{"syslog 0005 00000100", window(100, 5)},
		{"syslog  5   12", window(12, 5)},
		{"syslog 5 0", ""},
		{"syslog 5 000", ""},
		{"syslog 0 5", ""},
		{"syslog 5 0x10", ""},
		{"syslog 5 0X10", ""},
		{"syslog 5 -1", ""},
		{"syslog -1", ""},
		{"syslog 5 +1", ""},
		{"syslog 5 1e3", ""},
		{"syslog 5 1.5", ""},
		{"syslog 5 10#10", ""},
		{"syslog 5 8#10", ""},
		{"syslog 5 2001 x", ""},
		{"syslog 2001", ""},
		{"syslog 5 100000001", ""},
		{"syslog 5 18446744073709551617", ""},
		{"syslog 5 99999999999999999999999999999999999999", ""},
		{"syslog 5 9223372036854775808", ""},
		{"syslog 5 １０", ""}, // fullwidth digits
		{"syslog 5 ١٠", ""}, // Arabic-Indic digits
		{"syslog 5 ₁₀", ""}, // subscript digits
		{"syslog 5 1０", ""}, // ASCII then fullwidth
		{"syslog 5 10\u00a0", ""},
		{"dmesg 0x10", ""},
		{"dmesg 1e3", ""},
		{"dmesg 99999999999999999999", ""},
		{"syslog +5", ""},
		{"syslog 0x10", ""},
		{"syslog 5 ", window(296, 5)},
		{" syslog 5", window(296, 5)},
		{"syslog 05", window(296, 5)},
		{"syslog -5", ""},
		{"syslog 5 1 ", window(1, 5)},
		{"", ""},
		{" ", ""},
		{"dmesg +5", ""},
		{"dmesg -0", ""},
	}
	for _, shell := range shells {
		if _, err := exec.LookPath(shell); err != nil {
			t.Logf("%s is not installed; skipped", shell)
			continue
		}
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s %q", shell, c.request), func(t *testing.T) {
				out, errOut, status := runScript(t, shell, c.request, file)
				body, ok := strings.CutPrefix(out, "toolgate-diag 1\n")
				if !ok {
					t.Fatalf("no protocol line: %q", out)
				}
				if c.want == "" {
					if status != 126 || !strings.HasPrefix(errOut, "toolgate-diag: refused: ") || strings.Count(errOut, "\n") != 1 || body != "" {
						t.Fatalf("want the script's refusal; got status %d, stdout %q, stderr %q", status, body, errOut)
					}
					return
				}
				if status != 0 || errOut != "" || body != c.want {
					t.Fatalf("status %d, stderr %q\n got %q\nwant %q", status, errOut, body, c.want)
				}
			})
		}
	}
}

// The same through the real sshd and /bin/sh, as a holder of the key
// would send it: a leading zero is decimal, other spellings get the
// script's refusal, never a shell error.
func TestLineNumbersAreDecimalThroughTheForcedCommand(t *testing.T) {
	srv := sshdtest.Start(t, sshdtest.Options{Syslog: syslogOf(300, 40)})
	c, _ := client(t, srv, srv.KnownHostsFile, 64<<10)
	for _, tc := range []struct {
		request string
		has     []string
		hasNot  []string
		refused bool
	}{
		{request: "syslog 2 010", has: []string{"line 10 ", "line 11 "}, hasNot: []string{"line 8 ", "line 12 "}},
		{request: "syslog 2 08", has: []string{"line 8 ", "line 9 "}, hasNot: []string{"line 10 "}},
		{request: "syslog 02 09", has: []string{"line 9 ", "line 10 "}, hasNot: []string{"line 11 "}},
		{request: "syslog 5 0x10", refused: true},
		{request: "syslog 5 1e3", refused: true},
		{request: "syslog 5 18446744073709551617", refused: true},
		{request: "syslog 5 -1", refused: true},
	} {
		t.Run(tc.request, func(t *testing.T) {
			t.Parallel()
			r, err := c.Run(t.Context(), tc.request)
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("want the script's refusal, got %v, %q", err, r.Output)
				}
				return
			}
			if err != nil || r.Status != 0 {
				t.Fatalf("%v, status %d", err, r.Status)
			}
			for _, h := range tc.has {
				if !strings.Contains(r.Output, h) {
					t.Errorf("missing %q in %q", h, r.Output)
				}
			}
			for _, h := range tc.hasNot {
				if strings.Contains(r.Output, h) {
					t.Errorf("unexpected %q in %q", h, r.Output)
				}
			}
		})
	}
}
