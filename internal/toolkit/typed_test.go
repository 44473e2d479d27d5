package toolkit_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

type window struct {
	After  float64 `json:"after" jsonschema:"Start, Unix seconds." schema:"minimum=0"`
	Before float64 `json:"before" schema:"minimum=0"`
}

type searchInput struct {
	window
	Query   string   `json:"query" jsonschema:"What to find." schema:"minLength=1,maxLength=50"`
	Cameras []string `json:"cameras,omitempty" schema:"maxItems=4,uniqueItems,items.pattern=^[a-z]{1,8}$"`
	Sort    string   `json:"sort,omitempty" schema:"enum=date_desc|score_desc,default=date_desc"`
	Label   string   `json:"label,omitempty" schema:"pattern=^[^,]{1,3},?$"`
	Limit   *int     `json:"limit,omitempty" schema:"minimum=1,maximum=5"`
	Exact   *bool    `json:"exact,omitempty"`
	Levels  []int    `json:"levels,omitempty" schema:"items.enum=1|2|3"`
	Day     string   `json:"day,omitempty" schema:"format=date"`
	Nested  *struct {
		Key string `json:"key"`
	} `json:"nested,omitempty"`
	//lint:ignore U1000 an unexported field must not become an argument
	hidden string
	Skip   string `json:"-"`
}

func TestInputSchemaIsDerivedFromTheType(t *testing.T) {
	t.Parallel()
	raw, err := toolkit.InputSchema[searchInput]()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := `{
		"type": "object", "additionalProperties": false, "required": ["after", "before", "query"],
		"properties": {
			"after":  {"type": "number", "minimum": 0, "description": "Start, Unix seconds."},
			"before": {"type": "number", "minimum": 0},
			"query":  {"type": "string", "minLength": 1, "maxLength": 50, "description": "What to find."},
			"cameras": {"type": "array", "maxItems": 4, "uniqueItems": true, "items": {"type": "string", "pattern": "^[a-z]{1,8}$"}},
			"sort":   {"type": "string", "enum": ["date_desc", "score_desc"], "default": "date_desc"},
			"label":  {"type": "string", "pattern": "^[^,]{1,3},?$"},
			"limit":  {"type": "integer", "minimum": 1, "maximum": 5},
			"exact":  {"type": "boolean"},
			"levels": {"type": "array", "items": {"type": "integer", "enum": [1, 2, 3]}},
			"day":    {"type": "string", "format": "date"},
			"nested": {"type": "object", "additionalProperties": false, "required": ["key"], "properties": {"key": {"type": "string"}}}
		}
	}`
	var w map[string]any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	g, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if string(g) != string(wb) {
		t.Fatalf("schema\n got %s\nwant %s", g, wb)
	}
	if empty, _ := toolkit.InputSchema[toolkit.NoArgs](); string(empty) != `{"type":"object","additionalProperties":false}` {
		t.Errorf("NoArgs schema = %s", empty)
	}
}

