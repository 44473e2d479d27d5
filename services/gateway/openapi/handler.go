package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/gateway/mcpwire"
	"github.com/toolgate/toolgate/services/gateway/router"
)

// Catalog is the router as the OpenAPI front sees it.
type Catalog interface {
	VisibleTools(ctx context.Context, endpoint string) ([]router.OfferedTool, bool)
	CallTool(ctx context.Context, endpoint, tool string, args json.RawMessage) (*mcp.CallToolResult, error)
	EndpointInstructions(ctx context.Context, endpoint string) string
}

// Prefix is where the OpenAPI tool servers live.
const Prefix = "/openapi/"

// DocumentFile is the last path segment of each document.
const DocumentFile = "openapi.json"

// Config configures the OpenAPI front.
type Config struct {
	// PublicURL is the gateway's base URL as clients reach it (scheme, host,
	// any path prefix of a reverse proxy), without a trailing slash. Empty:
	// documents name their server with a URL relative to where they were
	// fetched from. The request's Host and X-Forwarded-* headers are never
	// used, so a spoofed header cannot send a client (and its token) to
	// another host.
	PublicURL string
}

// Handler serves GET /openapi/<name>/openapi.json (and the same document
// at /openapi/<name> and /openapi/<name>/) and POST /openapi/<name>/<tool>. The caller's identity must be in the request
// context: the gateway's authentication middleware runs first.
type Handler struct {
	cfg     Config
	catalog Catalog
	log     *slog.Logger
	// omitted remembers which left-out tools were logged, so a client
	// that reads the document often does not flood the log.
	omitted sync.Map
}

// New returns the OpenAPI front of catalog.
func New(cfg Config, catalog Catalog, logger *slog.Logger) *Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &Handler{cfg: cfg, catalog: catalog, log: logger}
}

// ServerURL is the servers[0].url of endpoint's document.
func (h *Handler) ServerURL(endpoint string) string {
	return h.cfg.PublicURL + strings.TrimSuffix(Prefix, "/") + "/" + endpoint
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
	endpoint, leaf, _ := strings.Cut(rest, "/")
	if ok && endpoint != "" && leaf == "" {
		// The tool server's own address, /openapi/<service>, is what a
		// person gives OpenWebUI (it appends /openapi.json itself) and so
		// what they try first: it answers the document too.
		leaf = DocumentFile
	}
	if !ok || endpoint == "" || strings.Contains(leaf, "/") {
		writeError(w, http.StatusNotFound, toolerr.New(toolerr.NotFound, "no such path; documents are at /openapi/<service>/openapi.json"))
		return
	}
	switch {
	case leaf == DocumentFile && r.Method == http.MethodGet:
		h.document(w, r, endpoint)
	case leaf == DocumentFile:
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, toolerr.New(toolerr.InvalidArgument, "the document is read with GET"))
	case r.Method == http.MethodPost:
		h.call(w, r, endpoint, leaf)
	default:
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, toolerr.New(toolerr.InvalidArgument, "a tool is called with POST and a JSON body"))
	}
}

