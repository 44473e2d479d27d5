package radarr

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// Tools returns the radarr_ tools, none for a nil Client (Radarr not
// configured). The write tools are only served when ARR_ALLOW_WRITES=true
// (the toolkit drops them otherwise).
func Tools(c *Client) []toolkit.Tool {
	return NewTools(c, time.Now)
}

// NewTools is Tools with the clock the calendar's default window uses.
func NewTools(c *Client, now func() time.Time) []toolkit.Tool {
	if c == nil {
		return nil
	}
	t := &tools{c: c, now: now}
	slow := c.api.SearchTimeout() + arrapi.SearchSlack
	return []toolkit.Tool{
		arrapi.Read("radarr_movie_list", "Radarr movies",
			"List the movies in Radarr's library (id, title, year, monitored, has_file, quality), optionally only those whose title contains search. Use the ids with the other radarr_ tools. Cheap.",
			t.movieList),
		arrapi.Read("radarr_movie_lookup", "Look up a movie",
			"Look a movie up by title on TMDb through Radarr, e.g. to check whether it exists or is already in the library (in_library, library_id). Adds nothing. Needs Radarr's metadata service; a few seconds.",
			t.movieLookup),
		arrapi.Read("radarr_movie_get", "One Radarr movie",
			"Show one library movie: status, release dates, monitored, availability and the existing movie file (quality, size, languages). Cheap.",
			t.movieGet),
		arrapi.Read("radarr_wanted_missing", "Missing movies",
			"List movies Radarr wants but has no file for, paged, with total_records. Cheap.",
			t.missing),
		arrapi.Read("radarr_calendar", "Radarr calendar",
			"List movies with a cinema, digital or physical release between start and end (default: today and the next 30 days). Cheap.",
			t.calendar),
		arrapi.Read("radarr_queue", "Radarr download queue",
			"Show Radarr's download queue, paged: movie, release, progress, status and the status messages that explain stuck or failed imports. Cheap.",
			t.queue),
		arrapi.Read("radarr_history", "Radarr history",
			"Show Radarr's history newest first, paged: grabs, imports, failures, deletions, renames; optionally for one movie. Cheap.",
			t.history),
		arrapi.Read("radarr_health", "Radarr health",
			"List Radarr's current health warnings and errors (indexers, download clients, root folders, updates). Cheap.",
			arrapi.HealthTool(c.api)),
		arrapi.Read("radarr_disk_space", "Radarr disk space",
			"Show free and total space of the disks Radarr uses. Cheap.",
			arrapi.DiskSpaceTool(c.api)),
		arrapi.Read("radarr_command_status", "Radarr command status",
			"Show the state of a Radarr command, e.g. the MoviesSearch radarr_movie_search started (queued, started, completed, failed). Cheap.",
			arrapi.CommandStatus(c.api)),
		{
			Name:  "radarr_release_search",
			Title: "Search releases for a movie",
			Description: fmt.Sprintf("Interactive search: Radarr asks all its indexers now for releases of one movie and returns each with guid, indexer_id, title, size, quality, approved, rejections and download_allowed, Radarr's preferred first. "+
				"Slow and loads the indexers: it has its own deadline of %s; do not repeat it needlessly. Nothing is downloaded; pass guid and indexer_id to radarr_release_grab.", slow),
			Annotations: toolkit.Annotations{ReadOnly: true, OpenWorld: true},
			Timeout:     slow,
			Handler:     toolkit.ReadFor(t.releaseSearch),
		},
		t.movieSearchTool(),
		t.releaseGrabTool(slow),
	}
}

type tools struct {
	c   *Client
	now func() time.Time
}

