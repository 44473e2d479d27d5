// Package auth authenticates callers of the gateway's HTTP endpoints: bearer
// tokens stored as SHA-256 hashes in a tokens file, an Origin allow-list
// against DNS rebinding, and the end user named by a trusted front end.
package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// TokenPrefix starts every token minted by NewToken, so a leaked token is
// recognisable by secret scanners.
const TokenPrefix = "tg_"

const (
	hashPrefix = "sha256:"
	maxNameLen = 64
)

// Client is an authenticated caller: a name and the groups policies use.
type Client struct {
	Name   string
	Groups []string
}

// Identity is who is calling: the client program and, when its front end
// says so, the end user it acts for.
type Identity struct {
	Client Client
	User   string
}

type identityKey struct{}

// WithIdentity returns a context carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the Identity stored by WithIdentity, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// ErrTokensFile is wrapped by every tokens-file parse error.
var ErrTokensFile = errors.New("invalid tokens file")

// ParseError reports a bad line of a tokens file. Its message names the line
// number and the problem, never the line's content.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("tokens line %d: %s", e.Line, e.Msg) }

// Unwrap lets errors.Is(err, ErrTokensFile) match.
func (e *ParseError) Unwrap() error { return ErrTokensFile }

type entry struct {
	hash   [sha256.Size]byte
	client Client
}

// Tokens maps token hashes to clients. It is immutable after parsing and so
// safe for concurrent use.
//
// Lookup finds an entry by map lookup on SHA-256(token) rather than a
// constant-time scan: the map key is a hash of the presented token, so any
// timing difference can reveal at most how a hash the attacker already knows
// relates to the stored hashes. Turning that into a valid token would need a
// SHA-256 preimage of a 256-bit random value. The final equality check still
// uses subtle.ConstantTimeCompare as a belt-and-braces measure.
type Tokens struct {
	byHash map[[sha256.Size]byte]entry
}

// Len returns the number of clients.
func (t *Tokens) Len() int { return len(t.byHash) }

// Lookup returns the client whose stored hash equals SHA-256(token).
func (t *Tokens) Lookup(token string) (Client, bool) {
	if t == nil || token == "" {
		return Client{}, false
	}
	sum := sha256.Sum256([]byte(token))
	e, ok := t.byHash[sum]
	if !ok || subtle.ConstantTimeCompare(e.hash[:], sum[:]) != 1 {
		return Client{}, false
	}
	// Callers get their own copy of the groups so they cannot alter ours.
	return Client{Name: e.client.Name, Groups: slices.Clone(e.client.Groups)}, true
}

// LoadTokens reads and parses the tokens file at path.
func LoadTokens(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load tokens: %w", err)
	}
	defer f.Close()
	t, err := ParseTokens(f)
	if err != nil {
		return nil, fmt.Errorf("load tokens %s: %w", path, err)
	}
	return t, nil
}

// ParseTokens parses a tokens file: one client per line,
//
//	sha256:<64 hex> <client-name> <group1,group2,...>
//
// '#' comment lines and blank lines are ignored. Names and groups match
// [A-Za-z0-9._-]{1,64}. A duplicate hash or client name is an error.
func ParseTokens(r io.Reader) (*Tokens, error) {
	t := &Tokens{byHash: make(map[[sha256.Size]byte]entry)}
	names := make(map[string]int) // client name -> line
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseLine(line)
		if err != nil {
			return nil, &ParseError{Line: n, Msg: err.Error()}
		}
		if prev, dup := t.byHash[e.hash]; dup {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("duplicate hash (first used by client %q)", prev.client.Name)}
		}
		if prev, dup := names[e.client.Name]; dup {
			return nil, &ParseError{Line: n, Msg: fmt.Sprintf("duplicate client name %q (first on line %d)", e.client.Name, prev)}
		}
		t.byHash[e.hash] = e
		names[e.client.Name] = n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTokensFile, err)
	}
	return t, nil
}

func parseLine(line string) (entry, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return entry{}, fmt.Errorf("want 3 fields (sha256:<hex> client groups), got %d", len(f))
	}
	hexHash, ok := strings.CutPrefix(f[0], hashPrefix)
	if !ok {
		return entry{}, errors.New(`hash must start with "sha256:"`)
	}
	var e entry
	if len(hexHash) != 2*sha256.Size {
		return entry{}, fmt.Errorf("hash must be %d hex digits", 2*sha256.Size)
	}
	if _, err := hex.Decode(e.hash[:], []byte(hexHash)); err != nil {
		return entry{}, errors.New("hash is not hex")
	}
	client, err := newClient(f[1], strings.Split(f[2], ","))
	if err != nil {
		return entry{}, err
	}
	e.client = client
	return e, nil
}

func newClient(name string, groups []string) (Client, error) {
	if !validName(name) {
		return Client{}, errors.New("client name must match [A-Za-z0-9._-]{1,64}")
	}
	if len(groups) == 0 {
		return Client{}, errors.New("at least one group is required")
	}
	for _, g := range groups {
		if !validName(g) {
			return Client{}, errors.New("groups must be comma-separated [A-Za-z0-9._-]{1,64}")
		}
	}
	return Client{Name: name, Groups: slices.Clone(groups)}, nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > maxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewToken mints a token for client: "tg_" followed by 32 random bytes in
// unpadded base64url. It returns the token, to be shown once, and the
// tokens-file line that holds only its hash.
func NewToken(client string, groups []string) (token, line string, err error) {
	c, err := newClient(client, groups)
	if err != nil {
		return "", "", fmt.Errorf("new token: %w", err)
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", "", fmt.Errorf("new token: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(token))
	var b bytes.Buffer
	b.WriteString(hashPrefix)
	b.WriteString(hex.EncodeToString(sum[:]))
	b.WriteByte(' ')
	b.WriteString(c.Name)
	b.WriteByte(' ')
	b.WriteString(strings.Join(c.Groups, ","))
	return token, b.String(), nil
}
