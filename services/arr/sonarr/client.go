// Package sonarr is the arr service's Sonarr module: a typed client for the
// Sonarr v3 API (Sonarr v4 serves it), read tools, an interactive release
// search, and the two writes the service allows: an episode search for
// exact episodes and the grab of one exact release.
package sonarr

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// Series is the part of a SeriesResource the tools use.
type Series struct {
	ID          int              `json:"id"`
	Title       string           `json:"title"`
	Year        int              `json:"year"`
	Status      string           `json:"status"`
	Ended       bool             `json:"ended"`
	Network     string           `json:"network,omitempty"`
	Monitored   bool             `json:"monitored"`
	ProfileName string           `json:"profileName,omitempty"`
	NextAiring  string           `json:"nextAiring,omitempty"`
	TvdbID      int              `json:"tvdbId"`
	ImdbID      string           `json:"imdbId,omitempty"`
	Seasons     []Season         `json:"seasons"`
	Statistics  SeriesStatistics `json:"statistics"`
}

// Season is a SeasonResource.
type Season struct {
	SeasonNumber int              `json:"seasonNumber"`
	Monitored    bool             `json:"monitored"`
	Statistics   SeasonStatistics `json:"statistics"`
}

// SeasonStatistics is a SeasonStatisticsResource.
type SeasonStatistics struct {
	EpisodeFileCount  int     `json:"episodeFileCount"`
	EpisodeCount      int     `json:"episodeCount"`
	TotalEpisodeCount int     `json:"totalEpisodeCount"`
	SizeOnDisk        int64   `json:"sizeOnDisk"`
	PercentOfEpisodes float64 `json:"percentOfEpisodes"`
	NextAiring        string  `json:"nextAiring,omitempty"`
	PreviousAiring    string  `json:"previousAiring,omitempty"`
}

// SeriesStatistics is a SeriesStatisticsResource.
type SeriesStatistics struct {
	SeasonCount       int     `json:"seasonCount"`
	EpisodeFileCount  int     `json:"episodeFileCount"`
	EpisodeCount      int     `json:"episodeCount"`
	TotalEpisodeCount int     `json:"totalEpisodeCount"`
	SizeOnDisk        int64   `json:"sizeOnDisk"`
	PercentOfEpisodes float64 `json:"percentOfEpisodes"`
}

// Episode is the part of an EpisodeResource the tools use.
type Episode struct {
	ID            int     `json:"id"`
	SeriesID      int     `json:"seriesId"`
	SeasonNumber  int     `json:"seasonNumber"`
	EpisodeNumber int     `json:"episodeNumber"`
	Title         string  `json:"title"`
	AirDate       string  `json:"airDate,omitempty"`
	AirDateUtc    string  `json:"airDateUtc,omitempty"`
	HasFile       bool    `json:"hasFile"`
	Monitored     bool    `json:"monitored"`
	EpisodeFileID int     `json:"episodeFileId"`
	Series        *Series `json:"series,omitempty"`
}

// EpisodeFile is the part of an EpisodeFileResource the tools use.
type EpisodeFile struct {
	arrapi.FileRecord
	SeriesID     int `json:"seriesId"`
	SeasonNumber int `json:"seasonNumber"`
}

// QueueItem is the part of a QueueResource the tools use.
type QueueItem struct {
	arrapi.QueueRecord
	SeriesID     int      `json:"seriesId"`
	EpisodeID    int      `json:"episodeId"`
	SeasonNumber int      `json:"seasonNumber"`
	Episode      *Episode `json:"episode"`
	Series       *Series  `json:"series"`
}

// HistoryItem is the part of a HistoryResource the tools use.
type HistoryItem struct {
	arrapi.HistoryRecord
	EpisodeID int      `json:"episodeId"`
	SeriesID  int      `json:"seriesId"`
	Episode   *Episode `json:"episode"`
	Series    *Series  `json:"series"`
}

// Release is the part of a ReleaseResource the tools use: what every
// app's has, and the season and episodes it covers.
type Release struct {
	arrapi.ReleaseRecord
	SeasonNumber         int              `json:"seasonNumber"`
	FullSeason           bool             `json:"fullSeason"`
	EpisodeNumbers       []int            `json:"episodeNumbers"`
	MappedSeriesID       *int             `json:"mappedSeriesId"`
	MappedSeasonNumber   *int             `json:"mappedSeasonNumber"`
	MappedEpisodeNumbers []int            `json:"mappedEpisodeNumbers"`
	MappedEpisodeInfo    []ReleaseEpisode `json:"mappedEpisodeInfo"`
}

// ReleaseEpisode is a ReleaseEpisodeResource.
type ReleaseEpisode struct {
	ID            int `json:"id"`
	SeasonNumber  int `json:"seasonNumber"`
	EpisodeNumber int `json:"episodeNumber"`
}

// Client is a typed Sonarr v3 API client.
type Client struct {
	api *arrapi.Client
}

// NewClient wraps an arrapi client configured for Sonarr.
func NewClient(api *arrapi.Client) *Client { return &Client{api: api} }

// AllSeries calls GET /series.
func (c *Client) AllSeries(ctx context.Context) ([]Series, error) {
	var s []Series
	err := c.api.Get(ctx, "/series", nil, &s)
	return s, err
}

