package toolkit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// MaxRequestBytes bounds one HTTP request body to /mcp.
const MaxRequestBytes = 1 << 20

func (s *Service) authenticate(next http.Handler) http.Handler {
	want := sha256.Sum256(s.opts.ServiceToken)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
		if !ok || !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			s.log.Info("rejected request without the gateway token", "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate-service"`)
			writeJSON(w, http.StatusUnauthorized, map[string]any{
				"jsonrpc": "2.0", "id": nil,
				"error": map[string]any{"code": -32001, "message": "only the toolgate gateway may call this service"},
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tooLarge := func() {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{
				"jsonrpc": "2.0", "id": nil,
				"error": map[string]any{"code": -32600, "message": fmt.Sprintf("request body is larger than %d bytes", MaxRequestBytes)},
			})
		}
		if r.ContentLength > MaxRequestBytes {
			tooLarge()
			return
		}
		// Read the body here rather than letting the MCP server hit the
		// limit: it reports a read error as a 400 parse error, and a chunked
		// body has no length to check up front.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
		if err != nil {
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				tooLarge()
				return
			}
			writeJSON(w, http.StatusBadRequest, map[string]any{
				"jsonrpc": "2.0", "id": nil,
				"error": map[string]any{"code": -32700, "message": "the request body could not be read"},
			})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func (s *Service) ready(w http.ResponseWriter, r *http.Request) {
	if s.opts.Ready == nil {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := s.opts.Ready(ctx); err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"status": "not_ready",
			"error":  ErrorDetail{Code: toolerr.CodeOf(err), Message: s.opts.Redactor.String(toolerr.MessageOf(err))},
		})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
