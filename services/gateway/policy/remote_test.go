package policy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/approval"
)

const validResult = `{"result":{"decision":"confirm","reason":"write needs confirmation","reason_id":"r","approval":"model","ttl_seconds":600}}`

// secretMarker stands for anything the policy server might reflect; it must
// never show up in an error.
const secretMarker = "sk-SECRET-do-not-echo"

// policyToken is the gateway's bearer token for the sidecar; it must never
// show up in an error either.
const policyToken = "policy-token-SECRET-0123456789abcdef"

func TestRemoteSendsInputAndReadsResult(t *testing.T) {
	in := write("ha_climate_set_temperature")
	in.Args = map[string]any{"temperature": 21.5}

	var gotInput map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == compilePath {
			// Whether it may be remembered: see remote_memory_test.go.
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/data/toolgate/authz/decision" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		if r.URL.Query().Get("strict-builtin-errors") != "true" {
			t.Errorf("query %q lacks strict-builtin-errors=true", r.URL.RawQuery)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+policyToken {
			t.Errorf("Authorization %q, want the policy token", got)
		}
		var body struct {
			Input map[string]any `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("decode body: %v", err)
		}
		gotInput = body.Input
		io.WriteString(w, validResult)
	}))
	defer srv.Close()

	d, err := NewRemote(srv.URL+"/", []byte(policyToken), RemoteOptions{}).Decide(t.Context(), in)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	want := Decision{Decision: Confirm, Reason: "write needs confirmation", ReasonID: "r", Approval: approval.Model, TTLSeconds: 600}
	if d != want {
		t.Errorf("decision %+v, want %+v", d, want)
	}
	for key, want := range map[string]any{
		"action": "call", "service": "homeassistant", "tool": "ha_climate_set_temperature",
		"write": true, "time": "2026-12-02T15:00:00Z", "transport": "http", "user": "alice@example.org",
	} {
		if gotInput[key] != want {
			t.Errorf("input.%s = %v, want %v", key, gotInput[key], want)
		}
	}
	if args, _ := gotInput["args"].(map[string]any); args["temperature"] != 21.5 {
		t.Errorf("input.args = %v", gotInput["args"])
	}
	if ann, _ := gotInput["annotations"].(map[string]any); ann["idempotentHint"] != true || ann["readOnlyHint"] != false {
		t.Errorf("input.annotations = %v", gotInput["annotations"])
	}
	if tk, _ := gotInput["ticket"].(map[string]any); tk["state"] != "none" || tk["force"] != false {
		t.Errorf("input.ticket = %v", gotInput["ticket"])
	}
	if cl, _ := gotInput["client"].(map[string]any); cl["name"] != "openwebui" {
		t.Errorf("input.client = %v", gotInput["client"])
	}
}

func TestRemoteFailsClosed(t *testing.T) {
	huge := `{"result":{"decision":"allow","reason":"` + strings.Repeat("a", MaxResponseBytes) + `","reason_id":"r","approval":"model","ttl_seconds":0}}`
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    error
	}{
		{"server error", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"code":"internal_error","message":"`+secretMarker+`"}`)
		}, ErrUnavailable},
		{"token refused", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"code":"unauthorized","message":"`+secretMarker+`"}`)
		}, ErrUnavailable},
		{"not found", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, secretMarker, http.StatusNotFound)
		}, ErrUnavailable},
		{"redirect not followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}, ErrUnavailable},
		{"garbage", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "<html>"+secretMarker)
		}, ErrBadResponse},
		{"truncated json", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, validResult[:40])
		}, ErrBadResponse},
		{"empty body", func(http.ResponseWriter, *http.Request) {}, ErrBadResponse},
		{"oversize body", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, huge)
		}, ErrBadResponse},
		{"undefined", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{}`)
		}, ErrUndefined},
		{"null result", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"result":null}`)
		}, ErrUndefined},
		{"result not an object", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"result":"allow"}`)
		}, ErrInvalidDecision},
		{"unknown decision", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"result":{"decision":"maybe","reason":"r","reason_id":"r","approval":"model","ttl_seconds":0}}`)
		}, ErrInvalidDecision},
		{"unknown approval", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"result":{"decision":"confirm","reason":"r","reason_id":"r","approval":"nobody","ttl_seconds":600}}`)
		}, ErrInvalidDecision},
		{"missing fields", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"result":{"decision":"allow"}}`)
		}, ErrInvalidDecision},
		{"fractional ttl", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"result":{"decision":"confirm","reason":"r","reason_id":"r","approval":"model","ttl_seconds":1.5}}`)
		}, ErrInvalidDecision},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			d, err := NewRemote(srv.URL, []byte(policyToken), RemoteOptions{}).Decide(t.Context(), read())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if d.Decision != Deny {
				t.Errorf("decision with error = %+v, want deny", d)
			}
			if strings.Contains(err.Error(), secretMarker) || strings.Contains(err.Error(), "<html>") || strings.Contains(err.Error(), policyToken) {
				t.Errorf("error echoes the response body: %v", err)
			}
		})
	}
}

func TestRemoteUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more

	d, err := NewRemote(url, []byte(policyToken), RemoteOptions{}).Decide(t.Context(), read())
	if !errors.Is(err, ErrUnavailable) || d.Decision != Deny {
		t.Fatalf("got %+v, %v; want deny and ErrUnavailable", d, err)
	}
}

func TestRemoteHonoursContext(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-block:
		}
	}))
	defer srv.Close()
	defer close(block)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := NewRemote(srv.URL, []byte(policyToken), RemoteOptions{}).Decide(ctx, read())
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want ErrUnavailable wrapping context.Canceled", err)
	}
}
