package approvals

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

const adminToken = "admin-token-0123456789abcdef"

type decision struct{ id, decision, by, note string }

type recorder struct {
	mu  sync.Mutex
	got []decision
}

func (r *recorder) Decided(t tickets.Ticket, d, by, note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, decision{t.ID, d, by, note})
}

type rig struct {
	t       *testing.T
	clock   *fakeclock.Clock
	store   *tickets.Store
	page    *Page
	rec     *recorder
	srv     *httptest.Server
	pending tickets.Ticket
}

var binding = tickets.Binding{Client: "openwebui", User: "ann@example.org", UserRole: "user", Service: "demo", Tool: "demo_counter_reset", ArgsDigest: "sha256:a"}

func newRig(t *testing.T, cfg Config, tls bool) *rig {
	t.Helper()
	r := &rig{t: t, clock: fakeclock.New(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)), rec: &recorder{}}
	r.store = tickets.NewStore(r.clock.Now, 100, 0)
	var err error
	if cfg.AdminToken == nil {
		cfg.AdminToken = []byte(adminToken + "\n")
	}
	cfg.LinkKey = []byte("link-key-0123456789abcdef0123456789abcdef")
	r.page, err = New(cfg, Deps{Tickets: r.store, Recorder: r.rec, Now: r.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if tls {
		r.srv = httptest.NewTLSServer(r.page)
	} else {
		r.srv = httptest.NewServer(r.page)
	}
	t.Cleanup(r.srv.Close)
	r.pending, err = r.store.Issue(binding, "sha256:p", approval.Human, 10*time.Minute,
		json.RawMessage(`{"action":"reset","counter":{"from":7,"to":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so each answer can be checked.
func (r *rig) browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{
		Transport: r.srv.Client().Transport, Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func (r *rig) get(c *http.Client, path string) (*http.Response, string) {
	r.t.Helper()
	resp, err := c.Get(r.srv.URL + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (r *rig) post(c *http.Client, path string, form url.Values, hdr ...string) (*http.Response, string) {
	r.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func hidden(t *testing.T, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF field in:\n%s", body)
	}
	return m[1]
}

// signIn signs c in with token and returns the session's CSRF token.
func (r *rig) signIn(c *http.Client, token string) string {
	r.t.Helper()
	_, form := r.get(c, "/approvals/login")
	resp, body := r.post(c, "/approvals/login", url.Values{"csrf": {hidden(r.t, form)}, "token": {token}, "next": {"/approvals/"}})
	if resp.StatusCode != http.StatusSeeOther {
		r.t.Fatalf("sign-in: %d\n%s", resp.StatusCode, body)
	}
	_, list := r.get(c, "/approvals/")
	return hidden(r.t, list)
}

func TestEveryAnswerCarriesStrictSecurityHeaders(t *testing.T) {
	r := newRig(t, Config{}, false)
	c := r.browser()
	for _, path := range []string{"/approvals/login", "/approvals/", "/approvals/nope", "/approvals/link/forged.1.x", "/approvals/style.css"} {
		resp, _ := r.get(c, path)
		h := resp.Header
		if got := h.Get("Content-Security-Policy"); got != csp {
			t.Errorf("%s: CSP %q", path, got)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", path, h)
		}
	}
	// The policy allows no script at all, inline or not.
	for _, forbidden := range []string{"script-src", "unsafe-inline", "unsafe-eval", "*"} {
		if strings.Contains(csp, forbidden) {
			t.Errorf("CSP allows %q", forbidden)
		}
	}
	_, body := r.get(c, "/approvals/login")
	if strings.Contains(strings.ToLower(body), "<script") || strings.Contains(body, " on") && regexp.MustCompile(` on[a-z]+=`).MatchString(body) {
		t.Errorf("the page carries script:\n%s", body)
	}
}

func TestSessionCookieIsHttpOnlyStrictAndSecureOverTLS(t *testing.T) {
	for _, tc := range []struct {
		name       string
		tls        bool
		base       string
		wantSecure bool
	}{
		{"plain HTTP on loopback", false, "", false},
		{"served over TLS", true, "", true},
		{"behind a TLS proxy (https base URL)", false, "https://approvals.home.lan", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Config{BaseURL: tc.base}, tc.tls)
			c := r.browser()
			_, form := r.get(c, "/approvals/login")
			resp, _ := r.post(c, "/approvals/login", url.Values{"csrf": {hidden(t, form)}, "token": {adminToken}})
			var session *http.Cookie
			for _, ck := range resp.Cookies() {
				if ck.Name == sessionCookie {
					session = ck
				}
			}
			if session == nil {
				t.Fatalf("no session cookie: %v", resp.Header["Set-Cookie"])
			}
			if !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" || session.Secure != tc.wantSecure {
				t.Errorf("session cookie %+v", session)
			}
			if len(session.Value) < 40 {
				t.Errorf("session id of %d characters", len(session.Value))
			}
		})
	}
}

func TestSignIn(t *testing.T) {
	approvers, err := ParseApprovers(strings.NewReader("# people\n" + mustLine(t, "ann")))
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, Config{Approvers: approvers}, false)
	t.Run("a page needs a session", func(t *testing.T) {
		resp, _ := r.get(r.browser(), "/approvals/")
		if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/approvals/login?next=") {
			t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Location"))
		}
	})
	t.Run("the sign-in form's token is required", func(t *testing.T) {
		resp, _ := r.post(r.browser(), "/approvals/login", url.Values{"token": {adminToken}})
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) == 0 || hasSession(resp) {
			t.Fatalf("sign-in without the form's token: %d", resp.StatusCode)
		}
	})
	t.Run("a wrong token is refused", func(t *testing.T) {
		c := r.browser()
		_, form := r.get(c, "/approvals/login")
		resp, body := r.post(c, "/approvals/login", url.Values{"csrf": {hidden(t, form)}, "token": {"tg_wrong-token-000000000000000000000000"}})
		if resp.StatusCode != http.StatusUnauthorized || hasSession(resp) || !strings.Contains(body, "not the admin token") {
			t.Fatalf("%d", resp.StatusCode)
		}
	})
	t.Run("an approver is named", func(t *testing.T) {
		c := r.browser()
		csrf := r.signIn(c, approverToken)
		_, list := r.get(c, "/approvals/")
		if !strings.Contains(list, "signed in as <strong>ann</strong>") {
			t.Fatalf("page does not name the approver:\n%s", list)
		}
		resp, _ := r.post(c, "/approvals/ticket/"+r.pending.ID+"/decide", url.Values{"csrf": {csrf}, "decision": {"approve"}, "note": {"ok\nby phone\u202e"}})
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("approve: %d", resp.StatusCode)
		}
		if got, _ := r.store.Get(r.pending.ID); got.State != tickets.Ready || got.DecidedBy != "ann" {
			t.Fatalf("ticket %+v", got)
		}
		if len(r.rec.got) != 1 || r.rec.got[0] != (decision{r.pending.ID, "approved", "ann", "ok by phone"}) {
			t.Fatalf("audit records %+v", r.rec.got)
		}
	})
	t.Run("sign-in attempts are limited", func(t *testing.T) {
		c := r.browser()
		limited := false
		for range 12 {
			_, form := r.get(c, "/approvals/login")
			resp, _ := r.post(c, "/approvals/login", url.Values{"csrf": {hidden(t, form)}, "token": {"guess"}})
			if resp.StatusCode == http.StatusTooManyRequests {
				limited = true
				break
			}
		}
		if !limited {
			t.Fatal("twelve wrong tokens in a row were all tried")
		}
	})
}

var approverToken string

func mustLine(t *testing.T, name string) string {
	tok, line, err := NewApproverToken(name)
	if err != nil {
		t.Fatal(err)
	}
	approverToken = tok
	return line + "\n"
}

func hasSession(resp *http.Response) bool {
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			return true
		}
	}
	return false
}

func TestEveryDecisionNeedsTheSessionsCSRFToken(t *testing.T) {
	r := newRig(t, Config{}, false)
	c := r.browser()
	csrf := r.signIn(c, adminToken)
	other := r.browser()
	otherCSRF := r.signIn(other, adminToken)
	path := "/approvals/ticket/" + r.pending.ID + "/decide"
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  []string
	}{
		{"no token", url.Values{"decision": {"approve"}}, nil},
		{"empty token", url.Values{"csrf": {""}, "decision": {"approve"}}, nil},
		{"another session's token", url.Values{"csrf": {otherCSRF}, "decision": {"approve"}}, nil},
		{"right token from another site", url.Values{"csrf": {csrf}, "decision": {"approve"}}, []string{"Origin", "https://evil.example"}},
		{"right token, cross-site fetch", url.Values{"csrf": {csrf}, "decision": {"deny"}}, []string{"Sec-Fetch-Site", "cross-site"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, _ := r.post(c, path, tc.form, tc.hdr...)
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d", resp.StatusCode)
			}
			if got, _ := r.store.Get(r.pending.ID); got.State != tickets.Pending {
				t.Fatalf("ticket is %s", got.State)
			}
		})
	}
	if resp, _ := r.post(r.browser(), path, url.Values{"csrf": {csrf}, "decision": {"approve"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a POST without a session: %d", resp.StatusCode)
	}
	resp, _ := r.post(c, path, url.Values{"csrf": {csrf}, "decision": {"deny"}, "note": {"not now"}}, "Origin", r.srv.URL, "Sec-Fetch-Site", "same-origin")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("deny with the right token: %d", resp.StatusCode)
	}
	if got, _ := r.store.Get(r.pending.ID); got.State != tickets.Denied || got.DecidedBy != AdminName {
		t.Fatalf("ticket %+v", got)
	}
	// Signing out ends the session: its token decides nothing more.
	r.post(c, "/approvals/logout", url.Values{"csrf": {csrf}})
	if resp, _ := r.get(c, "/approvals/"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("still signed in after sign-out: %d", resp.StatusCode)
	}
}

func TestNotificationLinkFindsTheTicketOnce(t *testing.T) {
	r := newRig(t, Config{BaseURL: "http://127.0.0.1:8081"}, false)
	link := r.page.Link(r.pending)
	if !strings.HasPrefix(link, "http://127.0.0.1:8081/approvals/link/") || strings.Contains(link, r.pending.ID) {
		t.Fatalf("link %q", link)
	}
	path := strings.TrimPrefix(link, "http://127.0.0.1:8081")
	c := r.browser()
	resp, _ := r.get(c, path)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/approvals/login?next="+url.QueryEscape("/approvals/ticket/"+r.pending.ID) {
		t.Fatalf("first use: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := r.get(c, path)
	if resp.StatusCode != http.StatusGone || strings.Contains(body, r.pending.ID) || strings.Contains(body, "demo_counter_reset") {
		t.Fatalf("second use: %d\n%s", resp.StatusCode, body)
	}
	// Signed in, a fresh link leads straight to the ticket.
	r.signIn(c, adminToken)
	path2 := strings.TrimPrefix(r.page.Link(r.pending), "http://127.0.0.1:8081")
	if resp, _ := r.get(c, path2); resp.Header.Get("Location") != "/approvals/ticket/"+r.pending.ID {
		t.Fatalf("signed-in link: %s", resp.Header.Get("Location"))
	}
	forged := path2[:len(path2)-3] + "AAA"
	expiring := strings.TrimPrefix(r.page.Link(r.pending), "http://127.0.0.1:8081")
	r.clock.Advance(16 * time.Minute)
	for name, p := range map[string]string{"forged": forged, "expired": expiring, "garbage": "/approvals/link/x"} {
		if resp, _ := r.get(c, p); resp.StatusCode != http.StatusGone {
			t.Errorf("%s link: %d", name, resp.StatusCode)
		}
	}
	if r.page.Link(r.pending) == "" {
		t.Error("no link")
	}
	noBase := newRig(t, Config{}, false)
	if l := noBase.page.Link(noBase.pending); l != "" {
		t.Errorf("a link without a base URL: %q", l)
	}
}

func TestHostilePreviewIsShownAsText(t *testing.T) {
	r := newRig(t, Config{}, false)
	hostile := `{"name":"<script>alert('x')</script>","diff":"--- a\n+++ b\n@@ -1 +1 @@\n-old\n+<img src=x onerror=alert(1)>","note":"</pre><form action=https://evil.example><button>Approve</button></form>"}`
	tk, err := r.store.Issue(tickets.Binding{Client: "c<b>", User: "<i>u</i>", Service: "demo", Tool: "demo_x", ArgsDigest: "d"}, "p", approval.Human, time.Minute, json.RawMessage(hostile))
	if err != nil {
		t.Fatal(err)
	}
	c := r.browser()
	r.signIn(c, adminToken)
	for _, path := range []string{"/approvals/", "/approvals/ticket/" + tk.ID} {
		_, body := r.get(c, path)
		for _, bad := range []string{"<script", "<img", "<i>u", "c<b>", "https://evil.example><button>", `<form action=https://evil`} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: hostile markup %q reached the page", path, bad)
			}
		}
		for _, want := range []string{"&lt;script&gt;", "&lt;img src=x onerror=alert(1)&gt;", `class="l add"`, `class="l del"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: %q missing (preview not shown as text)", path, want)
			}
		}
	}
}

func TestSignInGoesOnlyToThisPageOrTheConsole(t *testing.T) {
	for _, next := range []string{"https://evil.example/", "//evil.example", "/admin/tickets", "/approvals/ticket/../../x", "javascript:alert(1)",
		"/console", "/console/\\evil.example", "/console/ <script>", "/consolex/", "/console/" + strings.Repeat("a", 600)} {
		if got := safeNext(next); got != Prefix {
			t.Errorf("safeNext(%q) = %q", next, got)
		}
	}
	// The console beside the page shares the sign-in and comes back to
	// the view that sent the browser to it.
	for _, ok := range []string{"/approvals/ticket/tkt_abc", "/console/", "/console/activity?client=openwebui&class=refused", "/console/activity/12"} {
		if got := safeNext(ok); got != ok {
			t.Errorf("safeNext(%q) = %q", ok, got)
		}
	}
}

func TestParseApprovers(t *testing.T) {
	h := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct{ in, err string }{
		{h + " ann\n", ""},
		{h + " admin\n", "line 1"},
		{h + "\n", "line 1"},
		{h + " ann\n" + "sha256:" + strings.Repeat("cd", 32) + " ann\n", "line 2"},
		{"md5:" + strings.Repeat("ab", 32) + " ann\n", "line 1"},
		{h + " bad/name\n", "line 1"},
	} {
		_, err := ParseApprovers(strings.NewReader(tc.in))
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %v", tc.in, err)
		}
		if err != nil && strings.Contains(err.Error(), strings.Repeat("ab", 8)) {
			t.Errorf("error repeats the hash: %v", err)
		}
	}
}
