package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/truncate"
)

// User headers, most trusted first. In headers mode the first non-empty
// one names the end user; they are only meaningful because the caller
// already holds a token.
var userHeaders = []string{"X-OpenWebUI-User-Email", "X-OpenWebUI-User-Id", "X-Toolgate-User"}

const (
	// MaxUserLen bounds the end-user name in bytes.
	MaxUserLen = 256
	// maxTokenLen bounds what we hash; real tokens are 46 bytes.
	maxTokenLen = 512
	realm       = `Bearer realm="toolgate"`
	// codeInvalidRequest is JSON-RPC's "Invalid Request", used for every
	// refusal so MCP clients show the message instead of a transport error.
	codeInvalidRequest = -32600
)

// Authenticator checks Origin, bearer token and end-user headers before a
// request reaches the gateway's handlers.
type Authenticator struct {
	tokens  TokenSource
	origins map[string]struct{}
	users   *UserTokens
	logger  *slog.Logger
}

// NewAuthenticator returns an Authenticator that accepts the clients of
// tokens (a *Tokens, or a *TokenFile whose changes take effect at once)
// and, for requests that carry an Origin header, only the listed origins
// (scheme://host[:port]). users verifies the end-user tokens of clients
// with user=jwt; it is required when any client has that mode (a
// TokenFile should refuse such a change: TokenFileOptions.Validate with
// users.Accepts). A nil logger discards logs.
func NewAuthenticator(tokens TokenSource, allowedOrigins []string, users UserTokens, logger *slog.Logger) (*Authenticator, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if tokens == nil || tokens.Current() == nil {
		return nil, errors.New("no client tokens")
	}
	if err := users.Accepts(tokens.Current()); err != nil {
		return nil, err
	}
	if len(users.Secret) > 0 && len(users.Secret) < MinUserTokenSecret {
		return nil, fmt.Errorf("the end-user token secret is too short: need at least %d bytes", MinUserTokenSecret)
	}
	if users.Issuer == "" {
		users.Issuer = DefaultUserTokenIssuer
	}
	if users.Now == nil {
		users.Now = time.Now
	}
	a := &Authenticator{tokens: tokens, origins: make(map[string]struct{}, len(allowedOrigins)), users: &users, logger: logger}
	for _, o := range allowedOrigins {
		n, ok := normalizeOrigin(strings.TrimSuffix(strings.TrimSpace(o), "/"))
		if !ok {
			logger.Warn("ignoring malformed allowed origin", "origin", o)
			continue
		}
		a.origins[n] = struct{}{}
	}
	return a, nil
}

// normalizeOrigin lower-cases scheme and host of a serialized origin and
// rejects anything that is not exactly scheme://host[:port].
func normalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
		strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host), true
}

// Middleware authenticates each request and stores its Identity in the
// request context for next. Refusals are JSON-RPC-shaped error bodies.
func (a *Authenticator) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origins := r.Header.Values("Origin"); len(origins) > 0 && !a.originAllowed(origins) {
			a.logger.Info("auth rejected", "remote", r.RemoteAddr, "reason", "origin not allowed", "origin", truncate.String(origins[0], 128))
			writeError(w, http.StatusForbidden, "origin not allowed")
			return
		}

		token, ok := bearerToken(r.Header.Values("Authorization"))
		if !ok {
			a.logger.Info("auth rejected", "remote", r.RemoteAddr, "reason", "missing or malformed bearer token")
			w.Header().Set("WWW-Authenticate", realm)
			writeError(w, http.StatusUnauthorized, "missing or malformed bearer token")
			return
		}
		tokens := a.tokens.Current()
		client, ok := tokens.Lookup(token)
		if !ok {
			// Minted a moment ago? The file is looked at again first.
			if again := a.tokens.Recheck(); again != nil {
				tokens = again
				client, ok = tokens.Lookup(token)
			}
		}
		if !ok {
			a.logger.Info("auth rejected", "remote", r.RemoteAddr, "reason", "unknown bearer token")
			w.Header().Set("WWW-Authenticate", realm+`, error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, "invalid bearer token")
			return
		}

		user, role, missing, refused := a.endUser(client, r.Header)
		if refused != nil {
			a.logger.Info("auth rejected", "remote", r.RemoteAddr, "reason", refused.msg, "client", client.Name)
			writeError(w, refused.status, refused.msg)
			return
		}
		ctx := WithIdentity(r.Context(), Identity{Client: client, User: user, UserRole: role, UserMissing: missing})
		if r.Method == http.MethodGet {
			// A GET may be an event stream that stays open for hours: it
			// ends when its token leaves the tokens file. Other requests
			// end by themselves, and cutting a write off midway would leave
			// its outcome unknown.
			var stop func()
			ctx, stop = a.whileValid(ctx, tokens, token, client)
			defer stop()
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (a *Authenticator) originAllowed(values []string) bool {
	// Browsers send exactly one Origin; more than one is not a browser we
	// can reason about.
	if len(values) != 1 {
		return false
	}
	n, ok := normalizeOrigin(values[0])
	if !ok {
		return false
	}
	_, ok = a.origins[n]
	return ok
}

// bearerToken extracts the token of a single "Bearer <token>" header.
func bearerToken(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(values[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	if token == "" || len(token) > maxTokenLen || !isB64Token(token) {
		return "", false
	}
	return token, true
}

// isB64Token reports whether s matches RFC 6750's b64token.
func isB64Token(s string) bool {
	end := strings.TrimRight(s, "=")
	if end == "" {
		return false
	}
	for i := 0; i < len(end); i++ {
		c := end[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string   `json:"jsonrpc"`
	ID      any      `json:"id"`
	Error   rpcError `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: nil, Error: rpcError{Code: codeInvalidRequest, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
