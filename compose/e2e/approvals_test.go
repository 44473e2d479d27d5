//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// mintOpenWebUI mints a user token the way OpenWebUI does (PyJWT HS256 over
// sub, email, name, role, iss, iat and exp = iat + 300).
func mintOpenWebUI(secret, email, role string) string {
	now := time.Now().Unix()
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	body := base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf(
		`{"sub":"u-%s","email":%q,"name":"e2e","role":%q,"iss":"open-webui","iat":%d,"exp":%d}`, role, email, role, now, now+300)))
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(head + "." + body))
	return head + "." + body + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// approveOnThePage runs an OpenWebUI-style client (signed user token,
// OpenAPI tool server) on the clients network: its write that needs a
// person waits until a person signs in to the approval page on the host's
// loopback, finds the ticket with its user and preview, and approves it;
// then the client's confirm applies.
func approveOnThePage(ctx context.Context, t *testing.T, project, page, token, userJWT, adminTokenFile string) {
	var probeOut bytes.Buffer
	probe := exec.CommandContext(ctx, "docker", "run", "--rm", "--network", project+"_clients",
		"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65532",
		probeImage, "-openapi", "http://gateway:8080/openapi/demo", "-token", token, "-user-jwt", userJWT)
	probe.Stdout, probe.Stderr = &probeOut, &probeOut
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- probe.Wait() }()

	adminToken, err := os.ReadFile(adminTokenFile)
	if err != nil {
		t.Fatal(err)
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(path string) string {
		t.Helper()
		res, err := browser.Get(page + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	postForm := func(path string, form url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, page+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", page)
		res, err := browser.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	login := get("/approvals/login")
	m := csrf.FindStringSubmatch(login)
	if m == nil {
		t.Fatalf("no sign-in form:\n%s", login)
	}
	if status, body := postForm("/approvals/login", url.Values{"csrf": {m[1]}, "token": {strings.TrimSpace(string(adminToken))}}); status != http.StatusOK || !strings.Contains(body, "signed in as") {
		t.Fatalf("sign in: HTTP %d\n%s", status, body)
	}

	// The person waits for the ticket to show up on the page.
	ticketArticle := regexp.MustCompile(`(?s)<article class="ticket" id="(tkt_[a-z0-9]+)">.*?</article>`)
	var id, article string
	deadline := time.Now().Add(2 * time.Minute)
	for id == "" {
		list := get("/approvals/")
		for _, a := range ticketArticle.FindAllStringSubmatch(list, -1) {
			if strings.Contains(a[0], "demo_counter_reset") {
				id, article = a[1], a[0]
			}
		}
		if id != "" {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the client stopped before a ticket waited: %v\n%s", err, probeOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ticket appeared on the approval page\nprobe:\n%s", probeOut.String())
		}
		time.Sleep(time.Second)
	}
	for _, want := range []string{"openwebui", "ann@example.org", "(admin)", `&#34;current&#34;: `} {
		if !strings.Contains(article, want) {
			t.Errorf("the page does not show %q for the ticket:\n%s", want, article)
		}
	}
	formCSRF := csrf.FindStringSubmatch(article)
	status, body := postForm("/approvals/ticket/"+id+"/decide", url.Values{"csrf": {formCSRF[1]}, "decision": {"approve"}, "note": {"end-to-end test"}})
	if status != http.StatusOK || !strings.Contains(body, "Approved") {
		t.Fatalf("approve: HTTP %d\n%s", status, body)
	}

	select {
	case err := <-done:
		t.Logf("OpenWebUI-style client:\n%s", probeOut.String())
		if err != nil || !strings.Contains(probeOut.String(), "\nPASS") {
			t.Fatalf("the client's confirm did not apply: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the client never finished:\n%s", probeOut.String())
	}
	// The same sign-in opens the console, the admin listener's home: the
	// write that waited is there with its reason id, the services with
	// their readiness.
	deadline = time.Now().Add(30 * time.Second)
	for {
		activity := get("/")
		if strings.Contains(activity, "<h1>Activity</h1>") && strings.Contains(activity, "demo_counter_reset") &&
			strings.Contains(activity, "needs_person:destructive") && strings.Contains(activity, "ann@example.org") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console does not show the approved write:\n%.4000s", activity)
		}
		time.Sleep(time.Second)
	}
	if services := get("/console/services"); !strings.Contains(services, "<h2>demo <span class=\"badge ok\">ready</span>") {
		t.Errorf("the console's services do not show demo ready:\n%.4000s", services)
	}
	logs, _ := run(ctx, "docker", "logs", project+"-gateway-1")
	if !strings.Contains(logs, `"reason":"decided by admin on the approval page; note: end-to-end test"`) ||
		!strings.Contains(logs, `"user":"ann@example.org","user_role":"admin"`) {
		t.Errorf("the audit lacks the decision or the verified user:\n%.3000s", logs)
	}
}