// Series calls GET /series/{id}; an unknown id is toolerr.NotFound.
func (c *Client) Series(ctx context.Context, id int) (Series, error) {
	var s Series
	err := c.api.GetByID(ctx, "series", id, &s, "find ids with sonarr_series_list")
	return s, err
}

// Episodes calls GET /episode?seriesId=…[&seasonNumber=…].
func (c *Client) Episodes(ctx context.Context, seriesID int, season *int) ([]Episode, error) {
	q := url.Values{"seriesId": {strconv.Itoa(seriesID)}}
	if season != nil {
		q.Set("seasonNumber", strconv.Itoa(*season))
	}
	var e []Episode
	err := c.api.Get(ctx, "/episode", q, &e)
	return e, err
}

// Episode calls GET /episode/{id}.
func (c *Client) Episode(ctx context.Context, id int) (Episode, error) {
	var e Episode
	err := c.api.GetByID(ctx, "episode", id, &e, "list ids with sonarr_episodes")
	return e, err
}

// EpisodeFiles calls GET /episodefile?seriesId=….
func (c *Client) EpisodeFiles(ctx context.Context, seriesID int) ([]EpisodeFile, error) {
	var f []EpisodeFile
	err := c.api.Get(ctx, "/episodefile", url.Values{"seriesId": {strconv.Itoa(seriesID)}}, &f)
	return f, err
}

// Missing calls GET /wanted/missing (monitored episodes of monitored
// series without a file, newest air date first), with series included.
// Sonarr's sort key is episodes.airDateUtc; it ignores any other.
func (c *Client) Missing(ctx context.Context, page, pageSize int) (arrapi.Page[Episode], error) {
	q := arrapi.PageQuery(page, pageSize, "episodes.airDateUtc", "descending")
	q.Set("includeSeries", "true")
	q.Set("monitored", "true")
	var p arrapi.Page[Episode]
	err := c.api.Get(ctx, "/wanted/missing", q, &p)
	return p, err
}

// Calendar calls GET /calendar for [start, end], with series included.
func (c *Client) Calendar(ctx context.Context, start, end time.Time, unmonitored bool) ([]Episode, error) {
	q := url.Values{
		"start":         {start.UTC().Format(time.RFC3339)},
		"end":           {end.UTC().Format(time.RFC3339)},
		"unmonitored":   {strconv.FormatBool(unmonitored)},
		"includeSeries": {"true"},
	}
	var e []Episode
	err := c.api.Get(ctx, "/calendar", q, &e)
	return e, err
}

// Queue calls GET /queue with series and episode included, and the
// downloads Sonarr could not match to a series too (arrapi.QueueQuery).
func (c *Client) Queue(ctx context.Context, page, pageSize int) (arrapi.Page[QueueItem], error) {
	q := arrapi.QueueQuery(page, pageSize, "includeUnknownSeriesItems")
	q.Set("includeSeries", "true")
	q.Set("includeEpisode", "true")
	var p arrapi.Page[QueueItem]
	err := c.api.Get(ctx, "/queue", q, &p)
	return p, err
}

// HistoryQuery narrows GET /history; zero fields are not sent.
type HistoryQuery struct {
	Page, PageSize int
	SeriesID       int
	EpisodeID      int
	// EventType is the numeric EpisodeHistoryEventType (1 grabbed …).
	EventType int
}

// History calls GET /history, newest first, with series and episode.
func (c *Client) History(ctx context.Context, hq HistoryQuery) (arrapi.Page[HistoryItem], error) {
	q := arrapi.PageQuery(hq.Page, hq.PageSize, "date", "descending")
	q.Set("includeSeries", "true")
	q.Set("includeEpisode", "true")
	if hq.SeriesID > 0 {
		q.Set("seriesIds", strconv.Itoa(hq.SeriesID))
	}
	if hq.EpisodeID > 0 {
		q.Set("episodeId", strconv.Itoa(hq.EpisodeID))
	}
	if hq.EventType > 0 {
		q.Set("eventType", strconv.Itoa(hq.EventType))
	}
	var p arrapi.Page[HistoryItem]
	err := c.api.Get(ctx, "/history", q, &p)
	return p, err
}

// ReleaseQuery is a season (SeriesID + Season) or one episode (EpisodeID).
type ReleaseQuery struct {
	SeriesID  int
	Season    *int
	EpisodeID int
}

// Releases calls GET /release: Sonarr searches every indexer now, which
// is slow (its own deadline, never retried) and refreshes Sonarr's release
// cache that a grab draws from.
func (c *Client) Releases(ctx context.Context, rq ReleaseQuery) ([]Release, error) {
	q := url.Values{}
	if rq.EpisodeID > 0 {
		q.Set("episodeId", strconv.Itoa(rq.EpisodeID))
	} else {
		q.Set("seriesId", strconv.Itoa(rq.SeriesID))
		if rq.Season != nil {
			q.Set("seasonNumber", strconv.Itoa(*rq.Season))
		}
	}
	var r []Release
	err := c.api.GetSlow(ctx, "/release", q, &r)
	return r, err
}

// EpisodeSearch starts one EpisodeSearch command for exactly ids.
func (c *Client) EpisodeSearch(ctx context.Context, ids []int) (arrapi.Command, error) {
	return c.api.StartCommand(ctx, map[string]any{"name": "EpisodeSearch", "episodeIds": ids})
}
