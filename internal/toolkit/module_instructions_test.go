package toolkit

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A service module's Instructions reach the client at initialize, ahead of
// the toolkit's untrusted-data note.
func TestModuleInstructions(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("module-test-token-0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvServiceToken+"_FILE", token)
	for _, tc := range []struct {
		name  string
		given Instructions
	}{
		{"with instructions", "Search only for current facts."},
		{"without", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, _, err := newFromEnv(params{Name: "web", Logger: slog.New(slog.DiscardHandler), Instructions: tc.given})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(svc.Handler())
			defer srv.Close()
			tr, err := transport.NewStreamableHTTP(srv.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer module-test-token-0123456789"}))
			if err != nil {
				t.Fatal(err)
			}
			c := client.NewClient(tr)
			defer c.Close()
			if err := c.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			res, err := c.Initialize(t.Context(), mcp.InitializeRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Instructions, string(tc.given)) || !strings.HasSuffix(res.Instructions, UntrustedNote) {
				t.Fatalf("instructions: %q", res.Instructions)
			}
		})
	}
}
