package stdio

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
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Messages the client sees; none of them may ever carry the token.
const (
	msgUnauthorized   = "gateway rejected the token (check TOOLGATE_TOKEN)"
	msgSessionExpired = "gateway session expired (HTTP 404) and a new one could not be opened; restart the MCP client"
)

// maxErrorBody bounds how much of a non-2xx body is read for its message.
const maxErrorBody = 64 << 10

// errTooLarge reports a gateway body over the response bound.
var errTooLarge = errors.New("response too large")

// forward POSTs one message to the gateway and writes what comes back. Every
// request in the message gets exactly one response line: the gateway's, or
// an error made up here when the gateway could not give one.
func (b *bridge) forward(ctx context.Context, in inbound) {
	b.forwardOnce(ctx, in, true)
}

// forwardOnce sends in; mayResume allows one transparent re-open of an
// expired session followed by one resend.
func (b *bridge) forwardOnce(ctx context.Context, in inbound, mayResume bool) {
	pending := newPendingSet(in.requests)
	log := b.log.With("method", in.method)
	if hasID(in.id) {
		log = log.With("id", string(in.id))
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(in.body))
	if err != nil {
		b.fail(log, pending, "building the gateway request failed")
		return
	}
	sentSession := b.setHeaders(req.Header, in)

	resp, err := b.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			log.Debug("request abandoned", "err", b.scrub(err.Error()))
			return
		}
		b.fail(log, pending, "gateway unreachable at "+b.redactedURL+": "+b.scrub(transportCause(err)))
		return
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		log.Warn("gateway rejected the token", "status", resp.StatusCode)
		b.fail(log, pending, msgUnauthorized)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if in.isInitialize() {
			b.adoptSession(resp.Header.Get(mcp.HeaderSessionID))
			b.mu.Lock()
			b.initBody = in.body
			b.mu.Unlock()
		}
		b.readSuccess(ctx, log, in, resp, pending)
		if !pending.empty() && ctx.Err() == nil {
			b.fail(log, pending, fmt.Sprintf("gateway sent no response to this request (HTTP %d)", resp.StatusCode))
		}
	case resp.StatusCode == http.StatusNotFound && sentSession != "" && mayResume && b.resume(ctx, log, sentSession):
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		log.Info("gateway session had expired; opened a new one and sent the message again")
		b.forwardOnce(ctx, in, false)
	default:
		b.readFailure(log, in, resp, sentSession, pending)
	}
}

// resume replays the client's initialize to open a new session after the
// gateway forgot stale, and sends notifications/initialized on it. It
// reports whether a session is usable now; concurrent callers share one
// re-open.
func (b *bridge) resume(ctx context.Context, log *slog.Logger, stale string) bool {
	b.resumeMu.Lock()
	defer b.resumeMu.Unlock()
	b.mu.Lock()
	current, init := b.sessionID, b.initBody
	b.mu.Unlock()
	if init == nil {
		return false
	}
	if current != "" && current != stale {
		return true // another request re-opened it already
	}
	post := func(body []byte, session string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+b.token)
		if session != "" {
			req.Header.Set(mcp.HeaderSessionID, session)
			b.mu.Lock()
			if b.protocolVersion != "" {
				req.Header.Set(mcp.HeaderProtocolVersion, b.protocolVersion)
			}
			b.mu.Unlock()
		}
		return b.client.Do(req)
	}
	resp, err := post(init, "")
	if err != nil {
		log.Warn("re-opening the gateway session failed", "err", b.scrub(transportCause(err)))
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, int64(b.maxResponse)))
	resp.Body.Close()
	session := resp.Header.Get(mcp.HeaderSessionID)
	if resp.StatusCode/100 != 2 || session == "" {
		log.Warn("re-opening the gateway session failed", "status", resp.StatusCode)
		return false
	}
	b.adoptSession(session)
	resp, err = post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), session)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// setHeaders sets the transport headers for in and returns the session id
// it sent, if any.
func (b *bridge) setHeaders(h http.Header, in inbound) (sentSession string) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if b.token != "" {
		h.Set("Authorization", "Bearer "+b.token)
	}

	b.mu.Lock()
	session, version := b.sessionID, b.protocolVersion
	var tool *mcp.Tool
	modern := mcp.IsModernProtocol(in.metaVersion) && !in.batch && headerSafe(in.metaVersion)
	if modern && in.method == string(mcp.MethodToolsCall) {
		tool = b.paramTools[toolName(in.params)]
	}
	b.mu.Unlock()

	switch {
	case modern:
		// 2026-07-28: no session; the version and routing headers mirror
		// the body, and the gateway checks that they agree.
		h.Set(mcp.HeaderProtocolVersion, in.metaVersion)
		for k, v := range mcp.StandardHeaders(in.metaVersion, mcp.MCPMethod(in.method), in.params) {
			if headerSafe(v) {
				h.Set(k, v)
			}
		}
		if tool != nil {
			for k, v := range mcp.GenerateParamHeaders(tool, in.params) {
				h.Set(k, v)
			}
		}
	case in.isInitialize():
		// A fresh initialize opens a new session: send neither.
	default:
		if version != "" {
			h.Set(mcp.HeaderProtocolVersion, version)
		}
		if session != "" {
			h.Set(mcp.HeaderSessionID, session)
			sentSession = session
		}
	}
	return sentSession
}

