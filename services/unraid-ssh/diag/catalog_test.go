package diag

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// tools/list stays small, every tool is a read with the unraidssh_ prefix
// and a closed schema, and docs/services/unraid.md holds its table.
func TestCatalog(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "")
	sp, _ := ssh.NewPublicKey(pub)
	kh := writeTemp(t, knownhosts.Line([]string{"tower.lan"}, sp)+"\n")
	c, err := NewClient(ClientOptions{Addr: "tower.lan:22", User: "root", Key: pem.EncodeToMemory(block), KnownHostsFile: kh, MaxBytes: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	svc := toolkittest.Start(t, "unraid-ssh", New(c).Tools())
	res, err := svc.Client.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.Tools)
	if len(raw) > 12<<10 {
		t.Errorf("tools/list is %d bytes", len(raw))
	}
	t.Logf("tools/list: %d tools, %d bytes", len(res.Tools), len(raw))
	for _, tool := range res.Tools {
		if !strings.HasPrefix(tool.Name, "unraidssh_") || tool.Annotations.ReadOnlyHint == nil || !*tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: not a prefixed read", tool.Name)
		}
		if s, _ := json.Marshal(tool.InputSchema); !strings.Contains(string(s), `"additionalProperties":false`) {
			t.Errorf("%s: open schema %s", tool.Name, s)
		}
	}
	svc.CheckDocTable(t, "../../../docs/services/unraid.md")
}

// Keys with a passphrase and unparsable keys are refused with a clear reason.
func TestKeyProblemsAreNamed(t *testing.T) {
	kh := writeTemp(t, "tower.lan ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKs0000000000000000000000000000000000000000000\n")
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("secret"))
	for key, want := range map[string]string{string(pem.EncodeToMemory(block)): "passphrase", "not a key": "cannot be parsed"} {
		if _, err := NewClient(ClientOptions{Addr: "tower.lan:22", Key: []byte(key), KnownHostsFile: kh}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q, got %v", want, err)
		}
	}
}