func TestInputSchemaRefusesMistakes(t *testing.T) {
	t.Parallel()
	type unknownKeyword struct {
		A string `json:"a" schema:"minSize=1"`
	}
	type stringKeywordOnNumber struct {
		A int `json:"a" schema:"maxLength=3"`
	}
	type numberKeywordOnString struct {
		A string `json:"a" schema:"minimum=3"`
	}
	type itemsOnScalar struct {
		A string `json:"a" schema:"items.maxLength=3"`
	}
	type badEnum struct {
		A int `json:"a" schema:"enum=1|two"`
	}
	type noValue struct {
		A string `json:"a" schema:"maxLength"`
	}
	type notACount struct {
		A string `json:"a" schema:"maxLength=-1"`
	}
	cases := []struct {
		name string
		fn   func() (json.RawMessage, error)
		want string
	}{
		{"unknown keyword", toolkit.InputSchema[unknownKeyword], "unknown keyword"},
		{"string keyword on a number", toolkit.InputSchema[stringKeywordOnNumber], "maxLength does not apply to a integer"},
		{"number keyword on a string", toolkit.InputSchema[numberKeywordOnString], "minimum does not apply"},
		{"items keyword on a scalar", toolkit.InputSchema[itemsOnScalar], "no array"},
		{"enum value of the wrong type", toolkit.InputSchema[badEnum], `"two" is not a integer`},
		{"keyword without value", toolkit.InputSchema[noValue], "needs a value"},
		{"negative count", toolkit.InputSchema[notACount], "not a count"},
		{"input that is no struct", toolkit.InputSchema[[]string], "must be a struct"},
		{"input with a func", toolkit.InputSchema[struct{ F func() }], "unsupported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.fn()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestNewRejectsTypedToolMistakes(t *testing.T) {
	t.Parallel()
	type bad struct {
		A string `json:"a" schema:"nonsense=1"`
	}
	read := toolkit.ReadFor(func(context.Context, toolkit.NoArgs) (any, error) { return nil, nil })
	write := toolkit.WriteFor(
		func(context.Context, toolkit.NoArgs) (int, error) { return 0, nil },
		func(context.Context, toolkit.NoArgs, int) (any, error) { return nil, nil })
	cases := []struct {
		name string
		tool toolkit.Tool
		want string
	}{
		{"bad schema tag", toolkit.Tool{Name: "t_a", Description: "d", Annotations: readAnn,
			Handler: toolkit.ReadFor(func(context.Context, bad) (any, error) { return nil, nil })}, "nonsense"},
		{"handler and schema", toolkit.Tool{Name: "t_a", Description: "d", Annotations: readAnn, Handler: read, Schema: json.RawMessage(emptySchema)}, "input type"},
		{"handler and read", toolkit.Tool{Name: "t_a", Description: "d", Annotations: readAnn, Handler: read,
			Read: func(context.Context, toolkit.Args) (any, error) { return nil, nil }}, "Handler and Read"},
		{"typed read not read-only", toolkit.Tool{Name: "t_a", Description: "d", Handler: read}, "read-only"},
		{"typed write annotated read-only", toolkit.Tool{Name: "t_w", Description: "d", Annotations: readAnn, Handler: write}, "read-only"},
		{"negative tool bound", toolkit.Tool{Name: "t_a", Description: "d", Annotations: readAnn, Handler: read, MaxConcurrent: -1}, "MaxConcurrent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := toolkit.New(baseOptions(nil), c.tool)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// typedFixture serves typed tools: a search read and a dimmer write whose
// preview is a typed value.
type typedFixture struct {
	*fixture
	gotSearch atomic.Pointer[searchInput]
	applied   atomic.Pointer[dimPreview]
	level     atomic.Int64
	release   chan struct{}
	entered   chan struct{}
}

type dimInput struct {
	Room  string `json:"room" schema:"enum=kitchen|hall"`
	Level int    `json:"level" schema:"minimum=0,maximum=100"`
}

type dimPreview struct {
	Room string `json:"room"`
	From int64  `json:"from"`
	To   int    `json:"to"`
}

func newTypedFixture(t *testing.T, limits toolkit.Limits) *typedFixture {
	t.Helper()
	tf := &typedFixture{release: make(chan struct{}), entered: make(chan struct{}, 8)}
	tf.level.Store(10)
	tools := []toolkit.Tool{
		{
			Name: "test_search", Description: "Searches.", Annotations: readAnn,
			Handler: toolkit.ReadFor(func(_ context.Context, in searchInput) (map[string]any, error) {
				tf.gotSearch.Store(&in)
				return map[string]any{"query": in.Query}, nil
			}),
		},
		{
			Name: "test_dim", Description: "Dims a light.", Annotations: toolkit.Annotations{Idempotent: true},
			Handler: toolkit.WriteFor(
				func(_ context.Context, in dimInput) (dimPreview, error) {
					return dimPreview{Room: in.Room, From: tf.level.Load(), To: in.Level}, nil
				},
				func(_ context.Context, in dimInput, p dimPreview) (map[string]any, error) {
					tf.applied.Store(&p)
					tf.level.Store(int64(p.To))
					return map[string]any{"level": p.To}, nil
				}),
		},
		{
			Name: "test_block", Description: "Blocks until released.", Annotations: readAnn, MaxConcurrent: 1,
			Handler: toolkit.ReadFor(func(ctx context.Context, _ toolkit.NoArgs) (any, error) {
				tf.entered <- struct{}{}
				select {
				case <-tf.release:
				case <-ctx.Done():
				}
				return map[string]any{"ok": true}, nil
			}),
		},
		{
			Name: "test_big", Description: "Answers 10 KB.", Annotations: readAnn,
			Handler: toolkit.ReadFor(func(context.Context, toolkit.NoArgs) (any, error) {
				return map[string]any{"blob": strings.Repeat("x", 10<<10)}, nil
			}),
		},
	}
	f := &fixture{t: t, clock: newFakeClock()}
	opts := baseOptions(f.clock)
	opts.Limits = limits
	svc, err := toolkit.New(opts, tools...)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	f.srv = httptest.NewServer(svc.Handler())
	t.Cleanup(f.srv.Close)
	f.url = f.srv.URL + "/mcp"
	tf.fixture = f
	return tf
}

func TestTypedReadGetsValidatedDecodedArguments(t *testing.T) {
	t.Parallel()
	f := newTypedFixture(t, toolkit.Limits{})
	args := map[string]any{"after": 1.5, "before": 2, "query": "red car", "cameras": []string{"door"}, "limit": 3, "exact": false, "levels": []int{2}}
	res, _ := f.callRaw("test_search", args, nil)
	if res.IsError || res.StructuredContent["query"] != "red car" {
		t.Fatalf("call: %+v", res)
	}
	got := f.gotSearch.Load()
	if got.After != 1.5 || got.Before != 2 || got.Cameras[0] != "door" || *got.Limit != 3 || got.Exact == nil || *got.Exact || got.Levels[0] != 2 {
		t.Fatalf("decoded %+v", got)
	}

	refused := []struct {
		name string
		args map[string]any
		want string
	}{
		{"unknown argument", map[string]any{"after": 1, "before": 2, "query": "q", "extra": 1}, "extra"},
		{"missing required", map[string]any{"after": 1, "query": "q"}, "before"},
		{"over a maximum", map[string]any{"after": 1, "before": 2, "query": "q", "limit": 6}, "/limit"},
		{"not in the enum", map[string]any{"after": 1, "before": 2, "query": "q", "sort": "random"}, "/sort"},
		{"item against its pattern", map[string]any{"after": 1, "before": 2, "query": "q", "cameras": []string{"Door!"}}, "/cameras/0"},
		{"repeated item", map[string]any{"after": 1, "before": 2, "query": "q", "cameras": []string{"a", "a"}}, "/cameras"},
		{"null for a pointer", map[string]any{"after": 1, "before": 2, "query": "q", "limit": nil}, "/limit"},
		{"null for a slice", map[string]any{"after": 1, "before": 2, "query": "q", "cameras": nil}, "/cameras"},
		{"unknown nested argument", map[string]any{"after": 1, "before": 2, "query": "q", "nested": map[string]any{"key": "k", "x": 1}}, "/nested"},
		{"not a date", map[string]any{"after": 1, "before": 2, "query": "q", "day": "31.12.2026"}, "/day"},
		{"integer given as 1.0", map[string]any{"after": 1, "before": 2, "query": "q", "limit": json.Number("1.0")}, "do not match"},
	}
	for _, c := range refused {
		f.gotSearch.Store(nil)
		res, _ := f.callRaw("test_search", c.args, nil)
		if errorCode(t, res) != toolerr.InvalidArgument || !strings.Contains(errorMessage(res), c.want) {
			t.Errorf("%s: %+v", c.name, res.StructuredContent)
		}
		if f.gotSearch.Load() != nil {
			t.Errorf("%s: the handler ran", c.name)
		}
	}
}

func TestTypedWriteAppliesTheApprovedPreview(t *testing.T) {
	t.Parallel()
	f := newTypedFixture(t, toolkit.Limits{})
	args := map[string]any{"room": "hall", "level": 40}
	prev, _ := f.callRaw("test_dim", args, nil)
	digest, _ := prev.Meta[approval.MetaPreviewDigest].(string)
	p, _ := prev.StructuredContent["preview"].(map[string]any)
	if prev.IsError || p["from"] != float64(10) || p["to"] != float64(40) || digest != argsDigest(t, dimPreview{Room: "hall", From: 10, To: 40}) {
		t.Fatalf("preview: %+v", prev)
	}
	sign := func(ticket string) map[string]any {
		return applyMeta(sign(t, approvalKey, approval.Approval{Service: "test", Tool: "test_dim", ArgsDigest: argsDigest(t, args),
			PreviewDigest: digest, TicketID: ticket, Expires: f.clock.Now().Add(time.Minute).Unix()}))
	}

	// The light moved since the preview: the recomputed preview differs,
	// so nothing is applied.
	f.level.Store(20)
	res, _ := f.callRaw("test_dim", args, sign("t-1"))
	if errorCode(t, res) != toolerr.Forbidden || f.applied.Load() != nil {
		t.Fatalf("apply after a change: %+v (applied %v)", res, f.applied.Load())
	}

	f.level.Store(10)
	res, _ = f.callRaw("test_dim", args, sign("t-2"))
	if res.IsError || res.StructuredContent["status"] != "applied" {
		t.Fatalf("apply: %+v", res)
	}
	if got := f.applied.Load(); *got != (dimPreview{Room: "hall", From: 10, To: 40}) || f.level.Load() != 40 {
		t.Fatalf("apply got preview %+v, level %d", got, f.level.Load())
	}
}

func TestLimitsAnswerBusyAndRefuseLargeResults(t *testing.T) {
	t.Parallel()
	t.Run("the tool's own bound", func(t *testing.T) {
		t.Parallel()
		f := newTypedFixture(t, toolkit.Limits{})
		var wg sync.WaitGroup
		wg.Go(func() { f.callRaw("test_block", map[string]any{}, nil) })
		<-f.entered
		res, _ := f.callRaw("test_block", map[string]any{}, nil)
		if errorCode(t, res) != toolerr.Busy || !strings.Contains(errorMessage(res), "test_block") {
			t.Errorf("second call: %+v", res.StructuredContent)
		}
		// Other tools are not bound by it.
		if res, _ := f.callRaw("test_search", map[string]any{"after": 1, "before": 2, "query": "q"}, nil); res.IsError {
			t.Errorf("other tool: %+v", res.StructuredContent)
		}
		close(f.release)
		wg.Wait()
		if res, _ := f.callRaw("test_block", map[string]any{}, nil); res.IsError {
			t.Errorf("after release: %+v", res.StructuredContent)
		}
	})
	t.Run("the service's bound", func(t *testing.T) {
		t.Parallel()
		f := newTypedFixture(t, toolkit.Limits{MaxConcurrent: 1})
		var wg sync.WaitGroup
		wg.Go(func() { f.callRaw("test_block", map[string]any{}, nil) })
		<-f.entered
		res, _ := f.callRaw("test_search", map[string]any{"after": 1, "before": 2, "query": "q"}, nil)
		if errorCode(t, res) != toolerr.Busy || !strings.Contains(errorMessage(res), "TEST_MAX_CONCURRENT") || f.gotSearch.Load() != nil {
			t.Errorf("call beyond the bound: %+v", res.StructuredContent)
		}
		close(f.release)
		wg.Wait()
	})
	t.Run("result size", func(t *testing.T) {
		t.Parallel()
		f := newTypedFixture(t, toolkit.Limits{MaxResultBytes: 8 << 10})
		res, _ := f.callRaw("test_big", map[string]any{}, nil)
		if errorCode(t, res) != toolerr.TooLarge || !strings.Contains(errorMessage(res), "TEST_MAX_RESULT_BYTES") {
			t.Errorf("big result: %+v", res.StructuredContent)
		}
		if res, _ := f.callRaw("test_search", map[string]any{"after": 1, "before": 2, "query": "q"}, nil); res.IsError {
			t.Errorf("small result: %+v", res.StructuredContent)
		}
	})
}
