package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// OpenWebUI's defaults for its signed user-info token
// (FORWARD_USER_INFO_HEADER_JWT, the issuer it writes).
const (
	DefaultUserTokenHeader = "X-OpenWebUI-User-Jwt"
	DefaultUserTokenIssuer = "open-webui"
	// MinUserTokenSecret is the shortest accepted shared secret: an HS256
	// key should be as long as the hash (RFC 7518, 3.2).
	MinUserTokenSecret = 32
	// userTokenLeeway absorbs clock skew between OpenWebUI and the gateway.
	userTokenLeeway = 30 * time.Second
	// maxUserToken bounds what is parsed; OpenWebUI's tokens are ~300 bytes.
	maxUserToken = 4 << 10
)

// UserTokens configures verification of OpenWebUI's signed user-info token
// for clients with user=jwt. OpenWebUI mints it per request with PyJWT:
// HS256 over {sub, email, name, role, iss: "open-webui", iat, exp} with the
// secret FORWARD_USER_INFO_HEADER_JWT_SECRET; it sets no audience.
type UserTokens struct {
	// Secret is the shared HS256 secret; empty turns verification off,
	// and then a user=jwt client is refused at start.
	Secret []byte
	// Header carries the token (default DefaultUserTokenHeader).
	Header string
	// Issuer must equal the token's iss (default DefaultUserTokenIssuer).
	Issuer string
	// Audience, when set, must be in the token's aud.
	Audience string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Accepts says whether the clients of t can be served with u: a client
// with user=jwt needs the secret its user tokens are signed with.
func (u UserTokens) Accepts(t *Tokens) error {
	if names := t.Names(UserJWT); len(names) > 0 && len(u.Secret) == 0 {
		return fmt.Errorf("client %s has user=jwt but no end-user token secret is configured (TOOLGATE_USER_JWT_SECRET_FILE)", strings.Join(names, ", "))
	}
	return nil
}

// userClaims are the claims OpenWebUI writes.
type userClaims struct {
	Email string `json:"email"`
	Name  string `json:"name"`
	Role  string `json:"role"`
	jwt.RegisteredClaims
}

// plainUserHeaders are every header that names an end user without proof:
// the ones we read in headers mode and the ones OpenWebUI sends besides.
var plainUserHeaders = []string{
	"X-OpenWebUI-User-Email", "X-OpenWebUI-User-Id", "X-Toolgate-User",
	"X-OpenWebUI-User-Name", "X-OpenWebUI-User-Role",
}

// refusal is why a request's end user could not be established; its
// message is safe to show (it never quotes a token).
type refusal struct {
	status int
	msg    string
}

// header is the name the token comes in, as configured (for messages).
func (u *UserTokens) header() string {
	if u == nil || u.Header == "" {
		return DefaultUserTokenHeader
	}
	return u.Header
}

// endUser establishes the end user of a request from client c as c's mode
// says. A request that names its user another way than configured is
// refused, never treated as "no user".
func (a *Authenticator) endUser(c Client, h http.Header) (user, role, missing string, _ *refusal) {
	tokenHeader := a.users.header()
	hasToken := len(h.Values(tokenHeader)) > 0
	var userHeader string // the first plain user header sent, if any
	for _, name := range plainUserHeaders {
		if h.Get(name) != "" {
			userHeader = name
			break
		}
	}
	switch c.UserMode {
	case UserHeaders:
		if hasToken {
			return "", "", "", &refusal{http.StatusBadRequest, fmt.Sprintf(
				"client %s sends a signed user token (%s) but is set up for plain user headers: set user=jwt on its line in the tokens file", c.Name, tokenHeader)}
		}
		u, ok := headerUser(h)
		if !ok {
			return "", "", "", &refusal{http.StatusBadRequest, "invalid user header"}
		}
		return u, "", "", nil
	case UserJWT:
		if userHeader != "" {
			return "", "", "", &refusal{http.StatusBadRequest, fmt.Sprintf(
				"client %s identifies its end users by signed token (%s); plain user headers such as %s are refused", c.Name, tokenHeader, userHeader)}
		}
		values := h.Values(tokenHeader)
		if len(values) == 0 || strings.TrimSpace(values[0]) == "" {
			// Discovery goes on (OpenWebUI fetches tool lists and OpenAPI
			// documents without a user); the router refuses every call.
			return "", "", missingUserToken(tokenHeader, c.Name), nil
		}
		if len(values) > 1 {
			return "", "", "", &refusal{http.StatusBadRequest, "more than one end-user token"}
		}
		user, role, refused := a.verifyUserToken(strings.TrimSpace(values[0]))
		return user, role, "", refused
	default:
		if hasToken || userHeader != "" {
			name := userHeader
			if hasToken {
				name = tokenHeader
			}
			return "", "", "", &refusal{http.StatusBadRequest, fmt.Sprintf(
				"client %s names an end user (%s) but is not set up to: add user=jwt or user=headers to its line in the tokens file", c.Name, name)}
		}
		return "", "", "", nil
	}
}

// missingUserToken is why every call of a user=jwt client that sent no
// user token is refused.
func missingUserToken(header, client string) string {
	return fmt.Sprintf("missing end-user token %s: client %s must send OpenWebUI's signed user token with every call (OpenWebUI: ENABLE_FORWARD_USER_INFO_HEADERS=true and FORWARD_USER_INFO_HEADER_JWT_SECRET)", header, client)
}

// verifyUserToken checks an OpenWebUI user token: HS256 only (alg "none",
// HS384/512 and every asymmetric algorithm are refused before any key is
// used), a valid signature, an expiry that has not passed, an issue time
// not in the future, the configured issuer (and audience), and a user and
// role that are safe to use.
func (a *Authenticator) verifyUserToken(raw string) (user, role string, _ *refusal) {
	if a.users == nil || len(a.users.Secret) == 0 {
		return "", "", &refusal{http.StatusForbidden, "end-user tokens cannot be verified: no secret is configured"}
	}
	if len(raw) > maxUserToken {
		return "", "", &refusal{http.StatusBadRequest, "end-user token is too large"}
	}
	// The parser refuses every other algorithm too (WithValidMethods);
	// looking first only makes the message say so.
	if alg, ok := tokenAlg(raw); ok && alg != jwt.SigningMethodHS256.Alg() {
		return "", "", &refusal{http.StatusForbidden, "end-user token is not signed with HS256"}
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(a.users.Issuer),
		jwt.WithLeeway(userTokenLeeway),
		jwt.WithTimeFunc(a.users.Now),
	}
	if a.users.Audience != "" {
		opts = append(opts, jwt.WithAudience(a.users.Audience))
	}
	var claims userClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(t *jwt.Token) (any, error) {
		if _, ok := t.Method.(*jwt.SigningMethodHMAC); !ok {
			return nil, jwt.ErrTokenUnverifiable
		}
		return a.users.Secret, nil
	}, opts...)
	if err != nil {
		return "", "", &refusal{http.StatusForbidden, userTokenProblem(err)}
	}
	user = claims.Email
	if user == "" {
		user = claims.Subject
	}
	if user == "" || !validUser(user) {
		return "", "", &refusal{http.StatusForbidden, "end-user token names no valid user (email or sub)"}
	}
	if !validRole(claims.Role) {
		return "", "", &refusal{http.StatusForbidden, "end-user token carries no valid role"}
	}
	return user, claims.Role, nil
}

