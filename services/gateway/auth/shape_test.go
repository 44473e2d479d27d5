package auth

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/redact"
)

// A client token that reaches a tool service's result (pasted into an
// application's settings, say) is redacted there by its shape: the
// format NewToken mints is the one internal/redact knows.
func TestMintedTokensAreRedactedByTheirShape(t *testing.T) {
	for range 50 {
		token, _, err := NewToken("openwebui", []string{"family"}, UserNone)
		if err != nil {
			t.Fatal(err)
		}
		if got := redact.New().String("configured token " + token + "."); strings.Contains(got, token[len(TokenPrefix):]) {
			t.Fatalf("token survived redaction: %q", got)
		}
	}
}