// movieOut is a movie in lists.
type movieOut struct {
	ID          int    `json:"id,omitempty"`
	Title       string `json:"title"`
	Year        int    `json:"year,omitempty"`
	Status      string `json:"status,omitempty"`
	Monitored   bool   `json:"monitored"`
	HasFile     bool   `json:"has_file"`
	IsAvailable bool   `json:"is_available"`
	Quality     string `json:"quality,omitempty"`
	SizeOnDisk  int64  `json:"size_on_disk,omitempty"`
	TMDbID      int    `json:"tmdb_id,omitempty"`
	IMDbID      string `json:"imdb_id,omitempty"`
}

func compact(m Movie) movieOut {
	o := movieOut{
		ID: m.ID, Title: m.Title, Year: m.Year, Status: m.Status, Monitored: m.Monitored, HasFile: m.Downloaded(),
		IsAvailable: m.IsAvailable, TMDbID: m.TMDbID, IMDbID: m.IMDbID,
	}
	if m.MovieFile != nil {
		o.Quality = m.MovieFile.Quality.Name()
	}
	if m.SizeOnDisk != nil {
		o.SizeOnDisk = *m.SizeOnDisk
	}
	return o
}

func matches(m Movie, term string) bool {
	if strings.Contains(strings.ToLower(m.Title), term) || strings.Contains(strings.ToLower(m.OriginalTitle), term) {
		return true
	}
	for _, a := range m.AlternateTitles {
		if strings.Contains(strings.ToLower(a.Title), term) {
			return true
		}
	}
	return false
}

func (t *tools) movieList(ctx context.Context, in movieListArgs) (any, error) {
	if in.Limit == 0 {
		in.Limit = 50
	}
	all, err := t.c.Movies(ctx)
	if err != nil {
		return nil, err
	}
	term := strings.ToLower(strings.TrimSpace(in.Search))
	var hit []Movie
	for _, m := range all {
		if term == "" || matches(m, term) {
			hit = append(hit, m)
		}
	}
	sort.SliceStable(hit, func(i, j int) bool { return strings.ToLower(hit[i].Title) < strings.ToLower(hit[j].Title) })
	out := []movieOut{}
	for i := in.Offset; i < len(hit) && len(out) < in.Limit; i++ {
		out = append(out, compact(hit[i]))
	}
	return map[string]any{"library_size": len(all), "matched": len(hit), "offset": in.Offset, "returned": len(out), "movies": out}, nil
}

func (t *tools) movieLookup(ctx context.Context, in lookupArgs) (any, error) {
	ms, err := t.c.Lookup(ctx, in.Term)
	if err != nil {
		return nil, err
	}
	type hit struct {
		Title     string `json:"title"`
		Year      int    `json:"year,omitempty"`
		TMDbID    int    `json:"tmdb_id,omitempty"`
		IMDbID    string `json:"imdb_id,omitempty"`
		Status    string `json:"status,omitempty"`
		InLibrary bool   `json:"in_library"`
		LibraryID int    `json:"library_id,omitempty"`
		Overview  string `json:"overview,omitempty"`
	}
	out := []hit{}
	for i, m := range ms {
		if i == 20 {
			break
		}
		out = append(out, hit{Title: m.Title, Year: m.Year, TMDbID: m.TMDbID, IMDbID: m.IMDbID, Status: m.Status,
			InLibrary: m.ID > 0, LibraryID: m.ID, Overview: arrapi.Clip(m.Overview, 300)})
	}
	return map[string]any{"term": in.Term, "returned": len(out), "total": len(ms), "movies": out}, nil
}

type fileOut struct {
	ID           int        `json:"id"`
	RelativePath string     `json:"relative_path"`
	Quality      string     `json:"quality"`
	SizeBytes    int64      `json:"size_bytes"`
	Size         string     `json:"size"`
	Languages    []string   `json:"languages,omitempty"`
	ReleaseGroup string     `json:"release_group,omitempty"`
	Edition      string     `json:"edition,omitempty"`
	DateAdded    *time.Time `json:"date_added,omitempty"`
	CutoffNotMet bool       `json:"quality_cutoff_not_met"`
}

