package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// TestProcesses runs the real gateway and demo binaries the way
// scripts/demo.sh does, and drives them through the subcommands: token,
// healthcheck, stdio (a desktop client's view), approvals, and SIGTERM.
func TestProcesses(t *testing.T) {
	gateway := toolkittest.Build(t, ".")
	demo := toolkittest.Build(t, "../demo")
	dir := t.TempDir()
	svcToken := toolkittest.SecretFile(t, "svc-token-0123456789abcdef")
	const master = "approval-key-0123456789abcdef0123456789"
	approvalKey := toolkittest.SecretFile(t, master)
	adminToken := toolkittest.SecretFile(t, "admin-token-0123456789abcdef")

	// token: prints the token once and the line for the tokens file.
	out, err := exec.Command(gateway, "token", "desktop", "users").Output()
	if err != nil {
		t.Fatal(err)
	}
	var token, line string
	for _, l := range strings.Split(string(out), "\n") {
		if _, after, ok := strings.Cut(l, "): "); ok && strings.HasPrefix(after, "tg_") {
			token = after
		}
		if strings.HasPrefix(l, "sha256:") {
			line = l
		}
	}
	if token == "" || !strings.HasSuffix(line, " desktop users") || strings.Contains(line, token) {
		t.Fatalf("token output:\n%s", out)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	// approval-key: the demo's own approval key, derived from the gateway's
	// (what install.sh writes for each service with writes).
	derive := exec.Command(gateway, "approval-key", "demo")
	derive.Env = []string{"TOOLGATE_APPROVAL_KEY_FILE=" + approvalKey}
	out, err = derive.Output()
	want, _ := approval.ServiceKey([]byte(master), "demo")
	if err != nil || strings.TrimSpace(string(out)) != string(want) || strings.Contains(string(out), master) {
		t.Fatalf("approval-key demo: %v %q", err, out)
	}
	demoKey := toolkittest.SecretFile(t, string(out))

	demoAddr, gwAddr, adminAddr := toolkittest.FreeAddr(t), toolkittest.FreeAddr(t), toolkittest.FreeAddr(t)
	demoEnv := []string{"TOOLGATE_LISTEN=" + demoAddr, "TOOLGATE_SERVICE_TOKEN_FILE=" + svcToken,
		"TOOLGATE_APPROVAL_KEY_FILE=" + demoKey, "DEMO_ALLOW_WRITES=true"}
	gwEnv := []string{"TOOLGATE_LISTEN=" + gwAddr, "TOOLGATE_ADMIN_LISTEN=" + adminAddr,
		"TOOLGATE_CLIENT_TOKENS_FILE=" + tokens, "TOOLGATE_ADMIN_TOKEN_FILE=" + adminToken,
		"TOOLGATE_APPROVAL_KEY_FILE=" + approvalKey, "TOOLGATE_SERVICES=demo=http://" + demoAddr + "/mcp",
		"TOOLGATE_SERVICE_TOKEN_DEMO_FILE=" + svcToken,
		// Read lines wait for shutdown: SIGTERM must still write them.
		"TOOLGATE_AUDIT_BATCH=1h"}
	toolkittest.StartHealthy(t, demo, demoEnv)
	gw := toolkittest.StartHealthy(t, gateway, gwEnv)
	// The serving gateway runs on one P unless GOMAXPROCS says otherwise
	// (internal/toolkit/procs.go).
	if out := gw.Output.String(); !strings.Contains(out, `"msg":"scheduler","procs":1,`) {
		t.Fatalf("the gateway did not report running on one P:\n%s", out)
	}

	// stdio: a desktop client writes its messages at once and reads lines.
	bridge := exec.Command(gateway, "stdio")
	bridge.Env = []string{"TOOLGATE_URL=http://" + gwAddr + "/mcp", "TOOLGATE_TOKEN=" + token}
	bridge.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desktop","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"demo_counter_reset","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"demo_counter_add","arguments":{"amount":2}}}`,
	}, "\n") + "\n")
	var stderr capture.Buffer
	bridge.Stderr = &stderr
	stdout, err := bridge.Output()
	if err != nil {
		t.Fatalf("stdio: %v\n%s", err, stderr.String())
	}
	answers := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout carries a non-JSON line: %q", sc.Text())
		}
		answers[string(m.ID)] = sc.Text()
	}
	if len(answers) != 4 || !strings.Contains(answers["2"], "demo_counter_add") {
		t.Fatalf("stdio answers: %v\nstderr: %s", answers, stderr.String())
	}
	if !strings.Contains(answers["3"], "already zero") {
		t.Fatalf("reset of a zero counter: %s", answers["3"])
	}
	if !strings.Contains(answers["4"], "confirmation_required") || strings.Contains(string(stdout), token) || strings.Contains(stderr.String(), token) {
		t.Fatalf("write through stdio: %s", answers["4"])
	}

	// approvals: the admin CLI reaches the admin listener with its token.
	approvals := exec.Command(gateway, "approvals", "list", "--all")
	approvals.Env = []string{"TOOLGATE_ADMIN_URL=http://" + adminAddr, "TOOLGATE_ADMIN_TOKEN_FILE=" + adminToken}
	list, err := approvals.CombinedOutput()
	if err != nil || !strings.Contains(string(list), "demo_counter_add") {
		t.Fatalf("approvals list: %v\n%s", err, list)
	}

	// Lines about writes are out at once; a read's line waits (the bridge
	// above sent its calls at once, so the read comes last, on its own).
	if out := gw.Output.String(); !strings.Contains(out, `"tool":"demo_counter_add"`) {
		t.Fatalf("a write's audit line waited:\n%s", out)
	}
	read := exec.Command(gateway, "stdio")
	read.Env = bridge.Env
	read.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desktop","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo_echo","arguments":{"text":"last read"}}}`,
	}, "\n") + "\n")
	if out, err := read.Output(); err != nil || !strings.Contains(string(out), "last read") {
		t.Fatalf("read through stdio: %v\n%s", err, out)
	}
	if out := gw.Output.String(); strings.Contains(out, `"tool":"demo_echo"`) {
		t.Fatalf("the read's line did not wait for the batch:\n%s", out)
	}
	// SIGTERM stops the gateway cleanly and writes the waiting lines.
	gw.Terminate(t)
	if !strings.Contains(gw.Output.String(), `"event":"outcome","client":"desktop","service":"demo","tool":"demo_echo"`) {
		t.Fatalf("the read's audit line was lost at shutdown:\n%s", gw.Output.String())
	}
}

func TestConfigErrorNamesSettings(t *testing.T) {
	gateway := toolkittest.Build(t, ".")
	cmd := exec.Command(gateway)
	cmd.Env = []string{"TOOLGATE_SERVICES=web=http://web:8000/mcp", "TOOLGATE_APPROVAL_KEY=pasted-secret-value"}
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("started without configuration")
	}
	for _, want := range []string{"TOOLGATE_CLIENT_TOKENS_FILE", "TOOLGATE_APPROVAL_KEY_FILE", "TOOLGATE_SERVICE_TOKEN_WEB_FILE"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error does not name %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "pasted-secret-value") {
		t.Errorf("error shows a secret:\n%s", out)
	}
	if first := strings.SplitN(string(out), "\n", 2)[0]; !strings.HasPrefix(first, "gateway: ") {
		t.Errorf("the first line is not the readable summary: %q", first)
	}
}
