package tools_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
)

// ErsatzTV's own reason (the ProblemDetails detail its API answers with)
// reaches the tool result framed as its words; the machine key never does.
func TestErsatzTVsReasonReachesTheResult(t *testing.T) {
	e := startV1(t, nil)
	svc := e.service(t)
	svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "unknown channel", Tool: "ersatztv_get_channel", Args: map[string]any{"id": 99}, Code: toolerr.NotFound,
			Has: []string{`ErsatzTV said: \"Channel does not exist.\"`}, HasNot: []string{"rfc9110", "traceId"}},
		{Name: "unknown collection", Tool: "ersatztv_get_collection", Args: map[string]any{"id": 99}, Code: toolerr.NotFound,
			Has: []string{`ErsatzTV said: \"Collection does not exist.\"`}},
	}, testKey)
}

// Upstream ErsatzTV answers a refused smart-collection command with
// ControllerBase.Problem(error): HTTP 500 whose detail is the validation
// error (CreateSmartCollectionHandler: "SmartCollection name must be
// unique"). When another client takes the name between the confirm's
// check and its request, that reason reaches the result.
func TestLegacyErsatzTVsReasonReachesTheResult(t *testing.T) {
	store := fakeersatztv.NewDemoStore(testNow)
	fake := fakeersatztv.NewLegacy(store)
	inner := fake.Handler(true)
	var raced atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/api/collections/smart/new" && raced.CompareAndSwap(false, true) {
			// A neighbour creates the same name first.
			body, _ := io.ReadAll(r.Body)
			inner.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, r.URL.String(), bytes.NewReader(body)))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := &upstreamEnv{Store: store, Legacy: fake, URL: srv.URL}
	e.start(t, map[string]string{"ERSATZTV_URL": srv.URL, "ERSATZTV_ALLOW_WRITES": "true"})
	svc := e.service(t)
	args := map[string]any{"name": "Shows", "query": "type:show"}
	preview(t, svc, "ersatztv_create_smart_collection", args)
	got, isErr := confirm(t, svc, "ersatztv_create_smart_collection", args)
	msg, _ := got["error"].(map[string]any)["message"].(string)
	if !isErr || !strings.HasSuffix(msg, `ErsatzTV said: "SmartCollection name must be unique"`) || strings.Contains(msg, "An error occurred") {
		t.Fatalf("got %v", got)
	}
}
