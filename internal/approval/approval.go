// Package approval carries the gateway's consent for one write to the tool
// service that performs it. The gateway signs an Approval after a ticket was
// confirmed (and, where required, approved by a person); the service verifies
// the signature, binds it to the call it is about to apply and refuses any
// replay. A service never applies a write without one.
package approval

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Keys under which the gateway and the services exchange write metadata in
// an MCP request's or result's _meta object.
const (
	// MetaApproval holds a signed approval token in tools/call _meta. A call
	// to a write tool without it is a preview.
	MetaApproval = "io.toolgate/approval"
	// MetaPreviewDigest holds, in a preview result's _meta, the digest of
	// the scope the preview showed. The gateway binds the ticket to it.
	MetaPreviewDigest = "io.toolgate/preview-digest"
	// MetaWrite marks, in a tool definition's _meta, a tool that writes.
	MetaWrite = "io.toolgate/write"
)

// Approval is the signed statement "apply this exact call once".
type Approval struct {
	Service       string `json:"svc"`
	Tool          string `json:"tool"`
	ArgsDigest    string `json:"args"`
	PreviewDigest string `json:"preview,omitempty"`
	TicketID      string `json:"ticket"`
	Force         bool   `json:"force,omitempty"`
	// Expires is a Unix time in seconds.
	Expires int64 `json:"exp"`
}

// Errors returned by Verify; check them with errors.Is.
var (
	ErrMalformed = errors.New("approval is malformed")
	ErrSignature = errors.New("approval signature is invalid")
	ErrExpired   = errors.New("approval has expired")
	ErrMismatch  = errors.New("approval does not match this call")
	ErrReplayed  = errors.New("approval was already used")
	ErrFull      = errors.New("too many approvals in flight")
)

// MinKeyLen is the shortest accepted signing key.
const MinKeyLen = 32

// Signer signs approvals with an HMAC key: the gateway's signer derives
// the key of the service each approval is for from its master key
// (NewMasterSigner); NewSigner signs with one service's own key.
type Signer struct {
	key    []byte
	master bool
}

// NewSigner returns a Signer that signs with key as it is: the key of one
// service (its tests, a tool acting for it). The key must be at least
// MinKeyLen bytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("approval signing key is too short: need at least %d bytes", MinKeyLen)
	}
	return &Signer{key: bytes.Clone(key)}, nil
}

// NewMasterSigner returns the gateway's Signer: it signs each approval
// with ServiceKey(master, a.Service), the key only that service holds, so
// no service can sign an approval another service accepts. The master must
// be at least MinKeyLen bytes.
func NewMasterSigner(master []byte) (*Signer, error) {
	s, err := NewSigner(master)
	if err != nil {
		return nil, err
	}
	s.master = true
	return s, nil
}

// Sign returns the token for a.
func (s *Signer) Sign(a Approval) (string, error) {
	key := s.key
	if s.master {
		var err error
		if key, err = ServiceKey(s.key, a.Service); err != nil {
			return "", err
		}
	}
	payload, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encode approval: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(mac(key, payload)), nil
}

// serviceKeyInfo binds a derived key to its purpose and version.
const serviceKeyInfo = "toolgate approval key v1\x00service="

// ServiceKey derives a service's own approval key from the gateway's
// master key: HKDF-SHA256 with the service name in the info, hex-encoded
// (64 bytes), so it can live in a secret file like every other key. A
// service holds only its own key: it can verify the gateway's approvals for
// itself, but cannot sign one for another service or learn the master.
func ServiceKey(master []byte, service string) ([]byte, error) {
	if len(master) < MinKeyLen {
		return nil, fmt.Errorf("approval master key is too short: need at least %d bytes", MinKeyLen)
	}
	if service == "" {
		return nil, errors.New("approval key: no service name")
	}
	k, err := hkdf.Key(sha256.New, master, nil, serviceKeyInfo+service, 32)
	if err != nil {
		return nil, fmt.Errorf("derive the approval key of %s: %w", service, err)
	}
	return []byte(hex.EncodeToString(k)), nil
}

