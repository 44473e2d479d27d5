// Package search queries a SearXNG instance through its JSON API
// (GET /search?q=…&format=json) and returns compact results: title, URL,
// a short snippet, engines and the published date, de-duplicated by
// canonical URL and bounded in number. Engines that did not answer are
// reported, not hidden, and SearXNG's known failure modes (JSON format not
// enabled, limiter, no results) become clear errors.
package search

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// Bounds and defaults.
const (
	DefaultLimit        = 8
	MaxLimit            = 20
	DefaultSnippetChars = 240
	maxAnswers          = 3
	maxUnresponsive     = 10
)

// Categories are the SearXNG categories a caller may pick.
var Categories = []string{"general", "news", "it", "science", "social media", "files", "videos"}

// TimeRanges are SearXNG's time_range values.
var TimeRanges = []string{"day", "week", "month", "year"}

// Config configures a Client.
type Config struct {
	// BaseURL is SearXNG's root, e.g. http://searxng:8080/.
	BaseURL   string
	AllowHTTP bool
	CAFile    string
	// Timeout bounds one request to SearXNG (SearXNG itself waits for its
	// engines, typically 3-10 s).
	Timeout      time.Duration
	SnippetChars int
	UserAgent    string
}

// Client talks to one SearXNG.
type Client struct {
	up           *upstream.Client
	snippetChars int
}

// New builds a Client.
func New(cfg Config) (*Client, error) {
	if cfg.SnippetChars <= 0 {
		cfg.SnippetChars = DefaultSnippetChars
	}
	up, err := upstream.New(upstream.Config{
		Name: "SearXNG", Setting: "WEB_SEARXNG_URL", BaseURL: cfg.BaseURL, AllowHTTP: cfg.AllowHTTP, CAFile: cfg.CAFile,
		Timeout: cfg.Timeout, MaxBytes: 4 << 20,
		// One retry for a network blip or 5xx; SearXNG's limiter answers
		// 429 without Retry-After, and hammering it only prolongs a block.
		Retries: 1, MaxRetryAfter: -1,
		UserAgent: cfg.UserAgent,
	})
	if err != nil {
		return nil, err
	}
	return &Client{up: up, snippetChars: cfg.SnippetChars}, nil
}

// Query is one search.
type Query struct {
	Q          string
	Categories []string
	Language   string
	TimeRange  string
	Page       int
	// SafeSearch is 0 (off), 1 (moderate) or 2 (strict); nil leaves
	// SearXNG's default.
	SafeSearch *int
	Limit      int
}

// Result is one compact search result.
type Result struct {
	Title     string   `json:"title"`
	URL       string   `json:"url"`
	Snippet   string   `json:"snippet,omitempty"`
	Engines   []string `json:"engines,omitempty"`
	Published string   `json:"published,omitempty"`
}

// Unresponsive is an engine that did not answer and why.
type Unresponsive struct {
	Engine string `json:"engine"`
	Reason string `json:"reason"`
}

// Results is the compact answer to a Query.
type Results struct {
	Query   string   `json:"query"`
	Results []Result `json:"results"`
	// Answers are SearXNG's instant answers, when any.
	Answers      []string       `json:"answers,omitempty"`
	Unresponsive []Unresponsive `json:"unresponsive_engines,omitempty"`
	// MoreAvailable says the limit cut further results.
	MoreAvailable bool `json:"more_available,omitempty"`
}

// wire is SearXNG's JSON answer (searx/webutils.py get_json_response).
type wire struct {
	Query        string            `json:"query"`
	Results      []wireResult      `json:"results"`
	Answers      []json.RawMessage `json:"answers"`
	Unresponsive [][]any           `json:"unresponsive_engines"`
}

type wireResult struct {
	URL           string   `json:"url"`
	Title         string   `json:"title"`
	Content       string   `json:"content"`
	Engine        string   `json:"engine"`
	Engines       []string `json:"engines"`
	PublishedDate *string  `json:"publishedDate"`
}