func fileOf(f *MovieFile) *fileOut {
	if f == nil {
		return nil
	}
	return &fileOut{ID: f.ID, RelativePath: f.RelativePath, Quality: f.Quality.Name(), SizeBytes: f.Size, Size: arrapi.HumanSize(f.Size),
		Languages: arrapi.LanguageNames(f.Languages), ReleaseGroup: f.ReleaseGroup, Edition: f.Edition, DateAdded: f.DateAdded, CutoffNotMet: f.CutoffNotMet}
}

func (t *tools) movieGet(ctx context.Context, in movieArgs) (any, error) {
	m, err := t.c.Movie(ctx, in.MovieID)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"movie": compact(m), "original_title": m.OriginalTitle, "overview": arrapi.Clip(m.Overview, 600), "studio": m.Studio,
		"runtime_min": m.Runtime, "genres": m.Genres, "certification": m.Certification,
		"in_cinemas": m.InCinemas, "digital_release": m.DigitalRelease, "physical_release": m.PhysicalRelease,
		"minimum_availability": m.MinimumAvailability, "quality_profile_id": m.QualityProfileID, "path": m.Path,
		"added": m.Added, "last_search": m.LastSearchTime, "movie_file": fileOf(m.MovieFile),
	}, nil
}

func (t *tools) missing(ctx context.Context, in missingArgs) (any, error) {
	page, size := in.Defaults()
	monitored := in.Monitored == nil || *in.Monitored
	p, err := t.c.Missing(ctx, page, size, monitored)
	if err != nil {
		return nil, err
	}
	out := make([]movieOut, 0, len(p.Records))
	for _, m := range p.Records {
		out = append(out, compact(m))
	}
	return map[string]any{"page": p.Page, "page_size": p.PageSize, "total_records": p.TotalRecords, "movies": out}, nil
}

func (t *tools) calendar(ctx context.Context, in calendarArgs) (any, error) {
	now := t.now().UTC()
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	if in.Start != "" {
		d, err := time.Parse(time.DateOnly, in.Start)
		if err != nil {
			return nil, toolerr.New(toolerr.InvalidArgument, "start must be a date YYYY-MM-DD")
		}
		start = d
	}
	end := start.AddDate(0, 0, 30)
	if in.End != "" {
		d, err := time.Parse(time.DateOnly, in.End)
		if err != nil {
			return nil, toolerr.New(toolerr.InvalidArgument, "end must be a date YYYY-MM-DD")
		}
		end = d
	}
	if end.Before(start) {
		return nil, toolerr.New(toolerr.InvalidArgument, "end must not be before start")
	}
	if end.Sub(start) > 366*24*time.Hour {
		return nil, toolerr.New(toolerr.InvalidArgument, "the window may span at most one year")
	}
	// end is a whole day: include it.
	ms, err := t.c.Calendar(ctx, start, end.Add(24*time.Hour-time.Second), in.Unmonitored)
	if err != nil {
		return nil, err
	}
	type entry struct {
		movieOut
		InCinemas       *time.Time `json:"in_cinemas,omitempty"`
		DigitalRelease  *time.Time `json:"digital_release,omitempty"`
		PhysicalRelease *time.Time `json:"physical_release,omitempty"`
	}
	out := make([]entry, 0, len(ms))
	for _, m := range ms {
		out = append(out, entry{movieOut: compact(m), InCinemas: m.InCinemas, DigitalRelease: m.DigitalRelease, PhysicalRelease: m.PhysicalRelease})
	}
	return map[string]any{"start": start.Format(time.DateOnly), "end": end.Format(time.DateOnly), "count": len(out), "movies": out}, nil
}

func (t *tools) queue(ctx context.Context, in arrapi.Paging) (any, error) {
	page, size := in.Defaults()
	p, err := t.c.Queue(ctx, page, size)
	if err != nil {
		return nil, err
	}
	type item struct {
		arrapi.QueueView
		MovieID int    `json:"movie_id,omitempty"`
		Movie   string `json:"movie,omitempty"`
	}
	out := make([]item, 0, len(p.Records))
	for _, q := range p.Records {
		it := item{QueueView: q.View()}
		if q.MovieID != nil {
			it.MovieID = *q.MovieID
		}
		if q.Movie != nil {
			it.Movie = q.Movie.Title
		}
		out = append(out, it)
	}
	return arrapi.PageResult(page, p, "items", out), nil
}