func mac(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("toolgate-approval-v1\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// Verifier checks approvals and remembers the used ones until they expire.
type Verifier struct {
	key     []byte
	now     func() time.Time
	maxUsed int

	mu   sync.Mutex
	used map[string]int64 // ticket id -> expiry
}

// NewVerifier returns a Verifier. now may be nil (time.Now).
func NewVerifier(key []byte, now func() time.Time) (*Verifier, error) {
	if len(key) < MinKeyLen {
		return nil, fmt.Errorf("approval signing key is too short: need at least %d bytes", MinKeyLen)
	}
	if now == nil {
		now = time.Now
	}
	return &Verifier{key: bytes.Clone(key), now: now, maxUsed: 100_000, used: map[string]int64{}}, nil
}

// Verify checks token against the call (service, tool, argument digest) and
// consumes it: a second Verify of the same ticket fails with ErrReplayed.
func (v *Verifier) Verify(token, service, tool, argsDigest string) (Approval, error) {
	var a Approval
	p64, s64, ok := strings.Cut(token, ".")
	if !ok {
		return a, ErrMalformed
	}
	enc := base64.RawURLEncoding
	payload, err := enc.DecodeString(p64)
	if err != nil {
		return a, ErrMalformed
	}
	sig, err := enc.DecodeString(s64)
	if err != nil {
		return a, ErrMalformed
	}
	if !hmac.Equal(sig, mac(v.key, payload)) {
		return a, ErrSignature
	}
	if err := json.Unmarshal(payload, &a); err != nil || a.TicketID == "" {
		return Approval{}, ErrMalformed
	}
	now := v.now().Unix()
	if now >= a.Expires {
		return a, ErrExpired
	}
	if a.Service != service || a.Tool != tool || a.ArgsDigest != argsDigest {
		return a, ErrMismatch
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, seen := v.used[a.TicketID]; seen {
		return a, ErrReplayed
	}
	if len(v.used) >= v.maxUsed {
		for id, exp := range v.used {
			if exp <= now {
				delete(v.used, id)
			}
		}
		if len(v.used) >= v.maxUsed {
			return a, ErrFull
		}
	}
	v.used[a.TicketID] = a.Expires
	return a, nil
}

// Canonical returns the canonical JSON of v: object keys sorted, numbers kept
// as written, no HTML escaping. A nil value, null, or raw JSON of length zero
// is the empty object, so "no arguments" has one digest.
func Canonical(v any) ([]byte, error) {
	switch raw := v.(type) {
	case json.RawMessage:
		v = decodeRaw(raw)
	case []byte:
		v = decodeRaw(raw)
	}
	if v == nil {
		return []byte("{}"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if decoded(v) {
		// What a JSON decode made encodes canonically as it is (keys
		// sorted, numbers as written): the round trip below would give the
		// same bytes at twice the cost, on every call the gateway serves.
		if err := enc.Encode(v); err != nil {
			return nil, fmt.Errorf("canonicalize: %w", err)
		}
		out := bytes.TrimRight(buf.Bytes(), "\n")
		if string(out) == "null" {
			return []byte("{}"), nil
		}
		return out, nil
	}
	// Round-trip through a generic value so struct field order and map key
	// order cannot differ between the two sides.
	first, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	generic := decodeRaw(first)
	if generic == nil {
		return []byte("{}"), nil
	}
	if err := enc.Encode(generic); err != nil {
		return nil, fmt.Errorf("canonicalize: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// decoded reports whether v holds only what a JSON decode produces (float64
// too: it encodes as it would after a round trip). Invalid UTF-8, which a
// decode never yields, encodes differently before and after a round trip.
func decoded(v any) bool {
	switch x := v.(type) {
	case nil, bool, json.Number, float64:
		return true
	case string:
		return utf8.ValidString(x)
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !decoded(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !decoded(e) {
				return false
			}
		}
		return true
	}
	return false
}

func decodeRaw(raw []byte) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		// Not JSON: digest the bytes as a string so it still binds.
		return string(raw)
	}
	return out
}

// Digest returns the hex SHA-256 of Canonical(v).
func Digest(v any) (string, error) {
	c, err := Canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}
