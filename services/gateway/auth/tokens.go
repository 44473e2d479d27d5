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

// UserMode says how a client's end user is established; it is set per
// client in the tokens file (user=jwt, user=headers).
type UserMode string

// End-user modes.
const (
	// UserNone: the client names no end user; user headers and user
	// tokens are refused, so a front end cannot add one unnoticed.
	UserNone UserMode = ""
	// UserHeaders: the first of the plain X-OpenWebUI-User-Email,
	// X-OpenWebUI-User-Id, X-Toolgate-User headers, taken as told.
	UserHeaders UserMode = "headers"
	// UserJWT: OpenWebUI's signed user-info token (HS256, shared secret),
	// verified; the only mode that gives the end user a role.
	UserJWT UserMode = "jwt"
)

// Client is an authenticated caller: a name, the groups policies use, and
// how its end user is established.
type Client struct {
	Name     string
	Groups   []string
	UserMode UserMode
}

// Identity is who is calling: the client program and, when its front end
// says so, the end user it acts for. UserRole is set only from a verified
// user token.
type Identity struct {
	Client   Client
	User     string
	UserRole string
	// UserMissing is set, to the reason, when a user=jwt client sent no
	// user token at all: it may discover tools (OpenWebUI reads tool lists
	// and OpenAPI documents without one) but every call is refused.
	UserMissing string
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
	// changed ends when a TokenFile replaces these tokens (nil: never), so
	// a long request authenticated with them can check its token is still
	// there.
	changed context.Context
}

// Names returns the names of the clients with end-user mode m, sorted.
func (t *Tokens) Names(m UserMode) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, e := range t.byHash {
		if e.client.UserMode == m {
			out = append(out, e.client.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Clients returns every client, sorted by name.
func (t *Tokens) Clients() []Client {
	if t == nil {
		return nil
	}
	out := make([]Client, 0, len(t.byHash))
	for _, e := range t.byHash {
		out = append(out, Client{Name: e.client.Name, Groups: slices.Clone(e.client.Groups), UserMode: e.client.UserMode})
	}
	slices.SortFunc(out, func(a, b Client) int { return strings.Compare(a.Name, b.Name) })
	return out
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
	return Client{Name: e.client.Name, Groups: slices.Clone(e.client.Groups), UserMode: e.client.UserMode}, true
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
//	sha256:<64 hex> <client-name> <group1,group2,...> [user=jwt|user=headers]
//
// '#' comment lines and blank lines are ignored. Names and groups match
// [A-Za-z0-9._-]{1,64}. A duplicate hash or client name is an error. The
// optional last field says how the client's end user is established.
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
	if len(f) != 3 && len(f) != 4 {
		return entry{}, fmt.Errorf("want 3 or 4 fields (sha256:<hex> client groups [user=jwt|user=headers]), got %d", len(f))
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
	mode := UserNone
	if len(f) == 4 {
		m, ok := strings.CutPrefix(f[3], "user=")
		if !ok || (UserMode(m) != UserJWT && UserMode(m) != UserHeaders) {
			return entry{}, errors.New("the fourth field must be user=jwt or user=headers")
		}
		mode = UserMode(m)
	}
	client, err := newClient(f[1], strings.Split(f[2], ","), mode)
	if err != nil {
		return entry{}, err
	}
	e.client = client
	return e, nil
}

func newClient(name string, groups []string, mode UserMode) (Client, error) {
	switch mode {
	case UserNone, UserHeaders, UserJWT:
	default:
		return Client{}, errors.New("end-user mode must be jwt, headers or none")
	}
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
	return Client{Name: name, Groups: slices.Clone(groups), UserMode: mode}, nil
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
// tokens-file line that holds only its hash (and the end-user mode, unless
// it is UserNone).
func NewToken(client string, groups []string, mode UserMode) (token, line string, err error) {
	c, err := newClient(client, groups, mode)
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
	if mode != UserNone {
		b.WriteString(" user=" + string(mode))
	}
	return token, b.String(), nil
}
