package app_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/services/gateway/admin"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/auth"
)

// tokensFileRig is the harness's gateway following a tokens file of its
// own, with one client token in it ("demo-admin", group admins).
type tokensFileRig struct {
	*harness
	path  string
	token string
	line  string
}

func newTokensFileRig(t *testing.T) *tokensFileRig {
	t.Helper()
	r := &tokensFileRig{path: filepath.Join(t.TempDir(), "client_tokens")}
	r.token, r.line = mintLine(t, "demo-admin", "admins")
	r.write(t, r.line)
	r.harness = newHarness(t, func(c *app.Config) { c.TokensFile = r.path })
	if r.gw.Tokens == nil {
		t.Fatal("the gateway does not follow its tokens file")
	}
	return r
}

func mintLine(t *testing.T, name, group string) (token, line string) {
	t.Helper()
	token, line, err := auth.NewToken(name, []string{group}, auth.UserNone)
	if err != nil {
		t.Fatal(err)
	}
	return token, line
}

// write rewrites the tokens file in place, as install.sh does.
func (r *tokensFileRig) write(t *testing.T, lines ...string) {
	t.Helper()
	if err := os.WriteFile(r.path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// send posts one JSON-RPC body to /mcp with token and session (either may
// be ""), with the headers of a client of the 2025-06-18 revision.
func (r *tokensFileRig) send(t *testing.T, token, session, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, r.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// open initializes a session with token and returns its id.
func (r *tokensFileRig) open(t *testing.T, token string) string {
	t.Helper()
	res, body := r.send(t, token, "", initializeBody)
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: HTTP %d %s", res.StatusCode, body)
	}
	if res, body := r.send(t, token, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); res.StatusCode >= 300 {
		t.Fatalf("initialized: HTTP %d %s", res.StatusCode, body)
	}
	return id
}

const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

// The install.sh switch, through the gateway's front: a token written into
// the file works on its first request; a session opened with a token that
// is then removed stops working at once, also for a new token minted under
// the same name (sessions belong to the token, not the name), whose own
// session works.
func TestTokensFileChangesTakeEffectWhileTheGatewayRuns(t *testing.T) {
	r := newTokensFileRig(t)
	session := r.open(t, r.token)
	if res, body := r.send(t, r.token, session, listBody); res.StatusCode != http.StatusOK || !strings.Contains(body, "demo_echo") {
		t.Fatalf("tools/list in the session: HTTP %d %s", res.StatusCode, body)
	}

	// A new client, minted into the file: accepted on its first request.
	hermes, hermesLine := mintLine(t, "hermes", "users")
	r.write(t, r.line, hermesLine)
	if res, body := r.send(t, hermes, "", initializeBody); res.StatusCode != http.StatusOK {
		t.Fatalf("the token just added: HTTP %d %s", res.StatusCode, body)
	}

	// demo-admin removed: refused, its session too.
	r.write(t, hermesLine)
	r.gw.Tokens.Check()
	if res, _ := r.send(t, r.token, session, listBody); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the removed token in its session: HTTP %d, want 401", res.StatusCode)
	}
	if n := r.gw.Sessions.CountFor("demo-admin"); n != 0 {
		t.Errorf("the removed token's client still holds %d sessions", n)
	}

	// demo-admin minted again (a later --demo run): the new token does not
	// get the old session; a session of its own works.
	again, againLine := mintLine(t, "demo-admin", "admins")
	r.write(t, hermesLine, againLine)
	if res, body := r.send(t, again, session, listBody); res.StatusCode == http.StatusOK {
		t.Fatalf("the new demo-admin token uses the removed token's session: HTTP %d %s", res.StatusCode, body)
	}
	fresh := r.open(t, again)
	if res, body := r.send(t, again, fresh, listBody); res.StatusCode != http.StatusOK || !strings.Contains(body, "demo_echo") {
		t.Fatalf("the new token's own session: HTTP %d %s", res.StatusCode, body)
	}
}

// A session's event stream (GET, held open for notifications) ends when
// its token is removed.
func TestAnEventStreamEndsWithItsToken(t *testing.T) {
	r := newTokensFileRig(t)
	session := r.open(t, r.token)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET stream: HTTP %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, bufio.NewReader(res.Body))
		ended <- err
	}()
	select {
	case err := <-ended:
		t.Fatalf("the stream ended before the token was removed: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	_, other := mintLine(t, "hermes", "users")
	r.write(t, other)
	r.gw.Tokens.Check()
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the removed token's event stream is still open")
	}
}

// `gateway policy explain` and the console's form know the clients as the
// tokens file has them now: one written in after the start is explained,
// one taken out is not.
func TestExplainFollowsTheTokensFile(t *testing.T) {
	r := newTokensFileRig(t)
	cli := &admin.CLI{BaseURL: r.AdminURL, Token: []byte(adminToken), HTTPClient: http.DefaultClient}
	explain := func(client string) error {
		t.Helper()
		cli.Out = io.Discard
		return cli.Run(t.Context(), []string{"policy", "explain", "--client", client, "demo_echo", `{"text":"hi"}`})
	}
	if err := explain("hermes"); err == nil {
		t.Fatal("a client the tokens file does not name was explained")
	}
	_, hermesLine := mintLine(t, "hermes", "users")
	r.write(t, r.line, hermesLine)
	r.gw.Tokens.Check()
	if err := explain("hermes"); err != nil {
		t.Fatalf("the client written into the tokens file: %v", err)
	}
	r.write(t, hermesLine)
	r.gw.Tokens.Check()
	if err := explain("demo-admin"); err == nil {
		t.Fatal("the client taken out of the tokens file is still explained")
	}
}
