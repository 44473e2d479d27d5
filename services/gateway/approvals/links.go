package approvals

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Links are the signed, single-use, short-lived links a notification
// carries to one ticket's page. A link names no ticket: it is a random
// nonce, its expiry and an HMAC over nonce, expiry and the ticket id the
// gateway remembers for it. Opening it only finds the ticket; deciding
// still needs a signed-in approver. Links live in memory: a restart
// forgets them (the page itself still lists the ticket).
type links struct {
	key []byte
	now func() time.Time

	mu      sync.Mutex
	byNonce map[string]*link
}

type link struct {
	ticket  string
	expires time.Time
	used    bool
}

const (
	maxLinkTTL = 15 * time.Minute
	maxLinks   = 10_000
)

var (
	errLinkInvalid = errors.New("this link is not valid")
	errLinkUsed    = errors.New("this link was already used")
	errLinkExpired = errors.New("this link has expired")
)

func newLinks(key []byte, now func() time.Time) *links {
	return &links{key: key, now: now, byNonce: map[string]*link{}}
}

// issue returns the token of a new link to ticket, valid until the ticket
// expires, at most maxLinkTTL.
func (l *links) issue(ticket string, ticketExpires time.Time) (string, error) {
	var raw [18]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	nonce := base64.RawURLEncoding.EncodeToString(raw[:])
	exp := l.now().Add(maxLinkTTL)
	if ticketExpires.Before(exp) {
		exp = ticketExpires
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pruneLocked()
	if len(l.byNonce) >= maxLinks {
		return "", errors.New("too many open links")
	}
	l.byNonce[nonce] = &link{ticket: ticket, expires: exp}
	e := strconv.FormatInt(exp.Unix(), 10)
	return nonce + "." + e + "." + l.mac(nonce, e, ticket), nil
}

// use checks a link and marks it used; it returns the ticket it finds.
func (l *links) use(token string) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(token) > 200 {
		return "", errLinkInvalid
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k, ok := l.byNonce[parts[0]]
	if !ok || !hmac.Equal([]byte(parts[2]), []byte(l.mac(parts[0], parts[1], k.ticket))) ||
		parts[1] != strconv.FormatInt(k.expires.Unix(), 10) {
		return "", errLinkInvalid
	}
	if k.used {
		return "", errLinkUsed
	}
	if !l.now().Before(k.expires) {
		return "", errLinkExpired
	}
	k.used = true
	return k.ticket, nil
}

func (l *links) mac(nonce, exp, ticket string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte("toolgate-approval-link\x00" + nonce + "\x00" + exp + "\x00" + ticket))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// pruneLocked forgets links that expired; used ones are kept until then
// so a second use says "already used".
func (l *links) pruneLocked() {
	now := l.now()
	for n, k := range l.byNonce {
		if !now.Before(k.expires) {
			delete(l.byNonce, n)
		}
	}
}
