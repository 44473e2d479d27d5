package fakeersatztv

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// specFile is upstream ErsatzTV's published OpenAPI document
// (ErsatzTV/wwwroot/openapi/v1.json), copied from /work/shared/specs.
const specFile = "testdata/ersatztv-upstream-openapi-v1.json"

type legacyCase struct {
	method, path, body string
	status             int
}

// legacyCases call every operation the fake serves, on success and on the
// failures the real handlers produce.
var legacyCases = []legacyCase{
	{"GET", "/api/channels", "", 200},
	{"POST", "/api/channels/3.1/playout/reset", "", 200},
	{"POST", "/api/channels/2/playout/reset", "", 404}, // no playout
	{"GET", "/api/ffmpeg/profiles", "", 200},
	{"POST", "/api/libraries/1/scan", "", 200},
	{"POST", "/api/libraries/3/scan", "", 200},  // already scanning: nothing queued
	{"POST", "/api/libraries/42/scan", "", 404}, // a Jellyfin library whose sync is off
	{"POST", "/api/libraries/999/scan", "", 404},
	{"POST", "/api/libraries/2/scan-show", `{"showTitle":"DuckTales","deepScan":true}`, 200},
	{"POST", "/api/libraries/2/scan-show", `{"showTitle":"Unknown Show"}`, 400},
	{"GET", "/api/maintenance/gc?force=true", "", 200},
	{"POST", "/api/maintenance/empty_trash", "", 200},
	{"GET", "/api/ffmpeg/resolution/by-name/1920x1080", "", 200},
	{"GET", "/api/ffmpeg/resolution/by-name/1x1", "", 404},
	{"GET", "/api/sessions", "", 200},
	{"DELETE", "/api/session/1", "", 204},
	{"DELETE", "/api/session/9", "", 404},
	{"GET", "/api/collections/smart", "", 200},
	{"POST", "/api/collections/smart/new", `{"query":"type:movie","name":"All movies"}`, 200},
	{"POST", "/api/collections/smart/new", `{"query":"type:movie","name":"80s movies"}`, 500},                      // duplicate name
	{"POST", "/api/collections/smart/new", `{"query":"type:movie","name":"` + strings.Repeat("x", 51) + `"}`, 500}, // longer than 50
	{"PUT", "/api/collections/smart/update", `{"id":20,"name":"Talking Heads videos","query":"type:movie"}`, 500},  // another's name
	{"PUT", "/api/collections/smart/update", `{"id":20,"name":"Eighties","query":"type:movie"}`, 200},
	{"PUT", "/api/collections/smart/update", `{"id":999,"name":"x","query":"y"}`, 500},
	{"DELETE", "/api/collections/smart/delete/21", "", 200},
	{"DELETE", "/api/collections/smart/delete/999", "", 500},
	{"GET", "/api/version", "", 200},
}

// TestLegacyFakeFollowsTheUpstreamDocument sends each case through the
// fake and validates request and response against upstream ErsatzTV's
// OpenAPI document with kin-openapi; it also fails when the document has
// an operation that neither a case covers nor Unserved names.
func TestLegacyFakeFollowsTheUpstreamDocument(t *testing.T) {
	ctx := context.Background()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("the upstream document does not validate: %v", err)
	}
	atRuntime(doc)
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	fake := NewLegacy(NewDemoStore(time.Unix(1_750_000_000, 0)))
	h := fake.Handler(true)
	covered := map[string]bool{}
	for _, c := range legacyCases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			req := httptest.NewRequest(c.method, "http://ersatztv.lan:8409"+c.path, strings.NewReader(c.body))
			if c.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatalf("the document has no such operation: %v", err)
			}
			covered[strings.ToUpper(c.method)+" "+route.Path] = true
			in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
			if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
				t.Fatalf("the case's request breaks the document: %v", err)
			}
			// ValidateRequest consumed the body; send it again.
			req.Body = io.NopCloser(strings.NewReader(c.body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
				Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: &openapi3filter.Options{IncludeResponseStatus: false}}
			if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
				t.Fatalf("the answer breaks the document: %v\n%s", err, rec.Body)
			}
		})
	}
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			op := method + " " + path
			if !covered[op] && !slices.Contains(Unserved, op) {
				missing = append(missing, op)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations of the document no case covers: %v", missing)
	}
}

