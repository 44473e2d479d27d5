package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// protocolVersion is what older MCP clients (OpenWebUI, Claude Desktop
// bridges) speak: initialize and a session id.
const protocolVersion = "2025-11-25"

// newHTTPClient is shared by every session of the bench client: enough idle
// connections that 16 clients never open a new one per call.
func newHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 512
	t.MaxIdleConnsPerHost = 128
	t.DisableCompression = true
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// session is one MCP client session spoken as plain JSON-RPC over HTTP: the
// cheapest possible client, so that what is measured is the server side.
type session struct {
	hc    *http.Client
	url   string
	token string
	id    string // Mcp-Session-Id; empty for a stateless server
	next  int
}

// openSession initializes a session at url with the bearer token.
func openSession(ctx context.Context, hc *http.Client, url, token string) (*session, error) {
	s := &session{hc: hc, url: url, token: token}
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"toolgate-bench","version":"1"}}}`, protocolVersion)
	out, hdr, err := s.post(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	if err := rpcError(out); err != nil {
		return nil, fmt.Errorf("initialize %s: %w", url, err)
	}
	s.id = hdr.Get("Mcp-Session-Id")
	if _, _, err := s.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return nil, fmt.Errorf("initialized %s: %w", url, err)
	}
	return s, nil
}

// call runs one tools/call and fails on a JSON-RPC error or an isError
// result, so a row can never be fast because it was refused.
func (s *session) call(ctx context.Context, tool string, args json.RawMessage) error {
	s.next++
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, s.next, tool, args)
	out, _, err := s.post(ctx, body)
	if err != nil {
		return err
	}
	return rpcError(out)
}

// close ends the session so the server can drop it.
func (s *session) close(ctx context.Context) {
	if s.id == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	s.headers(req)
	if resp, err := s.hc.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func (s *session) headers(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", protocolVersion)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
}

// post sends one message and returns the JSON-RPC response (taken out of an
// event stream when the server answered with one); nil for 202 Accepted.
func (s *session) post(ctx context.Context, body []byte) ([]byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	s.headers(req)
	resp, err := s.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil, resp.Header, nil
	case resp.StatusCode != http.StatusOK:
		return nil, nil, fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, out)
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		out = lastEvent(out)
	}
	return out, resp.Header, nil
}

// lastEvent returns the data of the last event that is a response (has an
// id); notifications sent before it are skipped.
func lastEvent(stream []byte) []byte {
	var last []byte
	for line := range bytes.Lines(stream) {
		data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		if ok && bytes.Contains(data, []byte(`"id"`)) {
			last = bytes.TrimSpace(data)
		}
	}
	return last
}

// rpcError reports a JSON-RPC error or a tool result marked isError.
func rpcError(msg []byte) error {
	var r struct {
		Result *struct {
			IsError bool            `json:"isError"`
			Content json.RawMessage `json:"content"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg, &r); err != nil {
		return fmt.Errorf("response is not JSON-RPC: %.200s", msg)
	}
	switch {
	case r.Error != nil:
		return fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	case r.Result == nil:
		return fmt.Errorf("response without result: %.200s", msg)
	case r.Result.IsError:
		return fmt.Errorf("tool error: %.300s", r.Result.Content)
	}
	return nil
}
