// Package compare answers "what do several sources say about this?": it runs
// one search, fetches the top few results in parallel under one deadline,
// and keeps from each page only the passages that share the most terms with
// the question, so a model with a small context can see where sources agree
// or differ.
package compare

import (
	"context"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/web/fetch"
	"github.com/toolgate/toolgate/services/web/search"
)

// Bounds and defaults.
const (
	DefaultSources      = 3
	MaxSources          = 5
	DefaultPassages     = 2
	MaxPassages         = 5
	DefaultPassageChars = 400
	DefaultTimeout      = 20 * time.Second
	// fetchChars is how much of each page is scored; only the chosen
	// passages are returned.
	fetchChars = 60000
)

// Searcher runs a search.
type Searcher interface {
	Search(ctx context.Context, q search.Query) (*search.Results, error)
}

// Fetcher fetches one page.
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string, maxChars int) (*fetch.Page, error)
}

// Config configures a Comparer.
type Config struct {
	Searcher Searcher
	Fetcher  Fetcher
	// Timeout is the one deadline for all page fetches together.
	Timeout      time.Duration
	Sources      int
	Passages     int
	PassageChars int
}

// Comparer compares sources.
type Comparer struct{ cfg Config }

// New builds a Comparer.
func New(cfg Config) *Comparer {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Sources <= 0 {
		cfg.Sources = DefaultSources
	}
	cfg.Sources = min(cfg.Sources, MaxSources)
	if cfg.Passages <= 0 {
		cfg.Passages = DefaultPassages
	}
	cfg.Passages = min(cfg.Passages, MaxPassages)
	if cfg.PassageChars <= 0 {
		cfg.PassageChars = DefaultPassageChars
	}
	return &Comparer{cfg: cfg}
}

// Request is one comparison.
type Request struct {
	Question string
	// Query is the search query; empty means the question itself.
	Query     string
	Sources   int
	Language  string
	TimeRange string
}

// Source is what one page says.
type Source struct {
	Title       string   `json:"title"`
	URL         string   `json:"url"`
	Published   string   `json:"published,omitempty"`
	RetrievedAt string   `json:"retrieved_at,omitempty"`
	Passages    []string `json:"passages,omitempty"`
	// Error says why the page could not be read; Snippet then holds the
	// search engine's snippet instead.
	Error   *SourceError `json:"error,omitempty"`
	Snippet string       `json:"snippet,omitempty"`
}

// SourceError is a client-safe error code and message.
type SourceError struct {
	Code    toolerr.Code `json:"code"`
	Message string       `json:"message"`
}

// Result is the comparison.
type Result struct {
	Question     string                `json:"question"`
	Sources      []Source              `json:"sources"`
	Unresponsive []search.Unresponsive `json:"unresponsive_engines,omitempty"`
}

// Compare searches once and reads the top sources in parallel.
func (c *Comparer) Compare(ctx context.Context, r Request) (*Result, error) {
	r.Question = strings.TrimSpace(r.Question)
	if r.Question == "" {
		return nil, toolerr.New(toolerr.InvalidArgument, "the question is empty")
	}
	n := r.Sources
	if n <= 0 {
		n = c.cfg.Sources
	}
	n = min(n, MaxSources)
	q := r.Query
	if strings.TrimSpace(q) == "" {
		q = r.Question
	}
	res, err := c.cfg.Searcher.Search(ctx, search.Query{Q: q, Language: r.Language, TimeRange: r.TimeRange, Limit: n})
	if err != nil {
		return nil, err
	}
	hits := res.Results
	if len(hits) > n {
		hits = hits[:n]
	}
	terms := Terms(r.Question)
	out := &Result{Question: r.Question, Sources: make([]Source, len(hits)), Unresponsive: res.Unresponsive}
	fctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i, h := range hits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out.Sources[i] = c.source(fctx, h, terms)
		}()
	}
	wg.Wait()
	return out, nil
}

