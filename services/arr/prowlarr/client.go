// Package prowlarr is a small typed client for Prowlarr's v1 API and the
// read-only prowlarr_ tools built on it: indexers (secret settings masked),
// indexer failures and statistics, health, and search across the indexers
// (never returning download or magnet links, which carry Prowlarr's API key
// or a tracker passkey).
package prowlarr

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// Client is the typed Prowlarr API on top of the shared *arr base client
// (API root /api/v1). It is safe for concurrent use.
type Client struct {
	api *arrapi.Client
	key []byte
}

// New wraps a base client configured for Prowlarr; nil gives nil (Prowlarr
// not configured).
func New(api *arrapi.Client) *Client {
	if api == nil {
		return nil
	}
	return &Client{api: api, key: api.Secret()}
}

// SearchTimeout is the upstream deadline of a search.
func (c *Client) SearchTimeout() time.Duration { return c.api.SearchTimeout() }

// Field is one setting of an indexer (Prowlarr's Field).
type Field struct {
	Name     string          `json:"name"`
	Label    string          `json:"label"`
	Value    json.RawMessage `json:"value"`
	Type     string          `json:"type"`
	Privacy  string          `json:"privacy"`
	Advanced bool            `json:"advanced"`
}

// IndexerStatus is Prowlarr's IndexerStatusResource: present only for an
// indexer with recorded failures.
type IndexerStatus struct {
	ID                int        `json:"id"`
	IndexerID         int        `json:"indexerId"`
	DisabledTill      *time.Time `json:"disabledTill"`
	MostRecentFailure *time.Time `json:"mostRecentFailure"`
	InitialFailure    *time.Time `json:"initialFailure"`
}

// Category is Prowlarr's IndexerCategory.
type Category struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// Indexer is the part of Prowlarr's IndexerResource the tools use.
type Indexer struct {
	ID                 int            `json:"id"`
	Name               string         `json:"name"`
	Fields             []Field        `json:"fields"`
	Implementation     string         `json:"implementation"`
	ImplementationName string         `json:"implementationName"`
	DefinitionName     string         `json:"definitionName"`
	Description        string         `json:"description"`
	Language           string         `json:"language"`
	IndexerURLs        []string       `json:"indexerUrls"`
	Enable             bool           `json:"enable"`
	Redirect           bool           `json:"redirect"`
	SupportsRSS        bool           `json:"supportsRss"`
	SupportsSearch     bool           `json:"supportsSearch"`
	AppProfileID       int            `json:"appProfileId"`
	Protocol           string         `json:"protocol"`
	Privacy            string         `json:"privacy"`
	Priority           int            `json:"priority"`
	Tags               []int          `json:"tags"`
	Added              *time.Time     `json:"added"`
	Status             *IndexerStatus `json:"status"`
	Capabilities       *struct {
		Categories []Category `json:"categories"`
	} `json:"capabilities"`
}

// IndexerStatistics is one indexer's line in IndexerStatsResource.
type IndexerStatistics struct {
	IndexerID                 int    `json:"indexerId"`
	IndexerName               string `json:"indexerName"`
	AverageResponseTime       int    `json:"averageResponseTime"`
	AverageGrabResponseTime   int    `json:"averageGrabResponseTime"`
	NumberOfQueries           int    `json:"numberOfQueries"`
	NumberOfGrabs             int    `json:"numberOfGrabs"`
	NumberOfRssQueries        int    `json:"numberOfRssQueries"`
	NumberOfAuthQueries       int    `json:"numberOfAuthQueries"`
	NumberOfFailedQueries     int    `json:"numberOfFailedQueries"`
	NumberOfFailedGrabs       int    `json:"numberOfFailedGrabs"`
	NumberOfFailedRssQueries  int    `json:"numberOfFailedRssQueries"`
	NumberOfFailedAuthQueries int    `json:"numberOfFailedAuthQueries"`
}

// CountStatistics is a user-agent or host line in IndexerStatsResource.
type CountStatistics struct {
	UserAgent       string `json:"userAgent,omitempty"`
	Host            string `json:"host,omitempty"`
	NumberOfQueries int    `json:"numberOfQueries"`
	NumberOfGrabs   int    `json:"numberOfGrabs"`
}

