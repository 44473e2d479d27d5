package sonarr

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/arr/arrapi"
)

// noReplacePromise is said with every grab: the service deletes nothing.
const noReplacePromise = "toolgate deletes no files and promises no replacement: whether an existing episode file is upgraded or replaced after the download is decided by Sonarr's quality profile, upgrade and import rules."

func (t *tools) episodeSearchTool() toolkit.Tool {
	return toolkit.Tool{
		Name:  "sonarr_episode_search",
		Title: "Search exact episodes",
		Description: "Write: make Sonarr search its indexers for exact episodes of one season (series_id, season, episode numbers) and grab what its rules accept. " +
			"The preview drops episodes that already have a file and lists the episodes that would be searched; after the user agrees, confirm starts exactly one EpisodeSearch command and returns its id (follow it with sonarr_command_status). " +
			"Changes no monitoring, runs no other command. To pick one specific release use sonarr_release_search and sonarr_release_grab instead.",
		Annotations: toolkit.Annotations{OpenWorld: true},
		Handler:     toolkit.WriteFor(t.previewEpisodeSearch, t.applyEpisodeSearch),
	}
}

// EpisodeSearchPreview is what sonarr_episode_search would do.
type EpisodeSearchPreview struct {
	Action   string       `json:"action"`
	SeriesID int          `json:"series_id"`
	Series   string       `json:"series"`
	Season   int          `json:"season"`
	Search   []episodeOut `json:"search"`
	Skipped  []episodeOut `json:"skipped_have_file"`
	Note     string       `json:"note"`
}

func (t *tools) previewEpisodeSearch(ctx context.Context, in episodeSearchArgs) (EpisodeSearchPreview, error) {
	want, unique := arrapi.SortedUnique(in.Episodes)
	if !unique {
		return EpisodeSearchPreview{}, toolerr.New(toolerr.InvalidArgument, "episodes lists a number twice")
	}
	s, err := t.c.Series(ctx, in.SeriesID)
	if err != nil {
		return EpisodeSearchPreview{}, err
	}
	season := in.Season
	eps, err := t.c.Episodes(ctx, in.SeriesID, &season)
	if err != nil {
		return EpisodeSearchPreview{}, err
	}
	byNum := map[int]Episode{}
	for _, e := range eps {
		if e.SeriesID == in.SeriesID && e.SeasonNumber == in.Season {
			byNum[e.EpisodeNumber] = e
		}
	}
	p := EpisodeSearchPreview{Action: "start one Sonarr EpisodeSearch command", SeriesID: s.ID, Series: s.Title, Season: in.Season,
		Search: []episodeOut{}, Skipped: []episodeOut{}}
	var unknown []string
	for _, n := range want {
		e, ok := byNum[n]
		switch {
		case !ok:
			unknown = append(unknown, fmt.Sprint(n))
		case e.HasFile:
			p.Skipped = append(p.Skipped, episodeView(e, false))
		default:
			p.Search = append(p.Search, episodeView(e, false))
		}
	}
	if len(unknown) > 0 {
		return EpisodeSearchPreview{}, toolerr.New(toolerr.InvalidArgument, "%s season %d has no episode %s; list them with sonarr_episodes", s.Title, in.Season, strings.Join(unknown, ", "))
	}
	if len(p.Search) == 0 {
		return EpisodeSearchPreview{}, toolerr.New(toolerr.InvalidArgument, "every requested episode of %s season %d already has a file; nothing to search (to replace a file, pick a release with sonarr_release_search)", s.Title, in.Season)
	}
	p.Note = arrapi.SearchNote("Sonarr", "episode", len(p.Search), len(p.Skipped))
	return p, nil
}

func (t *tools) applyEpisodeSearch(ctx context.Context, _ episodeSearchArgs, p EpisodeSearchPreview) (any, error) {
	ids := make([]int, 0, len(p.Search))
	for _, e := range p.Search {
		ids = append(ids, e.ID)
	}
	cmd, err := t.c.EpisodeSearch(ctx, ids)
	if err != nil {
		return nil, err
	}
	return struct {
		arrapi.CommandStarted
		EpisodeIDs []int `json:"episode_ids"`
	}{t.c.api.Started(cmd, "EpisodeSearch"), ids}, nil
}

func (t *tools) grabTool(timeout time.Duration) toolkit.Tool {
	return toolkit.Tool{
		Name:  "sonarr_release_grab",
		Title: "Grab one release",
		Description: "Write: hand exactly one release from sonarr_release_search (series_id, season, guid, indexer_id) to Sonarr's download client. " +
			"The preview searches the indexers again (slow, like sonarr_release_search) and shows title, size, indexer, quality, rejections, download_allowed and the episode files that already exist; after the user agrees, confirm grabs it. " +
			"A release Sonarr did not approve (rejected, or held back for now) or marked download_allowed=false needs force: true already in the preview, and a person must approve it. Deletes nothing; replacement of existing files is up to Sonarr's quality rules.",
		Annotations: toolkit.Annotations{OpenWorld: true},
		Timeout:     timeout,
		Handler:     toolkit.WriteFor(t.previewGrab, t.applyGrab),
	}
}

