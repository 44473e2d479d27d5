package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/ersatztv/client"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
	"github.com/toolgate/toolgate/services/ersatztv/tools"
)

// Traversal attempts through a tool's path argument are refused before
// any request; a slash stays inside its segment.
func TestPathArgumentsCannotTraverse(t *testing.T) {
	for _, mode := range []struct {
		name  string
		start func(testing.TB, map[string]string) *upstreamEnv
		base  string
	}{{"v1", startV1, "/api/v1"}, {"legacy", startLegacy, "/api"}} {
		t.Run(mode.name, func(t *testing.T) {
			e := mode.start(t, nil)
			svc := e.service(t)
			for _, name := range []string{"..", ".", "a\nb", ""} {
				got, isErr := svc.Call(t, "ersatztv_get_resolution_by_name", map[string]any{"name": name}, "")
				if !isErr || got["error"].(map[string]any)["code"] != string(toolerr.InvalidArgument) {
					t.Errorf("name %q: %v", name, got)
				}
			}
			e.noRequests(t)
			got, isErr := svc.Call(t, "ersatztv_get_resolution_by_name", map[string]any{"name": "../../channels"}, "")
			if !isErr || got["error"].(map[string]any)["code"] != string(toolerr.NotFound) {
				t.Errorf("escaped name: %v", got)
			}
			reqs := e.requests()
			if len(reqs) != 1 || reqs[0].Path != mode.base+"/ffmpeg/resolution/by-name/..%2F..%2Fchannels" {
				t.Errorf("requests %v", reqs)
			}
		})
	}
}

// The start waits for an ErsatzTV that is still starting (here: five 503s, more than one request's retries)
// and gives up when its deadline passes; an answer that settles nothing
// (no key for a v1 server) ends the wait at once.
func TestStartWaitsForErsatzTV(t *testing.T) {
	store := fakeersatztv.NewDemoStore(testNow)
	fake := fakeersatztv.NewV1(store, testKey)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 5 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	defer srv.Close()
	set, err := settings(t, map[string]string{"ERSATZTV_URL": srv.URL, "ERSATZTV_API_KEY_FILE": keyFile(t, testKey)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	svc, err := tools.Start(ctx, set, slog.New(slog.DiscardHandler))
	if err != nil || svc.Mode() != client.V1 {
		t.Fatalf("start: %v", err)
	}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer down.Close()
	set, _ = settings(t, map[string]string{"ERSATZTV_URL": down.URL})
	ctx, cancel = context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := tools.Start(ctx, set, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "HTTP 502") {
		t.Fatalf("a server that never answers: %v", err)
	}
	if d := time.Since(start); d < time.Second || d > 10*time.Second {
		t.Errorf("gave up after %v", d)
	}

	set, _ = settings(t, map[string]string{"ERSATZTV_URL": srv.URL})
	start = time.Now()
	if _, err := tools.Start(t.Context(), set, slog.New(slog.DiscardHandler)); err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a v1 server without a key: %v after %v", err, time.Since(start))
	}
}

// ERSATZTV_MAX_RESPONSE_BYTES bounds every answer: one over it (here full
// of two-byte runes) is refused as too_large while it streams, never cut
// mid-rune or parsed in part, and the message holds none of its bytes.
func TestResponseCapComesFromItsSetting(t *testing.T) {
	e := startV1(t, map[string]string{"ERSATZTV_MAX_RESPONSE_BYTES": "4096"})
	e.Store.Lock()
	e.Store.Channel(2).Name = strings.Repeat("é", 3000)
	e.Store.Unlock()
	svc := e.service(t)
	got, isErr := svc.Call(t, "ersatztv_list_channels", map[string]any{}, "")
	msg, _ := got["error"].(map[string]any)["message"].(string)
	if !isErr || errCode(got) != string(toolerr.TooLarge) || !utf8.ValidString(msg) || strings.Contains(msg, "é") {
		t.Fatalf("an answer over the cap: %v", got)
	}
	if got, isErr := svc.Call(t, "ersatztv_get_channel", map[string]any{"id": 1}, ""); isErr {
		t.Fatalf("an answer under the cap: %v", got)
	}
	big := startV1(t, nil)
	big.Store.Lock()
	big.Store.Channel(2).Name = strings.Repeat("é", 3000)
	big.Store.Unlock()
	got, isErr = big.service(t).Call(t, "ersatztv_list_channels", map[string]any{}, "")
	if b, _ := json.Marshal(got); isErr || !strings.Contains(string(b), strings.Repeat("é", 3000)) {
		t.Fatalf("the same answer under the default cap: %.200s", b)
	}
}
