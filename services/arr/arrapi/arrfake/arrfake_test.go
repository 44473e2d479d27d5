package arrfake

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestAuthorized(t *testing.T) {
	const key = "fake-key"
	cases := []struct {
		name, header, query string
		want                bool
	}{
		{"none", "", "", false},
		{"wrong header", "wrong", "", false},
		{"header", key, "", true},
		{"query", "", key, true},
		{"header wins over query", "wrong", key, false},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/api/v3/x?apikey="+url.QueryEscape(tc.query), nil)
		if tc.header != "" {
			r.Header.Set("X-Api-Key", tc.header)
		}
		if got := Authorized(r, key); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	w := httptest.NewRecorder()
	Unauthorized(w)
	if w.Code != http.StatusUnauthorized || w.Body.Len() != 0 {
		t.Errorf("Unauthorized: %d %q", w.Code, w.Body.String())
	}
}

func TestWriteJSONAndProblem(t *testing.T) {
	w := httptest.NewRecorder()
	Problem(w, http.StatusConflict, "refused")
	if w.Code != http.StatusConflict || w.Header().Get("Content-Type") != "application/json; charset=utf-8" ||
		strings.TrimSpace(w.Body.String()) != `{"description":"","message":"refused"}` {
		t.Errorf("Problem: %d %s %q", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}
}

func TestReadBodyAndRecorder(t *testing.T) {
	var rec Recorder
	r := httptest.NewRequest("POST", "/api/v3/command?x=1", strings.NewReader(`{"name":"X"}`))
	body, err := ReadBody(r)
	if err != nil || string(body) != `{"name":"X"}` {
		t.Fatalf("ReadBody: %q %v", body, err)
	}
	again, _ := io.ReadAll(r.Body)
	if string(again) != `{"name":"X"}` {
		t.Fatalf("body not put back: %q", again)
	}
	rec.Record(r, body)
	rec.Record(httptest.NewRequest("GET", "/api/v3/health", nil), nil)
	want := []Request{
		{Method: "POST", Path: "/api/v3/command", Query: url.Values{"x": {"1"}}, Body: `{"name":"X"}`},
		{Method: "GET", Path: "/api/v3/health", Query: url.Values{}},
	}
	if got := rec.Requests(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Requests = %+v, want %+v", got, want)
	}
	big := httptest.NewRequest("POST", "/", strings.NewReader(strings.Repeat("a", maxBody+10)))
	if b, _ := ReadBody(big); len(b) != maxBody {
		t.Fatalf("read %d bytes of an oversized body", len(b))
	}
}

func TestIntParam(t *testing.T) {
	q := url.Values{"page": {"3"}, "bad": {"x"}}
	cases := []struct {
		name    string
		def     int
		want    int
		wantErr bool
	}{
		{"page", 1, 3, false},
		{"absent", 7, 7, false},
		{"bad", 1, 0, true},
	}
	for _, tc := range cases {
		got, err := IntParam(q, tc.name, tc.def)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("%s: %d %v", tc.name, got, err)
		}
	}
}

func TestPageOf(t *testing.T) {
	all := []int{1, 2, 3, 4, 5}
	cases := []struct {
		page, size int
		want       []int
	}{
		{1, 2, []int{1, 2}},
		{3, 2, []int{5}},
		{4, 2, []int{}},
		{1, 10, []int{1, 2, 3, 4, 5}},
	}
	for _, tc := range cases {
		p := PageOf(all, tc.page, tc.size, "date", "descending")
		b, _ := json.Marshal(p)
		var got struct {
			Page, PageSize, TotalRecords int
			SortKey, SortDirection       string
			Records                      []int
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Page != tc.page || got.PageSize != tc.size || got.TotalRecords != 5 || got.SortKey != "date" ||
			got.SortDirection != "descending" || !reflect.DeepEqual(got.Records, tc.want) {
			t.Errorf("page %d size %d: %s", tc.page, tc.size, b)
		}
	}
}

func TestSearchHooks(t *testing.T) {
	var h SearchHooks
	if !h.WaitSearch(context.Background()) {
		t.Fatal("the zero hooks wait")
	}
	release := h.BlockSearches()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if h.WaitSearch(ctx) {
		t.Fatal("a held search went on although the client gave up")
	}
	done := make(chan bool)
	go func() { done <- h.WaitSearch(context.Background()) }()
	release()
	release() // idempotent
	if !<-done {
		t.Fatal("a released search did not go on")
	}
	h.SetSearchDelay(1 << 40) // far longer than the test: only a canceled client ends it
	if h.WaitSearch(ctx) {
		t.Fatal("a delayed search went on although the client gave up")
	}
}