// readSuccess writes the messages of a 2xx response.
func (b *bridge) readSuccess(ctx context.Context, log *slog.Logger, in inbound, resp *http.Response, pending *pendingSet) {
	switch ct := mediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		body, err := readBounded(resp.Body, b.maxResponse)
		switch {
		case errors.Is(err, errTooLarge):
			b.fail(log, pending, fmt.Sprintf("gateway response exceeds %d bytes", b.maxResponse))
		case err != nil:
			if ctx.Err() == nil {
				b.fail(log, pending, "reading the gateway response failed: "+b.scrub(transportCause(err)))
			}
		default:
			for _, m := range splitMessages(body) {
				b.emit(log, in, m, pending)
			}
		}
	case "text/event-stream":
		b.readSSE(ctx, log, in, resp.Body, pending)
	case "":
		// 202 Accepted (notifications, responses) has no body.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	default:
		b.fail(log, pending, fmt.Sprintf("gateway answered with unexpected content type %q", sanitize(ct)))
	}
}

// readSSE writes every message event of an SSE response and stops once all
// requests of in are answered, even if the gateway keeps the stream open.
func (b *bridge) readSSE(ctx context.Context, log *slog.Logger, in inbound, body io.Reader, pending *pendingSet) {
	sse := newSSEReader(body, b.maxResponse)
	tooLarge := false
	for {
		data, err := sse.next()
		switch {
		case errors.Is(err, errEventTooLarge):
			log.Warn("gateway sent an oversize event; dropped", "limit_bytes", b.maxResponse)
			tooLarge = true
			continue
		case errors.Is(err, io.EOF):
		case err != nil:
			if ctx.Err() == nil {
				log.Warn("gateway event stream broke", "err", b.scrub(transportCause(err)))
			}
		default:
			if len(bytes.TrimSpace(data)) == 0 {
				continue // priming events carry an id and no data
			}
			b.emit(log, in, data, pending)
			if len(in.requests) > 0 && pending.empty() {
				return
			}
			continue
		}
		if tooLarge && !pending.empty() {
			b.fail(log, pending, fmt.Sprintf("gateway response exceeds %d bytes", b.maxResponse))
		}
		return
	}
}

// readFailure handles a non-2xx answer other than 401. A JSON-RPC response
// in the body that answers one of our requests is passed on; the rest get
// an error naming the status.
func (b *bridge) readFailure(log *slog.Logger, in inbound, resp *http.Response, sentSession string, pending *pendingSet) {
	body, _ := readBounded(resp.Body, maxErrorBody)
	expired := resp.StatusCode == http.StatusNotFound && sentSession != ""
	if expired {
		b.clearSession(sentSession)
		log.Warn("gateway ended the MCP session; cleared it, the client must initialize again")
	}

	detail := ""
	if mediaType(resp.Header.Get("Content-Type")) == "application/json" {
		for _, m := range splitMessages(body) {
			var env envelope
			if json.Unmarshal(m, &env) != nil {
				continue
			}
			if env.isResponse() && pending.has(idKey(env.ID)) {
				b.emit(log, in, m, pending)
				continue
			}
			if env.Error != nil && detail == "" {
				detail = env.Error.Message
			}
		}
	} else {
		detail = firstLine(body)
	}

	msg := fmt.Sprintf("gateway answered HTTP %d", resp.StatusCode)
	if expired {
		msg = msgSessionExpired
	}
	if detail = sanitize(b.scrub(detail)); detail != "" {
		msg += ": " + detail
	}
	b.fail(log, pending, msg)
}

// emit writes one message from the gateway as one line, and learns the
// session state carried by initialize and tools/list results.
func (b *bridge) emit(log *slog.Logger, in inbound, msg []byte, pending *pendingSet) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, msg); err != nil {
		log.Warn("gateway sent a message that is not JSON; dropped")
		return
	}
	var env envelope
	if err := json.Unmarshal(buf.Bytes(), &env); err != nil {
		log.Warn("gateway sent a message that is not a JSON-RPC object; dropped")
		return
	}
	if env.isResponse() {
		key := idKey(env.ID)
		if pending.has(key) && env.Error == nil {
			switch {
			case in.isInitialize():
				b.adoptProtocolVersion(log, env.Result)
			case in.method == string(mcp.MethodToolsList) && mcp.IsModernProtocol(in.metaVersion):
				b.learnParamTools(env.Result)
			}
		}
		pending.done(key)
	}
	b.out.writeLine(buf.Bytes())
}