// Search runs q. A search with no results is a NotFound error that says
// which engines failed, so the model reports it instead of retrying with
// synonyms.
func (c *Client) Search(ctx context.Context, q Query) (*Results, error) {
	q.Q = strings.TrimSpace(q.Q)
	if q.Q == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "the query is empty")
	}
	for _, w := range strings.Fields(q.Q) {
		// searx/query.py: a word !!<bang> is an external bang; SearXNG
		// answers it with a redirect to that site, whatever the format,
		// instead of searching.
		if len(w) > 2 && strings.HasPrefix(w, "!!") {
			return nil, toolerr.New(toolerr.InvalidArgument, "the query contains %q: SearXNG treats a word starting with !! as an external bang and sends the search to another site instead of answering; remove it", clip(w, 20))
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	v := url.Values{"q": {q.Q}, "format": {"json"}}
	if len(q.Categories) > 0 {
		v.Set("categories", strings.Join(q.Categories, ","))
	}
	if q.Language != "" {
		v.Set("language", q.Language)
	}
	if q.TimeRange != "" {
		v.Set("time_range", q.TimeRange)
	}
	if q.Page > 1 {
		v.Set("pageno", strconv.Itoa(q.Page))
	}
	if q.SafeSearch != nil {
		v.Set("safesearch", strconv.Itoa(*q.SafeSearch))
	}
	resp, err := c.up.Do(ctx, upstream.Request{Path: "/search", Query: v})
	if err != nil {
		return nil, err
	}
	if err := statusErr(resp); err != nil {
		return nil, err
	}
	var w wire
	if err := json.Unmarshal(resp.Body, &w); err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "SearXNG answered with something other than its JSON results; check WEB_SEARXNG_URL points at SearXNG")
	}
	out := &Results{Query: q.Q, Results: []Result{}}
	out.Unresponsive = unresponsive(w.Unresponsive)
	out.Answers = answers(w.Answers)
	seen := map[string]int{}
	for _, r := range w.Results {
		key, ok := Canonical(r.URL)
		if !ok {
			continue
		}
		engines := r.Engines
		if len(engines) == 0 && r.Engine != "" {
			engines = []string{r.Engine}
		}
		if i, dup := seen[key]; dup {
			out.Results[i].Engines = mergeEngines(out.Results[i].Engines, engines)
			continue
		}
		if len(out.Results) == limit {
			out.MoreAvailable = true
			continue
		}
		seen[key] = len(out.Results)
		out.Results = append(out.Results, Result{
			Title:     clip(r.Title, 200),
			URL:       r.URL,
			Snippet:   clip(r.Content, c.snippetChars),
			Engines:   mergeEngines(nil, engines),
			Published: date(r.PublishedDate),
		})
	}
	if len(out.Results) == 0 && len(out.Answers) == 0 {
		msg := "no results for this query"
		if len(out.Unresponsive) > 0 {
			var names []string
			for _, u := range out.Unresponsive {
				names = append(names, u.Engine+" ("+u.Reason+")")
			}
			msg += "; engines that did not answer: " + strings.Join(names, ", ")
		}
		// searx/search/processors/abstract.py get_params: an engine that
		// cannot filter by time or page is not asked at all, and the
		// answer does not say so.
		if q.TimeRange != "" || q.Page > 1 {
			msg += "; with a time_range or a page above 1 SearXNG asks only the engines that support it, so fewer engines searched: try without time_range or with page 1 before concluding nothing exists"
		}
		return nil, toolerr.New(toolerr.NotFound, "%s. Do not repeat the search with synonyms: tell the user nothing was found, or ask how to narrow or rephrase it", msg)
	}
	return out, nil
}

// statusErr maps SearXNG's statuses; SearXNG's own reason (index_error's
// {"error": …}, e.g. "Invalid value xx for parameter language") ends the
// message, framed. Bodies are never quoted.
func statusErr(r *upstream.Response) error {
	return r.Explain(statusMeaning(r))
}