func (c *Comparer) source(ctx context.Context, h search.Result, terms []string) Source {
	s := Source{Title: h.Title, URL: h.URL, Published: h.Published}
	page, err := c.cfg.Fetcher.Fetch(ctx, h.URL, fetchChars)
	if err != nil {
		s.Error = &SourceError{Code: toolerr.CodeOf(err), Message: toolerr.MessageOf(err)}
		s.Snippet = h.Snippet
		return s
	}
	if page.Title != "" {
		s.Title = page.Title
	}
	if page.Published != "" {
		s.Published = page.Published
	}
	s.RetrievedAt = page.RetrievedAt
	s.Passages = Best(page.Content, terms, c.cfg.Passages, c.cfg.PassageChars)
	return s
}

// stopwords are dropped from questions (English and German, the languages
// of the project's users); they match everywhere and rank nothing.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but of to in on at for from by with about as is are was were be been
	being it its this that these those what which who whom whose when where why how do does did can could should would will
	shall may might must has have had not no yes than then there their they them you your we our i me my he she his her
	der die das den dem des ein eine einer eines einem einen und oder aber von zu im in am an auf für mit über als ist sind
	war waren sein wird werden wurde wie was wer wo warum wann welche welcher welches nicht kein keine es sie er ich du wir
	ihr man sich auch noch schon nur bei aus nach vor um durch gibt gab hat haben hatte kann können soll sollte`) {
		stopwords[w] = true
	}
}

// Terms returns the distinct lower-case content words of a question.
func Terms(q string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tokens(q) {
		if (utf8.RuneCountInString(t) < 2 && !isNumber(t)) || stopwords[t] || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func isNumber(s string) bool { return strings.Trim(s, "0123456789") == "" }

// Passages splits Markdown text into paragraphs, dropping headings-only,
// link-only and very short lines and splitting long paragraphs at sentence
// ends so each passage stays under max characters.
func Passages(text string, max int) []string {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
		p := strings.Join(strings.Fields(para), " ")
		if utf8.RuneCountInString(p) < 40 || strings.HasPrefix(p, "![") || strings.HasPrefix(p, "#") && utf8.RuneCountInString(p) < 120 {
			continue
		}
		out = append(out, split(p, max)...)
	}
	return out
}

// split cuts p into chunks of at most max runes, preferring sentence ends.
func split(p string, max int) []string {
	var out []string
	for utf8.RuneCountInString(p) > max {
		r := []rune(p)
		cut := -1
		for i := max - 1; i > max/3; i-- {
			if (r[i] == '.' || r[i] == '!' || r[i] == '?') && i+1 < len(r) && r[i+1] == ' ' {
				cut = i + 1
				break
			}
		}
		if cut < 0 {
			cut = max - 1
			for i := max - 1; i > max/2; i-- {
				if r[i] == ' ' {
					cut = i
					break
				}
			}
		}
		out = append(out, strings.TrimSpace(string(r[:cut])))
		p = strings.TrimSpace(string(r[cut:]))
	}
	if p != "" {
		out = append(out, p)
	}
	return out
}

// Score is the term overlap of a passage with the question's terms: each
// distinct matched term counts 1, repeated mentions add a little (log), so
// a passage touching more aspects of the question wins over one repeating a
// single word.
func Score(passage string, terms []string) float64 {
	counts := map[string]int{}
	for _, t := range tokens(passage) {
		counts[t]++
	}
	var s float64
	for _, t := range terms {
		if n := counts[t]; n > 0 {
			s += 1 + 0.25*math.Log(float64(n))
		}
	}
	return s
}

// Best returns the k passages of text that score highest against terms, in
// their original order. When nothing matches, the opening passage stands
// in, so every readable source says something.
func Best(text string, terms []string, k, max int) []string {
	ps := Passages(text, max)
	if len(ps) == 0 {
		return nil
	}
	type scored struct {
		i int
		s float64
	}
	var ss []scored
	for i, p := range ps {
		if s := Score(p, terms); s > 0 {
			ss = append(ss, scored{i, s})
		}
	}
	if len(ss) == 0 {
		return ps[:1]
	}
	sort.SliceStable(ss, func(a, b int) bool { return ss[a].s > ss[b].s })
	if len(ss) > k {
		ss = ss[:k]
	}
	sort.Slice(ss, func(a, b int) bool { return ss[a].i < ss[b].i })
	out := make([]string, len(ss))
	for j, x := range ss {
		out[j] = ps[x.i]
	}
	return out
}