func (h *Handler) document(w http.ResponseWriter, r *http.Request, endpoint string) {
	tools, ok := h.catalog.VisibleTools(r.Context(), endpoint)
	if !ok {
		writeError(w, http.StatusNotFound, noEndpoint(endpoint))
		return
	}
	doc, omitted, err := Document(DocumentInput{
		Name: endpoint, ServerURL: h.ServerURL(endpoint),
		Description: h.catalog.EndpointInstructions(r.Context(), endpoint), Tools: tools,
	})
	for _, o := range omitted {
		if _, seen := h.omitted.LoadOrStore(endpoint+"\x00"+o.Tool+"\x00"+o.Reason, struct{}{}); !seen {
			h.log.Warn("tool left out of the OpenAPI document; it stays callable over MCP", "endpoint", endpoint, "tool", o.Tool, "reason", o.Reason)
		}
	}
	if err != nil {
		h.log.Error("OpenAPI document failed", "endpoint", endpoint, "error", err)
		writeError(w, http.StatusInternalServerError, toolerr.New(toolerr.Internal, "the document could not be built"))
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

func noEndpoint(endpoint string) error {
	return toolerr.New(toolerr.NotFound, "no tool server named %q; documents are at /openapi/<service>/openapi.json", truncateName(endpoint))
}

func (h *Handler) call(w http.ResponseWriter, r *http.Request, endpoint, tool string) {
	if r.ContentLength > mcpwire.MaxRequestBytes {
		writeError(w, http.StatusRequestEntityTooLarge, toolerr.New(toolerr.TooLarge, "the request body is larger than %d bytes", mcpwire.MaxRequestBytes))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcpwire.MaxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, toolerr.New(toolerr.TooLarge, "the request body is larger than %d bytes", mcpwire.MaxRequestBytes))
			return
		}
		writeError(w, http.StatusBadRequest, toolerr.New(toolerr.InvalidArgument, "the request body could not be read"))
		return
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		// A tool without arguments may be called with an empty body.
		body = []byte("{}")
	} else if !jsonMediaType(r.Header.Get("Content-Type")) {
		writeError(w, http.StatusUnsupportedMediaType, toolerr.New(toolerr.InvalidArgument, "the body must be JSON (Content-Type: application/json)"))
		return
	}
	if !json.Valid(body) {
		writeError(w, http.StatusBadRequest, toolerr.New(toolerr.InvalidArgument, "the body is not valid JSON"))
		return
	}
	if body[0] != '{' {
		writeError(w, http.StatusBadRequest, toolerr.New(toolerr.InvalidArgument, "the body must be a JSON object of the tool's arguments"))
		return
	}
	res, err := h.catalog.CallTool(r.Context(), endpoint, tool, body)
	if errors.Is(err, router.ErrNoSuchTool) {
		// Unknown and hidden tools answer alike.
		writeError(w, http.StatusNotFound, toolerr.New(toolerr.NotFound, "no tool named %q on this tool server", truncateName(tool)))
		return
	}
	if errors.Is(err, router.ErrLoading) {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, toolerr.New(toolerr.Busy, "%s", err.Error()))
		return
	}
	if err != nil {
		h.log.Error("OpenAPI call failed", "endpoint", endpoint, "tool", tool, "error", err)
		writeError(w, http.StatusInternalServerError, toolerr.New(toolerr.Internal, "the call could not be run"))
		return
	}
	out, code := resultBody(res)
	status := http.StatusOK
	if res.IsError {
		status = StatusOf(code)
		if code == toolerr.Busy {
			w.Header().Set("Retry-After", "1")
		}
	}
	writeJSON(w, status, out)
}

// resultBody turns an MCP result into the JSON object the OpenAPI caller
// gets: the structured content, which the gateway's services always send
// (a text-only result is used when it is a JSON object, else wrapped).
// Pictures are MCP content only; the body says how many were left out.
func resultBody(res *mcp.CallToolResult) ([]byte, toolerr.Code) {
	var obj map[string]json.RawMessage
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			_ = json.Unmarshal(raw, &obj)
		}
	}
	images := 0
	var text strings.Builder
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.TextContent:
			text.WriteString(c.Text)
		case mcp.ImageContent:
			images++
		}
	}
	if obj == nil {
		if json.Unmarshal([]byte(text.String()), &obj) != nil || obj == nil {
			s, _ := marshal(text.String())
			obj = map[string]json.RawMessage{"result": s}
		}
	}
	if images > 0 {
		note, _ := marshal(fmt.Sprintf("%d picture(s) left out: pictures are delivered over MCP only (/mcp/<service>)", images))
		obj["toolgate_note"] = note
	}
	code := toolerr.Code("")
	if res.IsError {
		code = toolerr.Internal
		var e struct {
			Code toolerr.Code `json:"code"`
		}
		if raw, ok := obj["error"]; ok && json.Unmarshal(raw, &e) == nil && e.Code != "" {
			code = e.Code
		}
	}
	b, err := marshal(obj)
	if err != nil {
		b, _ = marshal(toolkit.ErrorBody{Error: toolkit.ErrorDetail{Code: toolerr.Internal, Message: "the result could not be encoded"}})
		return b, toolerr.Internal
	}
	return b, code
}

// StatusOf maps a stable error code to the HTTP status of a failed call.
// The body carries the code itself, so clients can branch on either.
func StatusOf(code toolerr.Code) int {
	switch code {
	case toolerr.NotFound:
		return http.StatusNotFound
	case toolerr.Forbidden:
		return http.StatusForbidden
	case toolerr.InvalidArgument, toolerr.TooLarge:
		// The request was well-formed JSON but cannot be served as asked
		// (too_large: the answer would exceed a cap; narrow the request).
		return http.StatusUnprocessableEntity
	case toolerr.Busy:
		return http.StatusTooManyRequests
	case toolerr.Timeout:
		return http.StatusGatewayTimeout
	case toolerr.UpstreamUnavailable, toolerr.AuthFailed:
		// auth_failed from a service: the application refused the
		// service's own credentials, which is no fault of the caller.
		return http.StatusBadGateway
	case toolerr.Internal:
		return http.StatusInternalServerError
	default:
		// A code the gateway does not know came from a service.
		return http.StatusBadGateway
	}
}

func jsonMediaType(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

func truncateName(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

func writeError(w http.ResponseWriter, status int, err error) {
	b, _ := marshal(toolkit.ErrorBody{Error: toolkit.ErrorDetail{Code: toolerr.CodeOf(err), Message: toolerr.MessageOf(err)}})
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	// Documents and results are per caller.
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
