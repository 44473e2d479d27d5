package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/ersatztv/client"
	"github.com/toolgate/toolgate/services/ersatztv/fakeersatztv"
)

const key = "etv-Planted-detect-key-77d1"

func clients(t *testing.T, url, withKey string, mut func(*upstream.Config)) (keyed, plain *upstream.Client) {
	t.Helper()
	mk := func(k string) *upstream.Client {
		cfg := upstream.Config{Name: "ErsatzTV", BaseURL: url, AllowHTTP: true, Timeout: 2 * time.Second, Retries: -1}
		if k != "" {
			cfg.Header = http.Header{"X-Api-Key": {k}}
		}
		if mut != nil {
			mut(&cfg)
		}
		c, err := upstream.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return mk(withKey), mk("")
}

// Detection tells the /api/v1 contract from upstream ErsatzTV, and says
// what to fix when it can tell neither.
func TestDetectTellsTheTwoAPIsApart(t *testing.T) {
	now := time.Unix(1_750_000_000, 0)
	v1 := httptest.NewServer(fakeersatztv.NewV1(fakeersatztv.NewDemoStore(now), key))
	defer v1.Close()
	legacy := fakeersatztv.NewLegacy(fakeersatztv.NewDemoStore(now))
	ui := httptest.NewServer(legacy.Handler(true))
	defer ui.Close()
	streaming := httptest.NewServer(legacy.Handler(false))
	defer streaming.Close()
	notETV := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>router login</html>"))
	}))
	defer notETV.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer broken.Close()
	// With OpenID Connect on, upstream ErsatzTV's web app redirects to the
	// identity provider (/api/v1/version reaches its fallback page), while
	// its /api stays open: that used to stop the start.
	oidcFake := fakeersatztv.NewLegacy(fakeersatztv.NewDemoStore(now))
	oidcFake.OIDC = true
	oidc := httptest.NewServer(oidcFake.Handler(true))
	defer oidc.Close()
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/login", http.StatusFound) }))
	defer login.Close()

	cases := []struct {
		name     string
		url, key string
		mode     client.Mode
		code     toolerr.Code
		says     []string
	}{
		{name: "the v1 contract", url: v1.URL, key: key, mode: client.V1},
		{name: "upstream ErsatzTV on its UI port", url: ui.URL, key: key, mode: client.Legacy},
		{name: "upstream ErsatzTV with no key configured", url: ui.URL, mode: client.Legacy},
		{name: "upstream ErsatzTV with OpenID Connect", url: oidc.URL, key: key, mode: client.Legacy},
		{name: "a proxy that redirects everything", url: login.URL, code: toolerr.UpstreamUnavailable, says: []string{"redirect"}},
		{name: "v1 without a key", url: v1.URL, code: toolerr.AuthFailed, says: []string{"ERSATZTV_API_KEY_FILE", "machine key"}},
		{name: "v1 with a wrong key", url: v1.URL, key: "wrong-key", code: toolerr.AuthFailed, says: []string{"rejected the key", "HTTP 401"}},
		{name: "upstream ErsatzTV on its streaming port", url: streaming.URL, key: key, code: toolerr.NotFound,
			says: []string{"UI port", "ETV_UI_PORT", "ETV_STREAMING_PORT", "does not fake a localhost Host"}},
		{name: "something that is not ErsatzTV", url: notETV.URL, code: toolerr.UpstreamUnavailable, says: []string{"not with ErsatzTV's API"}},
		{name: "a failing server", url: broken.URL, code: toolerr.UpstreamUnavailable, says: []string{"HTTP 502"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			keyed, plain := clients(t, c.url, c.key, nil)
			v, err := client.Detect(context.Background(), keyed, plain, c.key != "")
			if c.code != "" {
				if err == nil || toolerr.CodeOf(err) != c.code {
					t.Fatalf("got %v, %v; want %s", v, err, c.code)
				}
				for _, s := range c.says {
					if !strings.Contains(toolerr.MessageOf(err), s) {
						t.Errorf("message %q does not say %q", toolerr.MessageOf(err), s)
					}
				}
				if strings.Contains(err.Error(), key) {
					t.Error("the error shows the key")
				}
				return
			}
			if err != nil || v.Mode != c.mode || v.AppVersion == "" {
				t.Fatalf("got %+v, %v; want %s", v, err, c.mode)
			}
		})
	}
	// The service never rewrites Host to pass ErsatzTV's localhost check,
	// and it sent upstream ErsatzTV no key.
	for _, r := range legacy.Requests() {
		if strings.HasPrefix(strings.ToLower(r.Host), "localhost") {
			t.Errorf("a request claimed Host %s", r.Host)
		}
		if r.Path == "/api/version" && r.Key != "" {
			t.Error("the key went to /api/version")
		}
	}
}

