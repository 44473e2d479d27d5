package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/policies"
	"github.com/toolgate/toolgate/services/gateway/app"
	"github.com/toolgate/toolgate/services/gateway/policy"
	"github.com/toolgate/toolgate/services/gateway/tickets"
)

// noteNeedsAPerson is the shipped policy, except that note writes need a
// person, so the demo note (which the preview shows) can carry hostile
// text to the approval page.
type noteNeedsAPerson struct{ policy.Engine }

func (p noteNeedsAPerson) Decide(ctx context.Context, in policy.Input) (policy.Decision, error) {
	if in.Tool == "demo_note_touch" {
		return policy.Decision{Decision: policy.Confirm, Reason: "notes need a person in this test", ReasonID: "needs_person:note", Approval: approval.Human, TTLSeconds: 600}, nil
	}
	return p.Engine.Decide(ctx, in)
}

// webhookSink records the notifications the gateway sends.
type webhookSink struct {
	mu    sync.Mutex
	links []string
	raw   []string
}

func (s *webhookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m struct{ Link string }
	_ = json.Unmarshal(b, &m)
	s.mu.Lock()
	s.links, s.raw = append(s.links, m.Link), append(s.raw, string(b))
	s.mu.Unlock()
}

func (s *webhookSink) last(t *testing.T) (link, raw string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		if n := len(s.links); n > 0 {
			link, raw = s.links[n-1], s.raw[n-1]
			s.links, s.raw = nil, nil
			s.mu.Unlock()
			return link, raw
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no notification arrived")
	return "", ""
}

// browserPath finds Debian's chromium; scripts/test.sh installs it, so CI
// without it is a failure, a developer machine without it a skip.
func browserPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium: scripts/test.sh installs it (apt-get install chromium)")
	}
	t.Skip("no chromium installed (apt-get install chromium)")
	return ""
}

