// Package fakesearx is a stand-in for SearXNG and a handful of web pages,
// for tests and the demo profile. /search answers like SearXNG's webapp
// (searx/webapp.py): 403 when the requested format is not in
// search.formats, 400 {"error": "No query"} without q, 400 for invalid
// pageno, time_range or safesearch, 429 when the limiter is on, and
// otherwise the JSON shape of get_json_response (query, number_of_results,
// results, answers, corrections, infoboxes, suggestions,
// unresponsive_engines as [name, reason] pairs). /pages/… serves the
// fixture pages the results point at; /healthz answers OK.
package fakesearx

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Doc is a search result and, unless URL is set, the page it points at.
type Doc struct {
	// Path is served under the handler ("/pages/x"); the result URL is
	// the page base plus Path.
	Path string
	// URL, when set, is used as the result URL as is and nothing is
	// served (results pointing elsewhere, e.g. at internal addresses).
	URL      string
	Title    string
	Snippet  string
	Keywords string
	Engines  []string
	// Published is an ISO date-time ("2025-05-14T00:00:00") or "".
	Published   string
	Category    string
	ContentType string
	Body        string
	// RedirectTo makes the page answer 302 to this location.
	RedirectTo string
}

// Options configure the fake.
type Options struct {
	// Formats are SearXNG's search.formats; nil means html and json.
	Formats []string
	// Limited makes every /search answer 429 like SearXNG's limiter.
	Limited bool
	// Unresponsive engines are reported with every search.
	Unresponsive [][2]string
	// PageBase is the scheme and host of result URLs; "" means
	// "http://" plus the request's Host, so the demo works under any name.
	PageBase string
	// Docs are the results and pages; nil means DemoDocs().
	Docs []Doc
}

var outputFormats = []string{"html", "json", "csv", "rss"}

// New returns the fake SearXNG and its pages.
func New(o Options) http.Handler {
	if o.Formats == nil {
		o.Formats = []string{"html", "json"}
	}
	if o.Docs == nil {
		o.Docs = DemoDocs()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "OK")
	})
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) { o.search(w, r) })
	mux.HandleFunc("GET /pages/", func(w http.ResponseWriter, r *http.Request) { o.page(w, r) })
	return mux
}

// NewDemo is New with the demo data: a few articles about a fictional NAS
// operating system that partly disagree, a plain-text changelog, a JSON
// status document, a page with injected instructions, a PDF (refused by the
// web service) and a redirect to a cloud metadata address (refused too).
// One engine is reported unresponsive.
func NewDemo() http.Handler {
	return New(Options{Unresponsive: [][2]string{{"brave", "too many requests"}}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (o Options) search(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if o.Limited {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "Too Many Requests")
		return
	}
	_ = r.ParseForm()
	format := r.Form.Get("format")
	if !slices.Contains(outputFormats, format) {
		format = "html"
	}
	if !slices.Contains(o.Formats, format) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n<p>You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.</p>\n")
		return
	}
	q := r.Form.Get("q")
	if q == "" {
		if format == "html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>SearXNG</title><form action=/search><input name=q></form>")
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "No query"})
		return
	}
	pageno := 1
	if v := r.Form.Get("pageno"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": `Invalid value "` + v + `" for parameter pageno`})
			return
		}
		pageno = n
	}
	if v := r.Form.Get("time_range"); v != "" && !slices.Contains([]string{"day", "week", "month", "year"}, v) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `Invalid value "` + v + `" for parameter time_range`})
		return
	}
	if v := r.Form.Get("safesearch"); v != "" && !slices.Contains([]string{"0", "1", "2"}, v) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": `Invalid value "` + v + `" for parameter safesearch`})
		return
	}
	base := o.PageBase
	if base == "" {
		base = "http://" + r.Host
	}
	hits := o.match(q, r.Form.Get("categories"))
	const perPage = 10
	start := min((pageno-1)*perPage, len(hits))
	hits = hits[start:min(start+perPage, len(hits))]
	results := make([]map[string]any, 0, len(hits))
	for i, d := range hits {
		u := d.URL
		if u == "" {
			u = base + d.Path
		}
		results = append(results, resultJSON(d, u, i+1, float64(len(hits)-i)))
	}
	if format != "json" {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s - SearXNG</title>", html.EscapeString(q))
		for _, res := range results {
			fmt.Fprintf(w, "<article><a href=%q>%s</a></article>", res["url"], html.EscapeString(res["title"].(string)))
		}
		return
	}
	unresponsive := make([][]string, 0, len(o.Unresponsive))
	for _, e := range o.Unresponsive {
		unresponsive = append(unresponsive, []string{e[0], e[1]})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"query":                q,
		"number_of_results":    0,
		"results":              results,
		"answers":              []any{},
		"corrections":          []any{},
		"infoboxes":            []any{},
		"suggestions":          []string{q + " review", q + " problems"},
		"unresponsive_engines": unresponsive,
	})
}

func resultJSON(d Doc, u string, pos int, score float64) map[string]any {
	pu, _ := url.Parse(u)
	parsed := []string{"", "", "", "", "", ""}
	if pu != nil {
		parsed = []string{pu.Scheme, pu.Host, pu.Path, "", pu.RawQuery, pu.Fragment}
	}
	engines := d.Engines
	if len(engines) == 0 {
		engines = []string{"duckduckgo"}
	}
	var published any
	if d.Published != "" {
		published = d.Published
	}
	category := d.Category
	if category == "" {
		category = "general"
	}
	return map[string]any{
		"url": u, "title": d.Title, "content": d.Snippet,
		"engine": engines[0], "engines": engines, "parsed_url": parsed,
		"template": "default.html", "positions": []int{pos}, "score": score,
		"category": category, "publishedDate": published, "thumbnail": "", "priority": "",
	}
}

func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// match ranks docs by how many query words occur in title, snippet and
// keywords; docs without any match are not results.
func (o Options) match(q, categories string) []Doc {
	type hit struct {
		d Doc
		n int
		i int
	}
	var hits []hit
	for i, d := range o.Docs {
		if categories != "" {
			c := d.Category
			if c == "" {
				c = "general"
			}
			if !slices.Contains(strings.Split(categories, ","), c) {
				continue
			}
		}
		text := map[string]bool{}
		for _, w := range words(d.Title + " " + d.Snippet + " " + d.Keywords) {
			text[w] = true
		}
		n := 0
		for _, w := range words(q) {
			if text[w] {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{d, n, i})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].n > hits[b].n })
	out := make([]Doc, len(hits))
	for i, h := range hits {
		out[i] = h.d
	}
	return out
}

func (o Options) page(w http.ResponseWriter, r *http.Request) {
	for _, d := range o.Docs {
		if d.URL != "" || d.Path != r.URL.Path {
			continue
		}
		if d.RedirectTo != "" {
			http.Redirect(w, r, d.RedirectTo, http.StatusFound)
			return
		}
		ct := d.ContentType
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		fmt.Fprint(w, d.Body)
		return
	}
	http.NotFound(w, r)
}
