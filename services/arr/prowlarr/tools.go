package prowlarr

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// Tools returns the prowlarr_ tools, none for a nil Client (Prowlarr not
// configured). All of them only read.
func Tools(c *Client) []toolkit.Tool {
	if c == nil {
		return nil
	}
	searchTimeout := c.SearchTimeout()
	t := &tools{c: c}
	return []toolkit.Tool{
		{
			Name:  "prowlarr_indexer_list",
			Title: "Prowlarr indexers",
			Description: "List Prowlarr's indexers: id, name, enabled, protocol, privacy, priority and whether Prowlarr has disabled it after failures. " +
				"Use the ids for prowlarr_indexer_get and prowlarr_search. Cheap; settings are not included.",
			Annotations: arrapi.ReadOnly,
			Handler:     toolkit.ReadFor(t.indexerList),
		},
		{
			Name:        "prowlarr_indexer_get",
			Title:       "One Prowlarr indexer",
			Description: "Show one Prowlarr indexer with its settings and categories. Credentials (API keys, passwords, user names, cookies, passkeys) are withheld and shown only as masked. Cheap.",
			Annotations: arrapi.ReadOnly,
			Handler:     toolkit.ReadFor(t.indexerGet),
		},
		{
			Name:        "prowlarr_indexer_status",
			Title:       "Prowlarr indexer failures",
			Description: "List indexers with recorded failures: first and most recent failure and until when Prowlarr keeps the indexer disabled. Indexers not listed have no failures. Cheap.",
			Annotations: arrapi.ReadOnly,
			Handler:     toolkit.ReadFor(t.indexerStatus),
		},
		{
			Name:        "prowlarr_indexer_stats",
			Title:       "Prowlarr indexer statistics",
			Description: "Query, grab and failure counts and average response times per indexer (and per calling application and host), optionally for a time window and some indexers. Cheap.",
			Annotations: arrapi.ReadOnly,
			Handler:     toolkit.ReadFor(t.indexerStats),
		},
		{
			Name:        "prowlarr_health",
			Title:       "Prowlarr health",
			Description: "List Prowlarr's current health warnings and errors (unreachable indexers, application sync problems, updates). Cheap.",
			Annotations: arrapi.ReadOnly,
			Handler:     toolkit.ReadFor(arrapi.HealthTool(c.api)),
		},
		{
			Name:  "prowlarr_search",
			Title: "Search Prowlarr's indexers",
			Description: fmt.Sprintf("Search releases across Prowlarr's indexers by text, optionally narrowed by search type, Newznab categories (e.g. 2000 movies, 5000 TV) and indexer ids. "+
				"Slow and costly: it queries every selected indexer live and counts against their limits, so it has its own deadline of %s. "+
				"Returns compact results (title, indexer, size, age, seeders); download and magnet links are never returned. Nothing is downloaded.", (searchTimeout + arrapi.SearchSlack).String()),
			Annotations: toolkit.Annotations{ReadOnly: true, OpenWorld: true},
			Timeout:     searchTimeout + arrapi.SearchSlack,
			Handler:     toolkit.ReadFor(t.search),
		},
	}
}

type tools struct{ c *Client }

type indexerSummary struct {
	ID             int        `json:"id"`
	Name           string     `json:"name"`
	Enabled        bool       `json:"enabled"`
	Protocol       string     `json:"protocol,omitempty"`
	Privacy        string     `json:"privacy,omitempty"`
	Priority       int        `json:"priority"`
	Definition     string     `json:"definition,omitempty"`
	AppProfileID   int        `json:"app_profile_id,omitempty"`
	Tags           []int      `json:"tags,omitempty"`
	SupportsSearch bool       `json:"supports_search"`
	SupportsRSS    bool       `json:"supports_rss"`
	DisabledTill   *time.Time `json:"disabled_till,omitempty"`
}