// fail answers every pending request with a JSON-RPC internal error; a
// message without requests (notification, response) is only logged.
func (b *bridge) fail(log *slog.Logger, pending *pendingSet, msg string) {
	msg = b.scrub(msg)
	ids := pending.remaining()
	if len(ids) == 0 {
		log.Warn("gateway did not take the message", "reason", msg)
		return
	}
	log.Warn("answering with an error", "reason", msg)
	for _, id := range ids {
		b.out.writeLine(errorResponse(id, codeInternalError, msg))
		pending.done(idKey(id))
	}
}

func (b *bridge) adoptSession(id string) {
	if id != "" && !visibleASCII(id) {
		b.log.Warn("gateway sent a malformed session id; ignored")
		id = ""
	}
	b.mu.Lock()
	b.sessionID = id
	b.mu.Unlock()
}

func (b *bridge) clearSession(stale string) {
	b.mu.Lock()
	if b.sessionID == stale {
		b.sessionID = ""
	}
	b.mu.Unlock()
}

func (b *bridge) adoptProtocolVersion(log *slog.Logger, result json.RawMessage) {
	var r struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if json.Unmarshal(result, &r) != nil || r.ProtocolVersion == "" || !visibleASCII(r.ProtocolVersion) {
		log.Warn("initialize result carries no usable protocolVersion")
		return
	}
	b.mu.Lock()
	b.protocolVersion = r.ProtocolVersion
	b.mu.Unlock()
}

// learnParamTools records which listed tools bind arguments to Mcp-Param-*
// headers, which 2026-07-28 requires on their tools/call requests.
func (b *bridge) learnParamTools(result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &r) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range r.Tools {
		tool := &mcp.Tool{Name: t.Name, RawInputSchema: t.InputSchema}
		if len(mcp.ExtractParamHeaderBindings(tool)) > 0 {
			b.paramTools[t.Name] = tool
		} else {
			delete(b.paramTools, t.Name)
		}
	}
}

// endSession tells the gateway the session is over (spec: clients SHOULD
// DELETE it); a gateway that does not support that answers 405.
func (b *bridge) endSession(ctx context.Context) {
	b.mu.Lock()
	session, version := b.sessionID, b.protocolVersion
	b.mu.Unlock()
	if session == "" || ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sessionEndTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.url, nil)
	if err != nil {
		return
	}
	if b.token != "" {
		req.Header.Set("Authorization", "Bearer "+b.token)
	}
	req.Header.Set(mcp.HeaderSessionID, session)
	if version != "" {
		req.Header.Set(mcp.HeaderProtocolVersion, version)
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.log.Debug("ending the session failed", "err", b.scrub(transportCause(err)))
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	b.log.Debug("session ended", "status", resp.StatusCode)
}

// scrub removes the token from text headed for stdout or the log, as a
// second line of defence: nothing is expected to echo it.
func (b *bridge) scrub(s string) string {
	if b.token == "" {
		return s
	}
	return strings.ReplaceAll(s, b.token, "[redacted]")
}

// transportCause drops the url.Error wrapper (its "Post <url>:" prefix
// repeats what the message already says).
func transportCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

// readBounded reads r up to limit bytes; a longer body yields errTooLarge
// together with the first limit bytes.
func readBounded(r io.Reader, limit int) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return body, err
	}
	if len(body) > limit {
		return body[:limit], errTooLarge
	}
	return body, nil
}

// splitMessages returns the messages of a JSON body: the elements of a
// batch array, or the body itself.
func splitMessages(body []byte) []json.RawMessage {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] == '[' {
		var msgs []json.RawMessage
		if json.Unmarshal(body, &msgs) == nil {
			return msgs
		}
	}
	return []json.RawMessage{body}
}

func toolName(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name
}

func firstLine(body []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(body), []byte("\n"))
	return string(line)
}

// sanitize makes gateway-provided text safe to show: printable characters
// only, at most 200 bytes, cut on a rune boundary.
func sanitize(s string) string {
	const max = 200
	var sb strings.Builder
	for _, r := range s {
		if r == utf8.RuneError || r < 0x20 || r == 0x7f {
			r = ' '
		}
		if sb.Len()+utf8.RuneLen(r) > max {
			sb.WriteString("…")
			break
		}
		sb.WriteRune(r)
	}
	return strings.TrimSpace(sb.String())
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return s != ""
}
