// Package arrspec pins the fake Sonarr, Radarr and Prowlarr, and the
// requests the arr service sends them, to the applications' own OpenAPI
// documents (src/<App>.Api.V3/openapi.json, Prowlarr's Api.V1; copies of
// /work/shared/specs): a test wraps a fake with Wrap, and every request
// the client makes and every answer the fake gives is validated against
// the document with kin-openapi. It is test support, imported only by
// tests.
package arrspec

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

//go:embed specs/*.json
var specs embed.FS

// The documents, by application: Sonarr's v3 API as Sonarr v4 serves it,
// Radarr's v3 API, Prowlarr's v1 API.
const (
	Sonarr   = "specs/sonarr.json"
	Radarr   = "specs/radarr.json"
	Prowlarr = "specs/prowlarr.json"
)

// Spec is one loaded document and a router over it.
type Spec struct {
	doc    *openapi3.T
	router routers.Router
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Spec{}
)

// Load parses and validates the document (once per process).
func Load(t testing.TB, file string) *Spec {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if s, ok := loaded[file]; ok {
		return s
	}
	raw, err := specs.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	// The UI routes (/, /{path}, /login, …) are not the API and declare
	// their path parameters wrongly.
	for path := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/api/") {
			doc.Paths.Delete(path)
		}
	}
	atRuntime(doc)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("%s does not validate: %v", file, err)
	}
	// The documents name a templated server ({protocol}://{hostpath});
	// the fakes run on any loopback address.
	doc.Servers = nil
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	s := &Spec{doc: doc, router: r}
	loaded[file] = s
	return s
}

// Checker validates what passes through the handlers it wraps and
// remembers which operations were used.
type Checker struct {
	t    testing.TB
	spec *Spec
	// looseBody names operations whose request body the document
	// describes wrongly (see Wrap's callers); their body is not checked
	// against the document.
	looseBody []string

	mu   sync.Mutex
	used map[string]bool
}

// Wrap returns h behind a Checker: a request that is no operation of the
// document, a query parameter the operation does not declare, a value
// of the wrong type, a body that breaks the document, or an answer whose
// status the operation documents but whose body breaks its schema is a
// test error. looseBody lists operations ("POST /api/v3/command") whose
// request body is checked elsewhere.
func Wrap(t testing.TB, file string, h http.Handler, looseBody ...string) (http.Handler, *Checker) {
	c := &Checker{t: t, spec: Load(t, file), looseBody: looseBody, used: map[string]bool{}}
	return c.handler(h), c
}

// Used returns the operations that were called, as "GET /api/v3/series/{id}", sorted.
func (c *Checker) Used() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.used))
	for op := range c.used {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

func (c *Checker) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := c.check(r, body, w, h); err != nil {
			c.t.Errorf("%s %s: %v", r.Method, r.URL.RequestURI(), err)
		}
	})
}

// check serves r through h and validates both sides; the answer always
// reaches w, so a test sees what the fake said as well as the error.
func (c *Checker) check(r *http.Request, body []byte, w http.ResponseWriter, h http.Handler) error {
	ctx := context.Background()
	rec := httptest.NewRecorder()
	vr := r.Clone(ctx)
	vr.Body = io.NopCloser(bytes.NewReader(body))
	r.Body = io.NopCloser(bytes.NewReader(body))
	h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())

	if r.Context().Err() != nil {
		// The client gave up (a deadline test): the fake answered nothing.
		return nil
	}
	route, params, err := c.spec.router.FindRoute(vr)
	if err != nil {
		return fmt.Errorf("not an operation of the document: %w", err)
	}
	op := r.Method + " " + route.Path
	c.mu.Lock()
	c.used[op] = true
	c.mu.Unlock()
	var declared []string
	for _, p := range route.Operation.Parameters {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery {
			declared = append(declared, strings.ToLower(p.Value.Name))
		}
	}
	var errs []string
	for name := range vr.URL.Query() {
		// ASP.NET binds query parameters case-insensitively; apikey is
		// the document's security scheme, never sent by the service.
		if !slices.Contains(declared, strings.ToLower(name)) {
			errs = append(errs, fmt.Sprintf("query parameter %q is not declared (%v)", name, declared))
		}
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	if slices.Contains(c.looseBody, op) {
		opts.ExcludeRequestBody = true
	}
	in := &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		errs = append(errs, "request: "+err.Error())
	}
	if path := nullAt(rec.Body.Bytes(), "$"); rec.Code < 300 && path != "" {
		// Servarr serializes with DefaultIgnoreCondition WhenWritingNull
		// (NzbDrone.Common/Serializer/System.Text.Json/STJson.cs).
		errs = append(errs, "the answer has null at "+path+"; the applications leave null properties out")
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
		Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: &openapi3filter.Options{IncludeResponseStatus: false, MultiError: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		errs = append(errs, fmt.Sprintf("answer %d: %v", rec.Code, err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n\t"))
	}
	return nil
}

// nullAt returns the path of the first JSON null in body, "" when there is
// none (or body is no JSON).
func nullAt(body []byte, at string) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return walkNull(v, at)
}

func walkNull(v any, at string) string {
	switch x := v.(type) {
	case nil:
		return at
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := walkNull(x[k], at+"."+k); p != "" {
				return p
			}
		}
	case []any:
		for i, e := range x {
			if p := walkNull(e, fmt.Sprintf("%s[%d]", at, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// atRuntime corrects the documents where the applications' serializer
// (STJson.cs, System.Text.Json) differs from what the generator wrote:
//   - an HttpUri (a health check's wikiUrl) is written as its full URI,
//     a string (STJHttpUriConverter), not as the object the document
//     describes;
//   - a command's body is written as the command's own type
//     (PolymorphicWriteOnlyJsonConverter<Command> on Command), so an
//     EpisodeSearch body carries episodeIds, which the document's Command
//     does not list.
func atRuntime(doc *openapi3.T) {
	uri := openapi3.NewStringSchema()
	uri.Nullable = true
	for _, ref := range doc.Components.Schemas {
		for name, p := range ref.Value.Properties {
			if p.Ref == "#/components/schemas/HttpUri" {
				ref.Value.Properties[name] = openapi3.NewSchemaRef("", uri)
			}
		}
	}
	if cmd := doc.Components.Schemas["Command"]; cmd != nil {
		yes := true
		cmd.Value.AdditionalProperties = openapi3.AdditionalProperties{Has: &yes}
	}
}