// IndexerStats is Prowlarr's IndexerStatsResource.
type IndexerStats struct {
	Indexers   []IndexerStatistics `json:"indexers"`
	UserAgents []CountStatistics   `json:"userAgents"`
	Hosts      []CountStatistics   `json:"hosts"`
}

// Release is the part of Prowlarr's ReleaseResource the tools use.
// DownloadURL and MagnetURL are decoded only so tests can prove they never
// leave; no tool returns them.
type Release struct {
	GUID        string     `json:"guid"`
	Age         int        `json:"age"`
	Size        int64      `json:"size"`
	Files       *int       `json:"files"`
	Grabs       *int       `json:"grabs"`
	IndexerID   int        `json:"indexerId"`
	Indexer     string     `json:"indexer"`
	Title       string     `json:"title"`
	IMDbID      int        `json:"imdbId"`
	TMDbID      int        `json:"tmdbId"`
	TVDbID      int        `json:"tvdbId"`
	PublishDate *time.Time `json:"publishDate"`
	InfoURL     string     `json:"infoUrl"`
	CommentURL  string     `json:"commentUrl"`
	DownloadURL string     `json:"downloadUrl"`
	MagnetURL   string     `json:"magnetUrl"`
	Categories  []Category `json:"categories"`
	Seeders     *int       `json:"seeders"`
	Leechers    *int       `json:"leechers"`
	Protocol    string     `json:"protocol"`
}

// Indexers lists every configured indexer.
func (c *Client) Indexers(ctx context.Context) ([]Indexer, error) {
	var out []Indexer
	return out, c.api.Get(ctx, "/indexer", nil, &out)
}

// Indexer reads one indexer by id.
func (c *Client) Indexer(ctx context.Context, id int) (Indexer, error) {
	var out Indexer
	p, err := upstream.Path("indexer", strconv.Itoa(id))
	if err != nil {
		return out, err
	}
	err = c.api.Get(ctx, p, nil, &out)
	if toolerr.CodeOf(err) == toolerr.NotFound {
		return out, upstream.Explain(toolerr.Wrap(toolerr.NotFound, err, "Prowlarr has no indexer %d; list them with prowlarr_indexer_list", id))
	}
	return out, err
}

// IndexerStatuses lists the failure records of failing indexers.
func (c *Client) IndexerStatuses(ctx context.Context) ([]IndexerStatus, error) {
	var out []IndexerStatus
	return out, c.api.Get(ctx, "/indexerstatus", nil, &out)
}

// StatsQuery narrows IndexerStats; zero fields are not sent.
type StatsQuery struct {
	Start, End time.Time
	IndexerIDs []int
}

// IndexerStats reads query, grab and failure counters.
func (c *Client) IndexerStats(ctx context.Context, q StatsQuery) (IndexerStats, error) {
	v := url.Values{}
	if !q.Start.IsZero() {
		v.Set("startDate", q.Start.UTC().Format(time.RFC3339))
	}
	if !q.End.IsZero() {
		v.Set("endDate", q.End.UTC().Format(time.RFC3339))
	}
	if len(q.IndexerIDs) > 0 {
		v.Set("indexers", joinInts(q.IndexerIDs))
	}
	var out IndexerStats
	return out, c.api.Get(ctx, "/indexerstats", v, &out)
}

// Health lists Prowlarr's current health warnings.
func (c *Client) Health(ctx context.Context) ([]arrapi.Health, error) {
	return c.api.Health(ctx)
}

// SearchQuery is one search across Prowlarr's indexers.
type SearchQuery struct {
	Query      string
	Type       string // search, tvsearch, movie, music, book
	Categories []int
	IndexerIDs []int
	Limit      int
	Offset     int
}

// Search runs a search on the indexers under the search deadline.
func (c *Client) Search(ctx context.Context, q SearchQuery) ([]Release, error) {
	v := url.Values{}
	v.Set("query", q.Query)
	if q.Type != "" {
		v.Set("type", q.Type)
	}
	for _, id := range q.IndexerIDs {
		v.Add("indexerIds", strconv.Itoa(id))
	}
	for _, cat := range q.Categories {
		v.Add("categories", strconv.Itoa(cat))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	var out []Release
	return out, c.api.GetSlow(ctx, "/search", v, &out)
}

func joinInts(ids []int) string {
	b := make([]byte, 0, len(ids)*4)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(id), 10)
	}
	return string(b)
}