// GrabPreview is what sonarr_release_grab would do.
type GrabPreview struct {
	Action        string         `json:"action"`
	SeriesID      int            `json:"series_id"`
	Series        string         `json:"series"`
	Season        int            `json:"season"`
	SearchedBy    string         `json:"searched_by"`
	Release       releaseOut     `json:"release"`
	Force         bool           `json:"force"`
	NeedsForce    bool           `json:"needs_force"`
	Warning       string         `json:"warning,omitempty"`
	ExistingFiles []existingFile `json:"existing_files"`
	Note          string         `json:"note"`

	// guid is the release's real GUID; it may carry an indexer passkey, so
	// it is never shown (Release.GUID is its public form).
	guid string
	// episodeID is the episode searched for, when the search was for one.
	episodeID int
}

// existingFile is an episode the release covers and its file, when
// Sonarr still lists it.
type existingFile struct {
	Episode string `json:"episode"`
	*arrapi.FileView
}

func (t *tools) previewGrab(ctx context.Context, in grabArgs) (GrabPreview, error) {
	if err := arrapi.CheckGUID(in.GUID, "sonarr_release_search"); err != nil {
		return GrabPreview{}, err
	}
	s, err := t.c.Series(ctx, in.SeriesID)
	if err != nil {
		return GrabPreview{}, err
	}
	season := in.Season
	eps, err := t.c.Episodes(ctx, in.SeriesID, &season)
	if err != nil {
		return GrabPreview{}, err
	}
	q := ReleaseQuery{SeriesID: in.SeriesID, Season: &season}
	by := fmt.Sprintf("season %d", in.Season)
	if in.EpisodeID > 0 {
		i := slices.IndexFunc(eps, func(e Episode) bool { return e.ID == in.EpisodeID })
		if i < 0 {
			return GrabPreview{}, toolerr.New(toolerr.InvalidArgument, "episode %d is not in %s season %d", in.EpisodeID, s.Title, in.Season)
		}
		q = ReleaseQuery{EpisodeID: in.EpisodeID}
		by = "episode " + EpisodeCode(in.Season, eps[i].EpisodeNumber)
	}
	rels, err := t.c.Releases(ctx, q)
	if err != nil {
		return GrabPreview{}, err
	}
	r, ok := arrapi.FindRelease(rels, in.GUID, in.IndexerID)
	if !ok {
		return GrabPreview{}, t.c.api.NotOffered(s.Title+" "+by, "sonarr_release_search")
	}
	if r.MappedSeriesID != nil && *r.MappedSeriesID != s.ID {
		// DownloadRelease keeps Sonarr's own match: the download would
		// belong to the other series.
		return GrabPreview{}, toolerr.New(toolerr.InvalidArgument,
			"Sonarr matched this release to another series (id %d), not %s; a grab would be filed under that one. Nothing was grabbed: pick a release of this series", *r.MappedSeriesID, s.Title)
	}
	p := GrabPreview{
		Action: "grab this release with Sonarr", SeriesID: s.ID, Series: s.Title, Season: in.Season, SearchedBy: by,
		Release: releaseView(r, false), Force: in.Force, NeedsForce: r.NeedsForce(),
		ExistingFiles: []existingFile{}, guid: r.GUID, episodeID: in.EpisodeID,
	}
	if p.Warning, err = r.Override("Sonarr", p.NeedsForce, in.Force); err != nil {
		return GrabPreview{}, err
	}
	files, err := t.c.EpisodeFiles(ctx, in.SeriesID)
	if err != nil {
		return GrabPreview{}, err
	}
	p.ExistingFiles = existing(r, in.Season, eps, files)
	p.Note = noReplacePromise
	if r.MappedSeriesID == nil {
		p.Note = "Sonarr could not tell which series this release is; the grab files it under " + s.Title + ". " + p.Note
	}
	return p, nil
}

// existing lists the files of the season's episodes the release covers.
func existing(r Release, season int, eps []Episode, files []EpisodeFile) []existingFile {
	covered := map[int]bool{} // episode id
	switch {
	case len(r.MappedEpisodeInfo) > 0:
		for _, m := range r.MappedEpisodeInfo {
			covered[m.ID] = true
		}
	case r.FullSeason:
		for _, e := range eps {
			covered[e.ID] = true
		}
	default:
		nums := r.MappedEpisodeNumbers
		if len(nums) == 0 {
			nums = r.EpisodeNumbers
		}
		for _, e := range eps {
			if slices.Contains(nums, e.EpisodeNumber) {
				covered[e.ID] = true
			}
		}
	}
	byFile := map[int]EpisodeFile{}
	for _, f := range files {
		byFile[f.ID] = f
	}
	out := []existingFile{}
	for _, e := range eps {
		if !covered[e.ID] || !e.HasFile || e.SeasonNumber != season {
			continue
		}
		ef := existingFile{Episode: EpisodeCode(e.SeasonNumber, e.EpisodeNumber)}
		if f, ok := byFile[e.EpisodeFileID]; ok {
			v := f.View()
			ef.FileView = &v
		}
		out = append(out, ef)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Episode < out[j].Episode })
	return out
}

func (t *tools) applyGrab(ctx context.Context, _ grabArgs, p GrabPreview) (any, error) {
	// seriesId and episodeId: what DownloadRelease uses for a release it
	// could not match to the series or its episodes.
	req := arrapi.GrabRequest{GUID: p.guid, IndexerID: p.Release.IndexerID, SeriesID: p.SeriesID, EpisodeID: p.episodeID}
	if err := t.c.api.Grab(ctx, req, "sonarr_release_search"); err != nil {
		return nil, err
	}
	return struct {
		arrapi.Grabbed
		SeriesID int `json:"series_id"`
	}{t.c.api.GrabbedBy(p.Release.ReleaseView, noReplacePromise), p.SeriesID}, nil
}
