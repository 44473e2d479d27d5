// Package radarr is a small typed client for Radarr's v3 API, built on the
// shared *arr base client, and the radarr_ tools: reads of the library,
// wanted list, calendar, queue, history and health, an interactive release
// search with its own deadline, and two previewed writes (a MoviesSearch
// for exact movies, the grab of one exact release).
package radarr

import (
	"context"
	"net/url"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// APIRoot is Radarr's versioned API path.
const APIRoot = "/api/v3"

// Client is the typed Radarr API. It is safe for concurrent use.
type Client struct {
	api *arrapi.Client
}

// New wraps a base client configured for Radarr; nil gives nil (Radarr
// not configured).
func New(api *arrapi.Client) *Client {
	if api == nil {
		return nil
	}
	return &Client{api: api}
}

// MovieFile is the part of MovieFileResource the tools show.
type MovieFile struct {
	arrapi.FileRecord
	MovieID int    `json:"movieId"`
	Edition string `json:"edition"`
}

// Movie is the part of MovieResource the tools use.
type Movie struct {
	ID              int    `json:"id"`
	Title           string `json:"title"`
	OriginalTitle   string `json:"originalTitle"`
	AlternateTitles []struct {
		Title string `json:"title"`
	} `json:"alternateTitles"`
	Year                int        `json:"year"`
	Status              string     `json:"status"`
	Overview            string     `json:"overview"`
	InCinemas           *time.Time `json:"inCinemas"`
	PhysicalRelease     *time.Time `json:"physicalRelease"`
	DigitalRelease      *time.Time `json:"digitalRelease"`
	Studio              string     `json:"studio"`
	Path                string     `json:"path"`
	QualityProfileID    int        `json:"qualityProfileId"`
	HasFile             *bool      `json:"hasFile"`
	MovieFileID         int        `json:"movieFileId"`
	Monitored           bool       `json:"monitored"`
	MinimumAvailability string     `json:"minimumAvailability"`
	IsAvailable         bool       `json:"isAvailable"`
	Runtime             int        `json:"runtime"`
	IMDbID              string     `json:"imdbId"`
	TMDbID              int        `json:"tmdbId"`
	Certification       string     `json:"certification"`
	Genres              []string   `json:"genres"`
	Tags                []int      `json:"tags"`
	Added               *time.Time `json:"added"`
	SizeOnDisk          *int64     `json:"sizeOnDisk"`
	MovieFile           *MovieFile `json:"movieFile"`
	LastSearchTime      *time.Time `json:"lastSearchTime"`
}

// Downloaded reports whether Radarr has a file for the movie.
func (m Movie) Downloaded() bool {
	if m.HasFile != nil {
		return *m.HasFile
	}
	return m.MovieFile != nil || m.MovieFileID > 0
}

// Release is the part of ReleaseResource the tools use: what every app's
// has, and the movie Radarr matched it to.
type Release struct {
	arrapi.ReleaseRecord
	Edition string `json:"edition"`
	// MappedMovieID is the movie Radarr matched the release to; absent
	// when it could not tell (ReleaseResource: remoteMovie.Movie?.Id).
	MappedMovieID *int `json:"mappedMovieId"`
}

// QueueItem is the part of QueueResource the tools show.
type QueueItem struct {
	arrapi.QueueRecord
	MovieID *int   `json:"movieId"`
	Movie   *Movie `json:"movie"`
}

// HistoryItem is the part of HistoryResource the tools show.
type HistoryItem struct {
	arrapi.HistoryRecord
	MovieID int    `json:"movieId"`
	Movie   *Movie `json:"movie"`
}

// Movies lists the library (GET /movie).
func (c *Client) Movies(ctx context.Context) ([]Movie, error) {
	var out []Movie
	return out, c.api.Get(ctx, "/movie", nil, &out)
}

// Lookup searches TMDb through Radarr (GET /movie/lookup?term=).
func (c *Client) Lookup(ctx context.Context, term string) ([]Movie, error) {
	var out []Movie
	return out, c.api.Get(ctx, "/movie/lookup", url.Values{"term": {term}}, &out)
}

// Movie reads one library movie; an unknown id is toolerr.NotFound.
func (c *Client) Movie(ctx context.Context, id int) (Movie, error) {
	var m Movie
	err := c.api.GetByID(ctx, "movie", id, &m, "find ids with radarr_movie_list")
	return m, err
}

// Missing reads wanted/missing, one page, by title A to Z. Without a sort
// direction Radarr sorts descending (Z to A); its sort key for the title
// is movieMetadata.sortTitle.
func (c *Client) Missing(ctx context.Context, page, pageSize int, monitored bool) (arrapi.Page[Movie], error) {
	q := arrapi.PageQuery(page, pageSize, "movieMetadata.sortTitle", "ascending")
	q.Set("monitored", strconv.FormatBool(monitored))
	var out arrapi.Page[Movie]
	return out, c.api.Get(ctx, "/wanted/missing", q, &out)
}

// Calendar lists movies with a cinema, digital or physical release in
// [start, end].
func (c *Client) Calendar(ctx context.Context, start, end time.Time, unmonitored bool) ([]Movie, error) {
	q := url.Values{}
	q.Set("start", start.UTC().Format(time.RFC3339))
	q.Set("end", end.UTC().Format(time.RFC3339))
	q.Set("unmonitored", strconv.FormatBool(unmonitored))
	var out []Movie
	return out, c.api.Get(ctx, "/calendar", q, &out)
}

// Queue reads one page of the download queue, movies included, and the
// downloads Radarr could not match to a movie too (arrapi.QueueQuery).
func (c *Client) Queue(ctx context.Context, page, pageSize int) (arrapi.Page[QueueItem], error) {
	q := arrapi.QueueQuery(page, pageSize, "includeUnknownMovieItems")
	q.Set("includeMovie", "true")
	var out arrapi.Page[QueueItem]
	return out, c.api.Get(ctx, "/queue", q, &out)
}

// History reads one page of history, newest first, optionally for one
// movie.
func (c *Client) History(ctx context.Context, page, pageSize, movieID int) (arrapi.Page[HistoryItem], error) {
	q := arrapi.PageQuery(page, pageSize, "date", "descending")
	q.Set("includeMovie", "true")
	if movieID > 0 {
		q.Set("movieIds", strconv.Itoa(movieID))
	}
	var out arrapi.Page[HistoryItem]
	return out, c.api.Get(ctx, "/history", q, &out)
}

// Releases runs an interactive search for one movie on every indexer
// (GET /release?movieId=) under the search deadline, never retried.
func (c *Client) Releases(ctx context.Context, movieID int) ([]Release, error) {
	var out []Release
	err := c.api.GetSlow(ctx, "/release", url.Values{"movieId": {strconv.Itoa(movieID)}}, &out)
	return out, err
}

// MoviesSearch starts one MoviesSearch command for exactly ids.
func (c *Client) MoviesSearch(ctx context.Context, ids []int) (arrapi.Command, error) {
	body := struct {
		Name     string `json:"name"`
		MovieIDs []int  `json:"movieIds"`
	}{"MoviesSearch", ids}
	return c.api.StartCommand(ctx, body)
}