// userTokenProblem says what is wrong with a token without quoting it.
func userTokenProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "end-user token is malformed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "end-user token signature is invalid (is toolgate's secret the same as OpenWebUI's FORWARD_USER_INFO_HEADER_JWT_SECRET?)"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "end-user token is not signed with HS256"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "end-user token has expired"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "end-user token has the wrong issuer"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "end-user token lacks a required claim (exp, iss, or the configured aud)"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued), errors.Is(err, jwt.ErrTokenNotValidYet):
		return "end-user token is not valid yet (are the clocks of OpenWebUI and toolgate apart?)"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "end-user token has the wrong audience"
	default:
		return "end-user token is invalid"
	}
}

// tokenAlg reads the alg of a token's header, if it has a readable one.
func tokenAlg(raw string) (string, bool) {
	head, _, ok := strings.Cut(raw, ".")
	if !ok {
		return "", false
	}
	data, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", false
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(data, &h) != nil {
		return "", false
	}
	return h.Alg, true
}

// headerUser returns the first non-empty plain user header, validated.
func headerUser(h http.Header) (string, bool) {
	for _, name := range userHeaders {
		if v := h.Get(name); v != "" {
			return v, validUser(v)
		}
	}
	return "", true
}

// validUser: at most MaxUserLen bytes of UTF-8 without control characters
// or line separators (it lands in logs, the audit and the approval page).
func validUser(v string) bool {
	if len(v) > MaxUserLen || !utf8.ValidString(v) {
		return false
	}
	for _, r := range v {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// validRole: OpenWebUI's roles are admin, user and pending; any name the
// policy data could list is accepted, nothing else.
func validRole(r string) bool { return validName(r) }