func summarize(ix Indexer) indexerSummary {
	s := indexerSummary{
		ID: ix.ID, Name: ix.Name, Enabled: ix.Enable, Protocol: ix.Protocol, Privacy: ix.Privacy,
		Priority: ix.Priority, Definition: firstNonEmpty(ix.DefinitionName, ix.ImplementationName, ix.Implementation),
		AppProfileID: ix.AppProfileID, Tags: ix.Tags, SupportsSearch: ix.SupportsSearch, SupportsRSS: ix.SupportsRSS,
	}
	if ix.Status != nil {
		s.DisabledTill = ix.Status.DisabledTill
	}
	return s
}

func (t *tools) indexerList(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	ixs, err := t.c.Indexers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]indexerSummary, 0, len(ixs))
	for _, ix := range ixs {
		out = append(out, summarize(ix))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return map[string]any{"count": len(out), "indexers": out}, nil
}

func (t *tools) indexerGet(ctx context.Context, in indexerArgs) (any, error) {
	ix, err := t.c.Indexer(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, u := range ix.IndexerURLs {
		if s := SafeLink(u, t.c.key); s != "" {
			urls = append(urls, s)
		}
	}
	var cats []string
	if ix.Capabilities != nil {
		for _, c := range ix.Capabilities.Categories {
			cats = append(cats, categoryName(c))
		}
	}
	return map[string]any{
		"indexer":     summarize(ix),
		"description": ix.Description,
		"language":    ix.Language,
		"urls":        urls,
		"categories":  cats,
		"settings":    maskFields(ix.Fields, t.c.key),
		"note":        "credential settings are withheld (masked: true means a value is set)",
	}, nil
}

type failure struct {
	IndexerID         int        `json:"indexer_id"`
	Indexer           string     `json:"indexer,omitempty"`
	DisabledTill      *time.Time `json:"disabled_till,omitempty"`
	MostRecentFailure *time.Time `json:"most_recent_failure,omitempty"`
	InitialFailure    *time.Time `json:"initial_failure,omitempty"`
}

func (t *tools) indexerStatus(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	st, err := t.c.IndexerStatuses(ctx)
	if err != nil {
		return nil, err
	}
	names := map[int]string{}
	if len(st) > 0 {
		ixs, err := t.c.Indexers(ctx)
		if err != nil {
			return nil, err
		}
		for _, ix := range ixs {
			names[ix.ID] = ix.Name
		}
	}
	out := make([]failure, 0, len(st))
	for _, s := range st {
		out = append(out, failure{
			IndexerID: s.IndexerID, Indexer: names[s.IndexerID], DisabledTill: s.DisabledTill,
			MostRecentFailure: s.MostRecentFailure, InitialFailure: s.InitialFailure,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IndexerID < out[j].IndexerID })
	return map[string]any{"count": len(out), "failing": out, "note": "indexers not listed have no recorded failures"}, nil
}

func (t *tools) indexerStats(ctx context.Context, in statsArgs) (any, error) {
	q := StatsQuery{IndexerIDs: in.IndexerIDs}
	if in.Start != nil {
		q.Start = *in.Start
	}
	if in.End != nil {
		q.End = *in.End
	}
	if !q.Start.IsZero() && !q.End.IsZero() && q.End.Before(q.Start) {
		return nil, invalid("end must not be before start")
	}
	st, err := t.c.IndexerStats(ctx, q)
	if err != nil {
		return nil, err
	}
	type line struct {
		IndexerID         int    `json:"indexer_id"`
		Indexer           string `json:"indexer"`
		Queries           int    `json:"queries"`
		Grabs             int    `json:"grabs"`
		RSSQueries        int    `json:"rss_queries"`
		AuthQueries       int    `json:"auth_queries"`
		FailedQueries     int    `json:"failed_queries"`
		FailedGrabs       int    `json:"failed_grabs"`
		FailedRSSQueries  int    `json:"failed_rss_queries"`
		FailedAuthQueries int    `json:"failed_auth_queries"`
		AvgResponseMS     int    `json:"avg_response_ms"`
		AvgGrabResponseMS int    `json:"avg_grab_response_ms"`
	}
	lines := make([]line, 0, len(st.Indexers))
	for _, s := range st.Indexers {
		lines = append(lines, line{
			IndexerID: s.IndexerID, Indexer: s.IndexerName, Queries: s.NumberOfQueries, Grabs: s.NumberOfGrabs,
			RSSQueries: s.NumberOfRssQueries, AuthQueries: s.NumberOfAuthQueries, FailedQueries: s.NumberOfFailedQueries,
			FailedGrabs: s.NumberOfFailedGrabs, FailedRSSQueries: s.NumberOfFailedRssQueries,
			FailedAuthQueries: s.NumberOfFailedAuthQueries, AvgResponseMS: s.AverageResponseTime, AvgGrabResponseMS: s.AverageGrabResponseTime,
		})
	}
	type count struct {
		Name    string `json:"name"`
		Queries int    `json:"queries"`
		Grabs   int    `json:"grabs"`
	}
	counts := func(cs []CountStatistics) []count {
		out := make([]count, 0, len(cs))
		for _, c := range cs {
			out = append(out, count{Name: firstNonEmpty(c.UserAgent, c.Host), Queries: c.NumberOfQueries, Grabs: c.NumberOfGrabs})
		}
		return out
	}
	return map[string]any{"indexers": lines, "user_agents": counts(st.UserAgents), "hosts": counts(st.Hosts)}, nil
}

type releaseOut struct {
	Title       string     `json:"title"`
	Indexer     string     `json:"indexer"`
	IndexerID   int        `json:"indexer_id"`
	Protocol    string     `json:"protocol,omitempty"`
	SizeBytes   int64      `json:"size_bytes"`
	Size        string     `json:"size"`
	AgeDays     int        `json:"age_days"`
	PublishDate *time.Time `json:"publish_date,omitempty"`
	Seeders     *int       `json:"seeders,omitempty"`
	Leechers    *int       `json:"leechers,omitempty"`
	Grabs       *int       `json:"grabs,omitempty"`
	Files       *int       `json:"files,omitempty"`
	Categories  []string   `json:"categories,omitempty"`
	IMDbID      int        `json:"imdb_id,omitempty"`
	TMDbID      int        `json:"tmdb_id,omitempty"`
	TVDbID      int        `json:"tvdb_id,omitempty"`
	InfoURL     string     `json:"info_url,omitempty"`
}

func (t *tools) search(ctx context.Context, in searchArgs) (any, error) {
	if in.Type == "" {
		in.Type = "search"
	}
	if in.Limit == 0 {
		in.Limit = 25
	}
	rels, err := t.c.Search(ctx, SearchQuery(in))
	if err != nil {
		return nil, err
	}
	total := len(rels)
	if len(rels) > in.Limit {
		rels = rels[:in.Limit]
	}
	out := make([]releaseOut, 0, len(rels))
	for _, r := range rels {
		o := releaseOut{
			Title: r.Title, Indexer: r.Indexer, IndexerID: r.IndexerID, Protocol: r.Protocol,
			SizeBytes: r.Size, Size: arrapi.HumanSize(r.Size), AgeDays: r.Age, PublishDate: r.PublishDate,
			Seeders: r.Seeders, Leechers: r.Leechers, Grabs: r.Grabs, Files: r.Files,
			IMDbID: r.IMDbID, TMDbID: r.TMDbID, TVDbID: r.TVDbID,
			InfoURL: firstNonEmpty(SafeLink(r.InfoURL, t.c.key), SafeLink(r.CommentURL, t.c.key)),
		}
		for _, c := range r.Categories {
			o.Categories = append(o.Categories, categoryName(c))
		}
		out = append(out, o)
	}
	note := "download and magnet links are withheld; nothing was downloaded. limit and offset page each indexer's answer, so total counts what the indexers returned for this page"
	if total == 0 {
		// Prowlarr answers a search that failed on an indexer (or on
		// every one) with no results rather than an error.
		note += ". No results can also mean the indexers failed: Prowlarr reports a failed search as an empty one; check prowlarr_indexer_status"
	}
	return map[string]any{"query": in.Query, "returned": len(out), "total": total, "releases": out, "note": note}, nil
}

func categoryName(c Category) string {
	if c.Name == "" {
		return fmt.Sprint(c.ID)
	}
	return fmt.Sprintf("%d %s", c.ID, c.Name)
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