func TestApprovalPageInARealBrowser(t *testing.T) {
	chromium := browserPath(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	hook := &webhookSink{}
	hookSrv := httptest.NewServer(hook)
	t.Cleanup(hookSrv.Close)
	h := newHarness(t,
		func(c *app.Config) { c.ApprovalURL, c.NotifyWebhookURL = base, hookSrv.URL+"/toolgate" },
		func(o *app.Options) { o.Policy = noteNeedsAPerson{embeddedPolicy(t)} },
	)
	adminSrv := httptest.NewUnstartedServer(h.gw.Admin)
	adminSrv.Listener.Close()
	adminSrv.Listener = ln
	adminSrv.Start()
	t.Cleanup(adminSrv.Close)

	// Upstream data the page must show as text, never as markup.
	const hostile = `<img src=x onerror=alert(1)><b>bold</b>`
	h.demo.note.Store(hostile)

	ann := h.client("openwebui", "ann@example.org", "/mcp")
	args := map[string]any{"note": "from the browser test"}
	m, isErr := call(t, ann, "demo_note_touch", args)
	ticket, _ := m["ticket"].(string)
	if isErr || m["approval"] != "human" || ticket == "" {
		t.Fatalf("preview: %v", m)
	}
	link, raw := hook.last(t)
	if !strings.HasPrefix(link, base+"/approvals/link/") || strings.Contains(raw, hostile) || strings.Contains(raw, "ann@example.org") || strings.Contains(raw, ticket) {
		t.Fatalf("notification %s", raw)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	var dialogs []string
	var dmu sync.Mutex
	if err := chromedp.Listen(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dmu.Lock()
			dialogs = append(dialogs, d.Message)
			dmu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	noScriptRan := func() {
		t.Helper()
		dmu.Lock()
		defer dmu.Unlock()
		if len(dialogs) > 0 {
			t.Fatalf("script ran on the page: dialogs %v", dialogs)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return v
	}
	location := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// The notification's link leads to sign-in, then to the ticket.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(`input[name=token]`),
		chromedp.SendKeys(`input[name=token]`, adminToken),
		chromedp.Submit(`form.login`),
		chromedp.WaitVisible(`article.ticket`),
	); err != nil {
		t.Fatalf("sign in through the link: %v", err)
	}
	if got := location(); got != base+"/approvals/ticket/"+ticket {
		t.Fatalf("the link led to %s", got)
	}
	previewText, userText := text(`pre.json`), text(`dd.user`)
	if why := text(`dd.why`); why != "notes need a person in this test" {
		t.Errorf("the page gives %q as the reason a person is asked", why)
	}
	live, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('article img, article b').length`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(previewText, hostile) || live != 0 || !strings.Contains(userText, "ann@example.org") {
		t.Fatalf("preview %q shown with %d live elements, user %q", previewText, live, userText)
	}
	noScriptRan()

	// A forged POST from the signed-in browser itself, a form without the
	// CSRF token, changes nothing. (fetch() is not even possible: the
	// page's Content-Security-Policy allows no connections.)
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const f = document.createElement('form');
			f.method = 'post'; f.action = '/approvals/ticket/%s/decide';
			const d = document.createElement('input'); d.name = 'decision'; d.value = 'approve'; f.appendChild(d);
			document.body.appendChild(f); f.submit();
		})()`, ticket)),
		chromedp.WaitVisible(`p.message`),
	); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.gw.Tickets.Get(ticket); got.State != tickets.Pending {
		t.Fatalf("forged POST: ticket %s", got.State)
	}
	if msg := text(`p.message`); !strings.Contains(msg, "CSRF") {
		t.Fatalf("forged POST answered %q", msg)
	}
	blocked, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('/approvals/').then(() => 'fetched', () => 'blocked')`, chromedp.EvalAwaitPromise))
	if err != nil || blocked != "blocked" {
		t.Fatalf("the page may fetch: %q %v", blocked, err)
	}
	// So does a form another site submits into the approval page.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<form id=f method=post action="%s/approvals/ticket/%s/decide"><input name=decision value=approve></form><script>document.getElementById('f').submit()</script>`, base, ticket)
	}))
	t.Cleanup(evil.Close)
	if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL), chromedp.Sleep(500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.gw.Tickets.Get(ticket); got.State != tickets.Pending {
		t.Fatalf("a cross-site form decided the ticket (landed on %s)", location())
	}

	// Approve on the page; the client's confirm then applies.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/approvals/ticket/"+ticket),
		chromedp.WaitVisible(`button.approve`),
		chromedp.SendKeys(`input[name=note]`, "checked with Ann"),
		chromedp.Click(`button.approve`),
		chromedp.WaitVisible(`p.done`),
	); err != nil {
		t.Fatalf("approve: %v", err)
	}
	if done := text(`p.done`); !strings.Contains(done, "Approved") {
		t.Fatalf("after approving: %q", done)
	}
	if got, _ := h.gw.Tickets.Get(ticket); got.State != tickets.Ready || got.DecidedBy != "admin" {
		t.Fatalf("ticket after approval: %+v", got)
	}
	if !strings.Contains(h.audit.String(), `"reason":"decided by admin on the approval page; note: checked with Ann"`) {
		t.Errorf("audit lacks the approver and note:\n%s", h.audit.String())
	}
	m, isErr = call(t, ann, "demo_note_touch", map[string]any{"note": "from the browser test", "confirm": true, "ticket": ticket})
	if isErr || m["status"] != "applied" || h.demo.note.Load() != "from the browser test" {
		t.Fatalf("confirm after approval: %v", m)
	}

	// The used link does nothing: no ticket, no redirect.
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(`p.message`)); err != nil {
		t.Fatal(err)
	}
	if got, msg := location(), text(`p.message`); got != link || !strings.Contains(msg, "already used") {
		t.Fatalf("used link: %s %q", got, msg)
	}
	noScriptRan()
}

func embeddedPolicy(t *testing.T) policy.Engine {
	t.Helper()
	e, err := policy.NewEmbedded(t.Context(), policies.FS)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
