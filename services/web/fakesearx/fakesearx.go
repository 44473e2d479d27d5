// Package fakesearx is a stand-in for SearXNG and a handful of web pages,
// for tests and the demo profile. /search answers like SearXNG's webapp
// (searx/webapp.py and searx/webadapter.py, searxng/searxng at 9fea4120,
// August 2026): 403 when the requested format is not in search.formats,
// 400 {"error": "No query"} without q, 400 {"error": "Invalid value … for
// parameter …"} for an invalid pageno, time_range, safesearch or language,
// unknown categories ignored, a 302 to the
// external site for a known external bang (!!g …) whatever the format,
// 429 when the limiter is on, and otherwise the JSON shape of
// get_json_response (query without the query's special words, results,
// answers, corrections, infoboxes, suggestions, unresponsive_engines as
// [name, reason] pairs; number_of_results was dropped in May 2026).
// /pages/… serves the fixture pages the results point at; /healthz
// answers OK.
package fakesearx

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// validLanguage is searx/webutils.py's VALID_LANGUAGE_CODE.
var validLanguage = regexp.MustCompile(`^[a-z]{2,3}(-[a-zA-Z]{2})?$`)

// categories are SearXNG's default categories; others are ignored.
var categories = []string{"general", "images", "videos", "news", "map", "music", "it", "science", "files", "social media"}

// externalBangs are a few of SearXNG's external bangs (searx/data/
// external_bangs.json) and where they lead.
var externalBangs = map[string]string{"g": "https://www.google.com/search?q=", "ddg": "https://duckduckgo.com/?q=", "w": "https://en.wikipedia.org/wiki/Special:Search?search="}

func invalid(w http.ResponseWriter, name, value string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": "Invalid value " + value + " for parameter " + name})
}

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
	// NoPaging and NoTimeRange name engines without paging or
	// time_range_support: SearXNG does not ask them at all for a page
	// above 1 or with a time range (searx/search/processors/abstract.py
	// get_params), and says so nowhere in the answer.
	NoPaging, NoTimeRange []string
}

// asked returns d with only the engines SearXNG asks for this page and
// time range; ok is false when none is left.
func (o Options) asked(d Doc, pageno int, timeRange bool) (Doc, bool) {
	if len(d.Engines) == 0 {
		return d, true
	}
	var engines []string
	for _, e := range d.Engines {
		if pageno > 1 && slices.Contains(o.NoPaging, e) || timeRange && slices.Contains(o.NoTimeRange, e) {
			continue
		}
		engines = append(engines, e)
	}
	d.Engines = engines
	return d, len(engines) > 0
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
			invalid(w, "pageno", v)
			return
		}
		pageno = n
	}
	if v := r.Form.Get("safesearch"); v != "" && !slices.Contains([]string{"0", "1", "2"}, v) {
		invalid(w, "safesearch", v)
		return
	}
	if v := r.Form.Get("time_range"); v != "" && v != "None" && !slices.Contains([]string{"day", "week", "month", "year"}, v) {
		invalid(w, "time_range", v)
		return
	}
	if v := r.Form.Get("language"); v != "" && v != "auto" && !validLanguage.MatchString(v) {
		invalid(w, "language", v)
		return
	}
	// searx/query.py RawTextQuery: a known external bang redirects before
	// any search, whatever the format; special words leave the query.
	var words []string
	for _, word := range strings.Fields(q) {
		if bang, ok := strings.CutPrefix(word, "!!"); ok && externalBangs[strings.ToLower(bang)] != "" {
			rest := strings.Join(slices.DeleteFunc(strings.Fields(q), func(x string) bool { return x == word }), " ")
			http.Redirect(w, r, externalBangs[strings.ToLower(bang)]+url.QueryEscape(rest), http.StatusFound)
			return
		}
		if strings.HasPrefix(word, ":") && validLanguage.MatchString(strings.ToLower(word[1:])) {
			continue
		}
		words = append(words, word)
	}
	q = strings.Join(words, " ")
	base := o.PageBase
	if base == "" {
		base = "http://" + r.Host
	}
	hits := o.match(q, knownCategories(r.Form.Get("categories")))
	timeRange := r.Form.Get("time_range") != "" && r.Form.Get("time_range") != "None"
	hits = slices.DeleteFunc(hits, func(d Doc) bool { _, ok := o.asked(d, pageno, timeRange); return !ok })
	for i := range hits {
		hits[i], _ = o.asked(hits[i], pageno, timeRange)
	}
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
		"results":              results,
		"answers":              []any{},
		"corrections":          []any{},
		"infoboxes":            []any{},
		"suggestions":          []string{q + " review", q + " problems"},
		"unresponsive_engines": unresponsive,
	})
}

// knownCategories keeps the categories SearXNG knows, as
// parse_category_form does. None left is a search without categories: the
// instance's default engines (the fake does not model engines, so every
// document may answer).
func knownCategories(v string) string {
	var out []string
	for _, c := range strings.Split(v, ",") {
		if c = strings.TrimSpace(c); slices.Contains(categories, c) {
			out = append(out, c)
		}
	}
	return strings.Join(out, ",")
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
func (o Options) match(q, cats string) []Doc {
	type hit struct {
		d Doc
		n int
		i int
	}
	var hits []hit
	for i, d := range o.Docs {
		if cats != "" {
			c := d.Category
			if c == "" {
				c = "general"
			}
			if !slices.Contains(strings.Split(cats, ","), c) {
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