// A path value can never leave its segment or reach another route, and a
// header value can never add a header: both are refused or escaped before
// anything is sent.
func TestPathAndHeaderValuesCannotEscape(t *testing.T) {
	var hits atomic.Int32
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		paths = append(paths, r.URL.EscapedPath())
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	keyed, _ := clients(t, srv.URL+"/etv", key, nil)
	c := client.New(client.V1, keyed)
	refused := []client.Request{
		{Method: "GET", Path: []string{"ffmpeg", "resolution", "by-name", ".."}},
		{Method: "GET", Path: []string{"ffmpeg", "resolution", "by-name", "."}},
		{Method: "GET", Path: []string{"ffmpeg", "resolution", "by-name", ""}},
		{Method: "GET", Path: []string{"ffmpeg", "resolution", "by-name", "a\r\nb"}},
		{Method: "PUT", Path: []string{"collections", "1", "custom-order"}, IfMatch: "\"1\"\r\nX-Api-Key: other"},
		{Method: "PUT", Path: []string{"collections", "1", "custom-order"}, IfMatch: "\"1\"\nX-Evil: 1"},
		{Method: "PUT", Path: []string{"collections", "1", "custom-order"}, IfMatch: "\"1\"\x00"},
	}
	for _, r := range refused {
		if _, err := c.Do(context.Background(), r); toolerr.CodeOf(err) != toolerr.InvalidArgument {
			t.Errorf("%q / %q: %v", r.Path, r.IfMatch, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d request(s) were sent", hits.Load())
	}
	for _, name := range []string{"../../channels", "a/b", "1920x1080?x=1#y", "%2e%2e"} {
		if _, err := c.Do(context.Background(), client.Request{Method: "GET", Path: []string{"ffmpeg", "resolution", "by-name", name}}); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
	}
	want := []string{
		"/etv/api/v1/ffmpeg/resolution/by-name/..%2F..%2Fchannels", "/etv/api/v1/ffmpeg/resolution/by-name/a%2Fb",
		"/etv/api/v1/ffmpeg/resolution/by-name/1920x1080%3Fx=1%23y", "/etv/api/v1/ffmpeg/resolution/by-name/%252e%252e",
	}
	for i, w := range want {
		if paths[i] != w {
			t.Errorf("sent %s, want %s", paths[i], w)
		}
	}
}

// Answers are bounded: a body over the byte cap is refused, not half
// read, and one deadline covers headers that never come and a body that
// stalls after its headers.
func TestAnswersAreBounded(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`["` + strings.Repeat("é", 8<<10) + `"]`))
	}))
	defer big.Close()
	release := make(chan struct{})
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`[`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer stall.Close()
	defer close(release)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // no headers at all
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer silent.Close()

	keyed, _ := clients(t, big.URL, key, func(c *upstream.Config) { c.MaxBytes = 4 << 10 })
	_, _, err := client.New(client.V1, keyed).Get(context.Background(), []string{"sessions"}, nil)
	if toolerr.CodeOf(err) != toolerr.TooLarge {
		t.Fatalf("oversized answer: %v", err)
	}
	for name, url := range map[string]string{"stalled body": stall.URL, "no headers": silent.URL} {
		keyed, _ = clients(t, url, key, func(c *upstream.Config) { c.Timeout = 300 * time.Millisecond })
		start := time.Now()
		_, _, err = client.New(client.V1, keyed).Get(context.Background(), []string{"sessions"}, nil)
		if toolerr.CodeOf(err) != toolerr.Timeout || time.Since(start) > 5*time.Second {
			t.Fatalf("%s: %v after %v", name, err, time.Since(start))
		}
	}
}

// The statuses the /api/v1 contract gives meaning to get messages that
// say what happened and end with ErsatzTV's own reason (a ProblemDetails'
// detail), framed; never the rest of the body.
func TestStatusesSayWhatHappened(t *testing.T) {
	for _, c := range []struct {
		status int
		code   toolerr.Code
		says   string
	}{
		{412, toolerr.Forbidden, "nothing was written"},
		{422, toolerr.InvalidArgument, "does not exist"},
		{404, toolerr.NotFound, "HTTP 404"},
		{401, toolerr.AuthFailed, "HTTP 401"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(`{"title":"One or more errors occurred.","detail":"Playout 7 does not exist","traceId":"upstream-body-marker"}`))
		}))
		keyed, _ := clients(t, srv.URL, key, nil)
		_, err := client.New(client.V1, keyed).Do(context.Background(), client.Request{Method: "PUT", Path: []string{"x"}})
		srv.Close()
		msg := toolerr.MessageOf(err)
		if toolerr.CodeOf(err) != c.code || !strings.Contains(msg, c.says) || !strings.HasSuffix(msg, `. ErsatzTV said: "Playout 7 does not exist"`) || strings.Contains(msg, "marker") {
			t.Errorf("HTTP %d: %v", c.status, err)
		}
		if !client.IsNotFound(err) && c.status == 404 {
			t.Error("IsNotFound missed a 404")
		}
	}
}
