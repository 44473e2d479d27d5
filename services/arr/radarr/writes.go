package radarr

import (
	"context"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// NoReplacePromise is said with every grab: the service deletes nothing.
const NoReplacePromise = "toolgate deletes no files and promises no replacement: whether an existing movie file is upgraded or replaced after the download is decided by Radarr's quality profile, upgrade and import rules."

// writeAnnotations: the writes make Radarr query indexers (open world),
// delete nothing and are not idempotent (a second search or grab runs
// again).
var writeAnnotations = toolkit.Annotations{OpenWorld: true}

func (t *tools) movieSearchTool() toolkit.Tool {
	return toolkit.Tool{
		Name:  "radarr_movie_search",
		Title: "Search exact movies",
		Description: "Write: make Radarr search its indexers for exact library movies (movie_ids) and grab what its quality rules accept. " +
			"The preview drops movies that already have a file (and says so) and lists the movies that would be searched; after the user agrees, confirm starts exactly one MoviesSearch command for exactly those ids and returns its command id (follow it with radarr_command_status). " +
			"Changes no monitoring, runs no other command, deletes nothing. To pick one specific release use radarr_release_search and radarr_release_grab instead.",
		Annotations: writeAnnotations,
		Handler:     toolkit.WriteFor(t.previewMovieSearch, t.applyMovieSearch),
	}
}

// MovieSearchPreview is what radarr_movie_search would do.
type MovieSearchPreview struct {
	Action  string        `json:"action"`
	Search  []searchMovie `json:"search"`
	Skipped []searchMovie `json:"skipped_have_file"`
	Note    string        `json:"note"`
}

type searchMovie struct {
	ID        int    `json:"id"`
	Title     string `json:"title"`
	Year      int    `json:"year,omitempty"`
	Monitored bool   `json:"monitored"`
	Quality   string `json:"existing_quality,omitempty"`
}

func (t *tools) previewMovieSearch(ctx context.Context, in movieSearchArgs) (MovieSearchPreview, error) {
	ids, unique := arrapi.SortedUnique(in.MovieIDs)
	if !unique {
		return MovieSearchPreview{}, toolerr.New(toolerr.InvalidArgument, "movie_ids lists an id twice")
	}
	p := MovieSearchPreview{Action: "start one Radarr MoviesSearch command", Search: []searchMovie{}, Skipped: []searchMovie{}}
	for _, id := range ids {
		m, err := t.c.Movie(ctx, id)
		if err != nil {
			return MovieSearchPreview{}, err
		}
		sm := searchMovie{ID: m.ID, Title: m.Title, Year: m.Year, Monitored: m.Monitored}
		if m.Downloaded() {
			if m.MovieFile != nil {
				sm.Quality = m.MovieFile.Quality.Name()
			}
			p.Skipped = append(p.Skipped, sm)
			continue
		}
		p.Search = append(p.Search, sm)
	}
	if len(p.Search) == 0 {
		return MovieSearchPreview{}, toolerr.New(toolerr.InvalidArgument,
			"every requested movie already has a file, so there is nothing to search; to replace a file pick a release with radarr_release_search and radarr_release_grab")
	}
	p.Note = arrapi.SearchNote("Radarr", "movie", len(p.Search), len(p.Skipped))
	return p, nil
}

func (t *tools) applyMovieSearch(ctx context.Context, _ movieSearchArgs, p MovieSearchPreview) (any, error) {
	ids := make([]int, 0, len(p.Search))
	for _, m := range p.Search {
		ids = append(ids, m.ID)
	}
	cmd, err := t.c.MoviesSearch(ctx, ids)
	if err != nil {
		return nil, err
	}
	return struct {
		arrapi.CommandStarted
		MovieIDs []int `json:"movie_ids"`
	}{t.c.api.Started(cmd, "MoviesSearch"), ids}, nil
}

func (t *tools) releaseGrabTool(timeout time.Duration) toolkit.Tool {
	return toolkit.Tool{
		Name:  "radarr_release_grab",
		Title: "Grab one exact release",
		Description: "Write: send one exact release from radarr_release_search (movie_id + guid + indexer_id) to Radarr's download client. " +
			"The preview asks Radarr's indexers again (slow: deadline " + timeout.String() + ") and shows title, size, indexer, quality, rejections, download_allowed and the movie file that already exists. " +
			"A release Radarr did not approve (rejected, or held back for now) or marked download_allowed=false is only grabbed when the preview was requested with force: true (a person must then approve). " +
			"Deletes nothing: " + NoReplacePromise,
		Annotations: writeAnnotations,
		Timeout:     timeout,
		Handler:     toolkit.WriteFor(t.previewGrab, t.applyGrab),
	}
}

// GrabPreview is what radarr_release_grab would do. It holds only fields
// that stay put between preview and confirm (no seeders, no age), since
// the confirm recomputes it and refuses any difference.
type GrabPreview struct {
	Action       string             `json:"action"`
	Movie        searchMovie        `json:"movie"`
	Release      arrapi.ReleaseView `json:"release"`
	ExistingFile *fileOut           `json:"existing_file"`
	Force        bool               `json:"force"`
	NeedsForce   bool               `json:"needs_force"`
	Warning      string             `json:"warning,omitempty"`
	Note         string             `json:"note"`

	// guid is the exact GUID Radarr knows (the argument may be its
	// sha256: form); it is not shown and not part of the digest.
	guid string
}

func (t *tools) previewGrab(ctx context.Context, in grabArgs) (GrabPreview, error) {
	if err := arrapi.CheckGUID(in.GUID, "radarr_release_search"); err != nil {
		return GrabPreview{}, err
	}
	m, err := t.c.Movie(ctx, in.MovieID)
	if err != nil {
		return GrabPreview{}, err
	}
	rels, err := t.c.Releases(ctx, in.MovieID)
	if err != nil {
		return GrabPreview{}, err
	}
	r, ok := arrapi.FindRelease(rels, in.GUID, in.IndexerID)
	if !ok {
		return GrabPreview{}, t.c.api.NotOffered(m.Title, "radarr_release_search")
	}
	p := GrabPreview{
		Action:       "send this release to Radarr's download client",
		Movie:        searchMovie{ID: m.ID, Title: m.Title, Year: m.Year, Monitored: m.Monitored},
		Release:      r.View(false),
		ExistingFile: fileOf(m.MovieFile),
		Force:        in.Force,
		NeedsForce:   r.NeedsForce(),
		Note:         NoReplacePromise,
		guid:         r.GUID,
	}
	switch {
	case r.MappedMovieID == nil:
		// DownloadRelease then files it under the movieId the grab sends.
		p.Note = "Radarr could not tell which movie this release is; the grab files it under " + m.Title + " (movie " + strconv.Itoa(m.ID) + "). " + p.Note
	case *r.MappedMovieID != m.ID:
		// DownloadRelease keeps Radarr's own match: the download would
		// belong to another movie.
		return GrabPreview{}, toolerr.New(toolerr.InvalidArgument,
			"Radarr matched this release to another movie (id %d), not %s; a grab would be filed under that one. Nothing was changed: pick a release of this movie", *r.MappedMovieID, m.Title)
	}
	if p.Warning, err = r.Override("Radarr", p.NeedsForce, in.Force); err != nil {
		return GrabPreview{}, err
	}
	return p, nil
}

func (t *tools) applyGrab(ctx context.Context, _ grabArgs, p GrabPreview) (any, error) {
	// movieId: a release Radarr could not match to a movie is grabbed for
	// the movie the preview showed, as DownloadRelease asks.
	req := arrapi.GrabRequest{GUID: p.guid, IndexerID: p.Release.IndexerID, MovieID: p.Movie.ID}
	if err := t.c.api.Grab(ctx, req, "radarr_release_search"); err != nil {
		return nil, err
	}
	return struct {
		arrapi.Grabbed
		MovieID int `json:"movie_id"`
	}{t.c.api.GrabbedBy(p.Release, NoReplacePromise), p.Movie.ID}, nil
}