// atRuntime corrects the document where ErsatzTV's runtime serializer
// differs from it. The document is generated with System.Text.Json, but
// the controllers answer through Newtonsoft.Json (Startup.cs:
// AddNewtonsoftJson with NullValueHandling.Ignore and a camel-case
// contract resolver), so
//   - a property whose value is null is left out: nullable properties are
//     not required;
//   - ChannelResponseModel's [JsonProperty("ffmpegProfile")] names the
//     profile ffmpegProfile, not the document's fFmpegProfile.
func atRuntime(doc *openapi3.T) {
	for _, ref := range doc.Components.Schemas {
		s := ref.Value
		s.Required = slices.DeleteFunc(s.Required, func(name string) bool {
			p := s.Properties[name]
			return p != nil && p.Value != nil && (p.Value.Nullable || p.Value.Type != nil && p.Value.Type.Includes("null"))
		})
	}
	ch := doc.Components.Schemas["ChannelResponseModel"].Value
	ch.Properties["ffmpegProfile"] = ch.Properties["fFmpegProfile"]
	delete(ch.Properties, "fFmpegProfile")
}

// The OpenAPI document names the channel's profile fFmpegProfile; ErsatzTV
// sends ffmpegProfile (Newtonsoft honours ChannelResponseModel's
// [JsonProperty]) and leaves out null values.
func TestLegacyChannelsAreSerializedAsAtRuntime(t *testing.T) {
	store := NewDemoStore(time.Unix(1_750_000_000, 0))
	store.Channels[1].PreferredAudioLanguageCode = ""
	rec := httptest.NewRecorder()
	NewLegacy(store).Handler(true).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://ersatztv.lan:8409/api/channels", nil))
	body := rec.Body.String()
	if !strings.Contains(body, `"ffmpegProfile"`) || strings.Contains(body, "fFmpegProfile") || strings.Count(body, `"language"`) != len(store.Channels)-1 {
		t.Errorf("channels = %s", body)
	}
}

// ErsatzTV's Host check: management requests arriving on the streaming
// port are 404 unless their Host starts with localhost; streaming paths
// pass; on the UI port everything passes. Unknown GETs get the Blazor page.
func TestLegacyFakeHostCheckAndFallback(t *testing.T) {
	fake := NewLegacy(NewDemoStore(time.Unix(1_750_000_000, 0)))
	cases := []struct {
		name, host, path string
		ui               bool
		status           int
		contentType      string
	}{
		{"UI port, any host", "ersatztv.lan:8409", "/api/version", true, 200, "application/json"},
		{"streaming port, LAN host", "ersatztv.lan:8410", "/api/version", false, 404, ""},
		{"streaming port, localhost", "localhost:8410", "/api/version", false, 200, "application/json"},
		{"streaming port, LOCALHOST", "LOCALHOST:8410", "/api/version", false, 200, "application/json"},
		{"streaming port, streaming path", "ersatztv.lan:8410", "/iptv/channels.m3u", false, 200, "text/html"},
		{"UI port, unknown API path", "ersatztv.lan:8409", "/api/v1/version", true, 200, "text/html"},
	}
	oidc := NewLegacy(NewDemoStore(time.Unix(1_750_000_000, 0)))
	oidc.OIDC = true
	for path, status := range map[string]int{"/api/v1/version": http.StatusFound, "/api/version": http.StatusOK} {
		rec := httptest.NewRecorder()
		oidc.Handler(true).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://ersatztv.lan:8409"+path, nil))
		if rec.Code != status {
			t.Errorf("with OpenID Connect on, %s answers %d, want %d", path, rec.Code, status)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
			rec := httptest.NewRecorder()
			fake.Handler(c.ui).ServeHTTP(rec, req)
			if rec.Code != c.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.contentType) {
				t.Fatalf("%d %q, want %d %q", rec.Code, rec.Header().Get("Content-Type"), c.status, c.contentType)
			}
		})
	}
}
