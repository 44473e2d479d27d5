package radarr

import (
	"context"
	"fmt"
	"strings"
	"time"

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
	arrapi.OnDisk
	TMDbID int    `json:"tmdb_id,omitempty"`
	IMDbID string `json:"imdb_id,omitempty"`
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
		o.OnDisk = arrapi.OnDiskOf(*m.SizeOnDisk)
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
	var match func(Movie) bool
	if term := strings.ToLower(strings.TrimSpace(in.Search)); term != "" {
		match = func(m Movie) bool { return matches(m, term) }
	}
	out := arrapi.LibraryList(all, func(m Movie) string { return m.Title }, match, in.Offset, in.Limit, "movies", compact)
	out["offset"] = in.Offset
	return out, nil
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

// fileOut is a movie file as every app shows a file, and its edition.
type fileOut struct {
	arrapi.FileView
	Edition string `json:"edition,omitempty"`
}

func fileOf(f *MovieFile) *fileOut {
	if f == nil {
		return nil
	}
	return &fileOut{FileView: f.View(), Edition: f.Edition}
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
	monitored := in.Monitored == nil || *in.Monitored
	return arrapi.Paged(in, "movies", func(page, size int) (arrapi.Page[Movie], error) { return t.c.Missing(ctx, page, size, monitored) }, compact)
}

func (t *tools) calendar(ctx context.Context, in calendarArgs) (any, error) {
	days, err := arrapi.Window(t.now(), in.Start, in.End, 30, 366)
	if err != nil {
		return nil, err
	}
	ms, err := t.c.Calendar(ctx, days.Start, days.Until(), in.Unmonitored)
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
	return arrapi.CalendarResult(days, "movies", out), nil
}

// queueItem is a queue entry as every app shows it, and the movie it is
// for; downloads Radarr could not match have none.
type queueItem struct {
	arrapi.QueueView
	MovieID int    `json:"movie_id,omitempty"`
	Movie   string `json:"movie,omitempty"`
}

func (t *tools) queue(ctx context.Context, in arrapi.Paging) (any, error) {
	return arrapi.Paged(in, "items", func(page, size int) (arrapi.Page[QueueItem], error) { return t.c.Queue(ctx, page, size) },
		func(q QueueItem) queueItem {
			it := queueItem{QueueView: q.View()}
			if q.MovieID != nil {
				it.MovieID = *q.MovieID
			}
			it.Movie = title(q.Movie)
			return it
		})
}

// historyItem is a history record as every app shows it, and the movie it
// is about.
type historyItem struct {
	arrapi.HistoryView
	MovieID int    `json:"movie_id"`
	Movie   string `json:"movie,omitempty"`
}

func (t *tools) history(ctx context.Context, in historyArgs) (any, error) {
	return arrapi.Paged(in, "records", func(page, size int) (arrapi.Page[HistoryItem], error) {
		return t.c.History(ctx, page, size, in.MovieID)
	},
		func(h HistoryItem) historyItem {
			return historyItem{HistoryView: h.View(), MovieID: h.MovieID, Movie: title(h.Movie)}
		})
}

// title is m's title, "" for a movie Radarr did not include.
func title(m *Movie) string {
	if m == nil {
		return ""
	}
	return m.Title
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
	out := arrapi.ReleaseResult(rels, in.Limit, func(r Release) arrapi.ReleaseView { return r.View(true) },
		"nothing was downloaded; to grab one, call radarr_release_grab with movie_id, guid and indexer_id")
	out["movie"], out["existing_file"] = compact(m), fileOf(m.MovieFile)
	return out, nil
}
