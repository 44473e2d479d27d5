package approvals

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolgate/toolgate/services/gateway/auth"
)

// Approvers maps approver tokens (stored as SHA-256 hashes) to names, so
// the audit says who approved. The file has one approver per line:
//
//	sha256:<64 hex> <name>
//
// with '#' comments; names match [A-Za-z0-9._-]{1,64}. "admin" is taken by
// the admin token.
type Approvers struct {
	byHash map[[sha256.Size]byte]string
}

// LoadApprovers reads an approvers file.
func LoadApprovers(path string) (*Approvers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("approvers file: %w", err)
	}
	defer f.Close()
	return ParseApprovers(f)
}

// ParseApprovers parses an approvers file; errors name the line, never its
// content.
func ParseApprovers(r io.Reader) (*Approvers, error) {
	a := &Approvers{byHash: map[[sha256.Size]byte]string{}}
	names := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		hexHash, ok := strings.CutPrefix(f[0], "sha256:")
		var sum [sha256.Size]byte
		if len(f) != 2 || !ok || len(hexHash) != 2*sha256.Size {
			return nil, fmt.Errorf("approvers line %d: want sha256:<64 hex> NAME", n)
		}
		if _, err := hex.Decode(sum[:], []byte(hexHash)); err != nil {
			return nil, fmt.Errorf("approvers line %d: hash is not hex", n)
		}
		name := f[1]
		if !validApprover(name) || name == AdminName {
			return nil, fmt.Errorf("approvers line %d: name must match [A-Za-z0-9._-]{1,64} and not be %q", n, AdminName)
		}
		if _, dup := a.byHash[sum]; dup || names[name] {
			return nil, fmt.Errorf("approvers line %d: duplicate hash or name", n)
		}
		a.byHash[sum], names[name] = name, true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("approvers file: %w", err)
	}
	return a, nil
}

// NewApproverToken mints a token for an approver and returns it (shown
// once) with the line for the approvers file.
func NewApproverToken(name string) (token, line string, err error) {
	if !validApprover(name) || name == AdminName {
		return "", "", fmt.Errorf("approver name must match [A-Za-z0-9._-]{1,64} and not be %q", AdminName)
	}
	// Same shape and strength as a client token; the line differs.
	token, clientLine, err := auth.NewToken(name, []string{"approver"}, auth.UserNone)
	if err != nil {
		return "", "", err
	}
	hash, _, _ := strings.Cut(clientLine, " ")
	return token, hash + " " + name, nil
}

func (a *Approvers) lookup(token string) (string, bool) {
	if a == nil {
		return "", false
	}
	sum := sha256.Sum256([]byte(token))
	name, ok := a.byHash[sum]
	if !ok {
		return "", false
	}
	// The map key is a hash of the presented token; see auth.Tokens.
	for h := range a.byHash {
		if subtle.ConstantTimeCompare(h[:], sum[:]) == 1 {
			return name, true
		}
	}
	return "", false
}

func validApprover(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// AdminName is the approver name of whoever signs in with the admin token.
const AdminName = "admin"