func statusMeaning(r *upstream.Response) error {
	s := r.Status
	switch {
	case s >= 200 && s < 300:
		return nil
	case s == http.StatusForbidden:
		return toolerr.New(toolerr.Forbidden, "SearXNG refused the JSON format (HTTP 403): add json to search.formats in SearXNG's settings.yml (formats: [html, json]) and restart SearXNG")
	case s == http.StatusTooManyRequests:
		return toolerr.New(toolerr.Busy, "SearXNG's limiter blocked the request (HTTP 429): let the web service through (server.limiter: false, or the web container's address in limiter.toml pass_ip) or try again later")
	case s == http.StatusBadRequest:
		return toolerr.New(toolerr.InvalidArgument, "SearXNG rejected the search parameters (HTTP 400); check language, categories and time_range")
	case s == http.StatusUnauthorized:
		return toolerr.New(toolerr.AuthFailed, "SearXNG (or a proxy in front of it) asks for credentials (HTTP 401); point WEB_SEARXNG_URL at SearXNG directly")
	case s >= 500:
		return toolerr.New(toolerr.UpstreamUnavailable, "SearXNG failed (HTTP %d); check its log", s)
	}
	return toolerr.New(toolerr.UpstreamUnavailable, "SearXNG answered HTTP %d; check WEB_SEARXNG_URL", s)
}

// Ready checks that SearXNG is up and serves JSON without running a
// search: a query-less JSON request answers 400 ("No query") when the JSON
// format is enabled and 403 when it is not.
func (c *Client) Ready(ctx context.Context) error {
	resp, err := c.up.Do(ctx, upstream.Request{Path: "/search", Query: url.Values{"format": {"json"}}})
	if err != nil {
		return err
	}
	switch resp.Status {
	case http.StatusBadRequest, http.StatusOK:
		return nil
	}
	if err := statusErr(resp); err != nil {
		return err
	}
	return errors.New("unexpected SearXNG status")
}

// Canonical returns the de-duplication key of a result URL: scheme and host
// lower-cased, "www." and default ports dropped, fragment and tracking
// parameters removed, the rest of the query sorted and a trailing slash
// ignored. It reports false for anything but an absolute http(s) URL.
func Canonical(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	if p := u.Port(); p != "" && !(p == "80" && u.Scheme == "http") && !(p == "443" && u.Scheme == "https") {
		host += ":" + p
	}
	q := u.Query()
	for k := range q {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "utm_") || lk == "fbclid" || lk == "gclid" || lk == "mc_cid" || lk == "mc_eid" || lk == "ref" {
			q.Del(k)
		}
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	// http and https of one page are one result.
	return host + path + "?" + q.Encode(), true
}

func mergeEngines(have, add []string) []string {
	set := map[string]bool{}
	for _, e := range have {
		set[e] = true
	}
	for _, e := range add {
		if e = strings.TrimSpace(e); e != "" {
			set[e] = true
		}
	}
	out := make([]string, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}

func unresponsive(raw [][]any) []Unresponsive {
	var out []Unresponsive
	for _, pair := range raw {
		if len(out) == maxUnresponsive {
			break
		}
		if len(pair) == 0 {
			continue
		}
		name, _ := pair[0].(string)
		reason := "no answer"
		if len(pair) > 1 {
			if s, ok := pair[1].(string); ok && s != "" {
				reason = s
			}
		}
		if name != "" {
			out = append(out, Unresponsive{Engine: clip(name, 60), Reason: clip(reason, 100)})
		}
	}
	return out
}

// answers accepts both forms SearXNG has used: plain strings (older
// releases) and objects with an "answer" member.
func answers(raw []json.RawMessage) []string {
	var out []string
	for _, r := range raw {
		if len(out) == maxAnswers {
			break
		}
		var s string
		if json.Unmarshal(r, &s) != nil {
			var o struct {
				Answer string `json:"answer"`
			}
			if json.Unmarshal(r, &o) != nil {
				continue
			}
			s = o.Answer
		}
		if s = clip(s, 300); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// date keeps the calendar date of SearXNG's publishedDate (ISO 8601, with
// or without zone) or drops it when unparseable.
func date(p *string) string {
	if p == nil || *p == "" {
		return ""
	}
	s := *p
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format("2006-01-02")
		}
	}
	if len(s) >= 10 {
		if t, err := time.Parse("2006-01-02", s[:10]); err == nil {
			return t.Format("2006-01-02")
		}
	}
	return ""
}

// clip collapses whitespace and cuts s to n characters with an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}