func (t *tools) history(ctx context.Context, in historyArgs) (any, error) {
	page, size := in.Defaults()
	p, err := t.c.History(ctx, page, size, in.MovieID)
	if err != nil {
		return nil, err
	}
	type item struct {
		arrapi.HistoryView
		MovieID int    `json:"movie_id"`
		Movie   string `json:"movie,omitempty"`
	}
	out := make([]item, 0, len(p.Records))
	for _, h := range p.Records {
		it := item{HistoryView: arrapi.NewHistoryView(h.ID, h.Date, h.EventType, h.SourceTitle, h.Quality, h.Data), MovieID: h.MovieID}
		if h.Movie != nil {
			it.Movie = h.Movie.Title
		}
		out = append(out, it)
	}
	return arrapi.PageResult(page, p, "records", out), nil
}

// releaseOut is a release as radarr_release_search shows it.
type releaseOut struct {
	GUID              string     `json:"guid"`
	IndexerID         int        `json:"indexer_id"`
	Indexer           string     `json:"indexer"`
	Title             string     `json:"title"`
	SizeBytes         int64      `json:"size_bytes"`
	Size              string     `json:"size"`
	Quality           string     `json:"quality"`
	CustomFormatScore int        `json:"custom_format_score"`
	Languages         []string   `json:"languages,omitempty"`
	Protocol          string     `json:"protocol"`
	AgeDays           int        `json:"age_days"`
	PublishDate       *time.Time `json:"publish_date,omitempty"`
	Seeders           *int       `json:"seeders,omitempty"`
	Leechers          *int       `json:"leechers,omitempty"`
	Approved          bool       `json:"approved"`
	Rejected          bool       `json:"rejected"`
	TemporarilyRej    bool       `json:"temporarily_rejected,omitempty"`
	Rejections        []string   `json:"rejections"`
	DownloadAllowed   bool       `json:"download_allowed"`
}

func releaseOf(r Release) releaseOut {
	rej := r.Rejections
	if rej == nil {
		rej = []string{}
	}
	return releaseOut{
		GUID: arrapi.PublicGUID(r.GUID), IndexerID: r.IndexerID, Indexer: r.Indexer, Title: r.Title,
		SizeBytes: r.Size, Size: arrapi.HumanSize(r.Size), Quality: r.Quality.Name(), CustomFormatScore: r.CustomFormatScore,
		Languages: arrapi.LanguageNames(r.Languages), Protocol: r.Protocol, AgeDays: r.Age, PublishDate: r.PublishDate,
		Seeders: r.Seeders, Leechers: r.Leechers, Approved: r.Approved, Rejected: r.Rejected,
		TemporarilyRej: r.TemporarilyRejected, Rejections: rej, DownloadAllowed: r.DownloadAllowed,
	}
}

func (t *tools) releaseSearch(ctx context.Context, in releaseSearchArgs) (any, error) {
	if in.Limit == 0 {
		in.Limit = 25
	}
	m, err := t.c.Movie(ctx, in.MovieID)
	if err != nil {
		return nil, err
	}
	rels, err := t.c.Releases(ctx, in.MovieID)
	if err != nil {
		return nil, err
	}
	out := []releaseOut{}
	for i, r := range rels {
		if i == in.Limit {
			break
		}
		out = append(out, releaseOf(r))
	}
	return map[string]any{
		"movie": compact(m), "existing_file": fileOf(m.MovieFile), "total": len(rels), "returned": len(out), "releases": out,
		"next": "nothing was downloaded; to grab one, call radarr_release_grab with movie_id, guid and indexer_id",
	}, nil
}
