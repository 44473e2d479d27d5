package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// errTransport marks a failure of the connection, not of the service's
// answer: the session may be broken and a read may be retried.
var errTransport = errors.New("transport failure")

// CallRaw runs one tool like Call, on the same session, but sends args as
// given (the caller's canonical JSON) and returns the service's result
// object as it arrived, undecoded: the gateway passes reads through without
// decoding and re-encoding them.
func (b *Backend) CallRaw(ctx context.Context, tool string, args json.RawMessage, retry bool) (json.RawMessage, error) {
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	default:
		return nil, toolerr.New(toolerr.Busy, "service %s has too many calls in flight; try again shortly", b.cfg.Name)
	}
	attempts := 1
	if retry {
		attempts = 2
	}
	var err error
	for range attempts {
		var c *client.Client
		if c, err = b.session(ctx); err != nil {
			break
		}
		var res json.RawMessage
		if res, err = b.post(ctx, tool, args); err == nil {
			return res, nil
		}
		if !errors.Is(err, errTransport) || ctx.Err() != nil {
			break
		}
		b.log.Warn("service call failed; reopening session", "error", err)
		b.reset(c)
	}
	return nil, b.classifyRaw(ctx, err)
}

func (b *Backend) classifyRaw(ctx context.Context, err error) error {
	var te *toolerr.Error
	switch {
	case errors.As(err, &te):
		return err
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return toolerr.Wrap(toolerr.Timeout, err, "service %s did not answer before the call's deadline", b.cfg.Name)
	case errors.Is(err, context.Canceled):
		return toolerr.Wrap(toolerr.Timeout, err, "the call was cancelled")
	case errors.Is(err, errTransport):
		return b.unreachable(err)
	default:
		return b.classify(ctx, err)
	}
}

// post sends one tools/call on the session the last initialize opened.
func (b *Backend) post(ctx context.Context, tool string, args json.RawMessage) (json.RawMessage, error) {
	b.mu.Lock()
	sessionID, version := b.sessionID, b.version
	b.mu.Unlock()
	id := b.nextID.Add(1)
	name, err := json.Marshal(tool)
	if err != nil {
		return nil, err
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	body := make([]byte, 0, 96+len(name)+len(args))
	body = append(body, `{"jsonrpc":"2.0","id":`...)
	body = strconv.AppendInt(body, id, 10)
	body = append(body, `,"method":"tools/call","params":{"name":`...)
	body = append(body, name...)
	body = append(body, `,"arguments":`...)
	body = append(body, args...)
	body = append(body, "}}"...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+string(b.cfg.Token))
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := b.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errTransport, err)
	}
	defer resp.Body.Close()
	limit := b.cfg.MaxResponseBytes
	buf := getBuffer()
	defer putBuffer(buf)
	raw, err := readResponse(*buf, resp, limit)
	*buf = raw
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", errTransport, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, toolerr.New(toolerr.AuthFailed, "service %s rejected the gateway's service token; check the token files", b.cfg.Name)
	case resp.StatusCode == http.StatusNotFound && sessionID != "":
		// The service no longer knows the session (it restarted).
		return nil, fmt.Errorf("%w: session ended by the service", errTransport)
	case len(raw) > limit:
		return nil, toolerr.New(toolerr.TooLarge, "service %s answered with more than %d bytes", b.cfg.Name, limit)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" && resp.StatusCode == http.StatusOK {
		raw = eventWithID(raw, id)
	}
	if result, ok := plainResponse(raw, id); ok {
		return bytes.Clone(result), nil // raw is a pooled buffer
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		if resp.StatusCode != http.StatusOK {
			return nil, toolerr.New(toolerr.UpstreamUnavailable, "service %s answered HTTP %d", b.cfg.Name, resp.StatusCode)
		}
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "service %s answered something that is not JSON-RPC", b.cfg.Name)
	}
	switch {
	case msg.Error != nil:
		// As Call: the service refused the request (unknown tool, bad
		// arguments); its message stays in the log, not in the result.
		cause := fmt.Errorf("JSON-RPC error %d: %s", msg.Error.Code, msg.Error.Message)
		if isUnknownTool(msg.Error.Code, msg.Error.Message) {
			return nil, b.gone(toolGone{cause})
		}
		return nil, toolerr.Wrap(toolerr.InvalidArgument, cause, "service %s refused the request", b.cfg.Name)
	case string(msg.ID) != strconv.FormatInt(id, 10):
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "service %s answered another request", b.cfg.Name)
	case len(msg.Result) == 0 || msg.Result[0] != '{':
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "service %s returned no result", b.cfg.Name)
	}
	return msg.Result, nil
}

// plainResponse reads the answer to request id when it is laid out as
// mcp-go and the toolkit write it, {"jsonrpc":"2.0","id":<id>,"result":{…}},
// with one validity check of the result instead of a decode of the whole
// message (which encoding/json scans twice and copies). The result being
// one valid JSON value between that prefix and the closing brace makes
// the message valid, and it is exactly what the decode would return.
// Anything else (another order, spaces, an error, another id) is for the
// decode.
func plainResponse(raw []byte, id int64) (json.RawMessage, bool) {
	var prefix [64]byte
	p := append(prefix[:0], `{"jsonrpc":"2.0","id":`...)
	p = strconv.AppendInt(p, id, 10)
	p = append(p, `,"result":`...)
	raw = bytes.TrimRight(raw, " \t\r\n")
	if !bytes.HasPrefix(raw, p) || len(raw) < len(p)+3 || raw[len(raw)-1] != '}' {
		return nil, false
	}
	result := raw[len(p) : len(raw)-1]
	// Starting with { and ending with }, a valid text is one object with
	// no space around it: the bytes the decode would return.
	if result[0] != '{' || result[len(result)-1] != '}' || !json.Valid(result) {
		return nil, false
	}
	return result, true
}

// Response buffers are reused: what post returns (msg.Result) is a copy
// json.Unmarshal made, so nothing keeps a buffer once post returns. Small
// ones only, so a burst of large answers does not stay pinned.
var responseBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

const maxPooledBuffer = 64 << 10

func getBuffer() *[]byte { return responseBuffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		*b = (*b)[:0]
		responseBuffers.Put(b)
	}
}

// readResponse reads resp's body into buf, at most limit+1 bytes (one more
// than allowed tells an answer over the limit). A body of announced length
// is read into a buffer of that size at once instead of one grown as it
// arrives; the transport ends it at that length.
func readResponse(buf []byte, resp *http.Response, limit int) ([]byte, error) {
	max := int64(limit) + 1
	if n := resp.ContentLength; n >= 0 && n < max {
		if int64(cap(buf)) < n {
			buf = make([]byte, 0, n)
		}
		buf = buf[:n]
		_, err := io.ReadFull(resp.Body, buf)
		return buf, err
	}
	w := bytes.NewBuffer(buf[:0])
	_, err := w.ReadFrom(io.LimitReader(resp.Body, max))
	return w.Bytes(), err
}

// eventWithID returns the data of the event stream's response to id;
// notifications before it are skipped.
func eventWithID(stream []byte, id int64) []byte {
	want := strconv.FormatInt(id, 10)
	for line := range bytes.Lines(stream) {
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if !ok {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(data, &m) == nil && string(m.ID) == want {
			return bytes.TrimSpace(data)
		}
	}
	return nil
}
