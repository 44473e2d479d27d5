package main

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/gateway/auth"
)

// The running gateway process follows its tokens file, as install.sh's
// switches need: a token written into the file is accepted on its first
// request, a removed one is refused within a couple of seconds with
// nothing restarted, and a broken file keeps the clients loaded before and
// says so on stderr by line number, with no token or hash in the log.
func TestTheGatewayProcessFollowsItsTokensFile(t *testing.T) {
	r := newRestartRig(t)
	tokensFile := ""
	for _, e := range r.env {
		if v, ok := strings.CutPrefix(e, "TOOLGATE_CLIENT_TOKENS_FILE="); ok {
			tokensFile = v
		}
	}
	first, err := os.ReadFile(tokensFile)
	if err != nil {
		t.Fatal(err)
	}
	status := func(token string) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(tokensFile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// eventually waits for the gateway's periodic read.
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s\n%s", what, r.proc.Output)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	demo, demoLine, err := auth.NewToken("demo-admin", []string{"admins"}, auth.UserNone)
	if err != nil {
		t.Fatal(err)
	}
	write(string(first) + demoLine + "\n")
	if code := status(demo); code == http.StatusUnauthorized {
		t.Fatalf("a token written into the file: HTTP %d on its first request", code)
	}

	write(string(first))
	eventually("the removed token refused", func() bool { return status(demo) == http.StatusUnauthorized })
	if code := status(r.token); code == http.StatusUnauthorized {
		t.Fatalf("the token that stayed: HTTP %d", code)
	}

	_, brokenLine, err := auth.NewToken("hermes", []string{"users"}, auth.UserNone)
	if err != nil {
		t.Fatal(err)
	}
	write(brokenLine + "\nsha256:0123 broken users\n")
	eventually("the broken file logged", func() bool { return strings.Contains(r.proc.Output.String(), "client tokens file not reloaded") })
	if code := status(r.token); code == http.StatusUnauthorized {
		t.Errorf("after a broken file the clients loaded before are refused: HTTP %d", code)
	}
	logs := r.proc.Output.String()
	if !strings.Contains(logs, "tokens line 2") {
		t.Errorf("the log does not name the bad line:\n%s", logs)
	}
	for _, secret := range []string{r.token, demo, demoLine[:71], brokenLine[:71]} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds a token or a hash:\n%s", logs)
		}
	}
}
