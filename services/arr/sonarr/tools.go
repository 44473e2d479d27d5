package sonarr

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

// Tools builds every Sonarr tool over c; now is the clock for the
// calendar's default range. The write tools only appear when the service
// runs with ARR_ALLOW_WRITES=true (the toolkit drops them otherwise).
func Tools(c *Client, now func() time.Time) []toolkit.Tool {
	if now == nil {
		now = time.Now
	}
	t := &tools{c: c, now: now}
	search := c.api.SearchTimeout() + arrapi.SearchSlack
	return []toolkit.Tool{
		arrapi.Read("sonarr_series_list", "List series",
			"List the series in Sonarr with id, year, status and episode counts (have/total). Use query to filter by title; use the id with the other sonarr_ tools. One request to Sonarr.",
			t.seriesList),
		arrapi.Read("sonarr_series_get", "Get one series",
			"Show one Sonarr series with per-season statistics: episodes with files, aired episodes, total episodes, size on disk, monitored flags, next airing.",
			t.seriesGet),
		arrapi.Read("sonarr_episodes", "List episodes",
			"List the episodes of a series, or of one season, with episode id, number, title, air date, has_file and monitored. Use it before sonarr_episode_search or sonarr_release_search.",
			t.episodes),
		arrapi.Read("sonarr_wanted_missing", "Missing episodes",
			"List monitored episodes that have aired but have no file, newest first, paged; total_records is the full count.",
			t.missing),
		arrapi.Read("sonarr_calendar", "Upcoming episodes",
			"List episodes airing between start and end (dates YYYY-MM-DD, default today and 7 days later, at most 62 days apart), with series title and has_file.",
			t.calendar),
		arrapi.Read("sonarr_queue", "Download queue",
			"Show Sonarr's download queue, paged: title, episode, status, progress, time left, and the status and error messages that explain stuck or failed imports.",
			t.queue),
		arrapi.Read("sonarr_history", "History",
			"Show Sonarr's history newest first, paged: grabs, imports, failures, deletions. Narrow with series_id, episode_id or event_type.",
			t.history),
		arrapi.Read("sonarr_health", "Health",
			"Show Sonarr's version and its health checks (indexers, download clients, root folders, updates) with their messages.",
			arrapi.HealthTool(c.api)),
		arrapi.Read("sonarr_disk_space", "Disk space",
			"Show free and total space of the disks Sonarr sees.",
			arrapi.DiskSpaceTool(c.api)),
		arrapi.Read("sonarr_command_status", "Command status",
			"Show the state of a Sonarr command (queued, started, completed, failed), e.g. the episode search sonarr_episode_search started.",
			arrapi.CommandStatus(c.api)),
		{
			Name:        "sonarr_release_search",
			Title:       "Search releases",
			Description: fmt.Sprintf("Interactive search: Sonarr asks all its indexers now for releases of one season (series_id + season) or one episode (episode_id) and returns each with guid, indexer_id, size, quality, approved, rejections and download_allowed. Slow and loads the indexers: up to %d s; do not repeat it needlessly. Pass guid and indexer_id to sonarr_release_grab.", int(c.api.SearchTimeout().Seconds())),
			Annotations: toolkit.Annotations{ReadOnly: true, OpenWorld: true},
			Timeout:     search,
			Handler:     toolkit.ReadFor(t.releaseSearch),
		},
		t.episodeSearchTool(),
		t.grabTool(search + c.api.Timeout()),
	}
}

type tools struct {
	c   *Client
	now func() time.Time
}

// EpisodeCode formats season and episode as S01E02.
func EpisodeCode(season, episode int) string {
	return fmt.Sprintf("S%02dE%02d", season, episode)
}

type seriesSummary struct {
	ID        int    `json:"id"`
	Title     string `json:"title"`
	Year      int    `json:"year"`
	Status    string `json:"status"`
	Monitored bool   `json:"monitored"`
	Network   string `json:"network,omitempty"`
	Seasons   int    `json:"seasons"`
	Episodes  string `json:"episodes"`
	arrapi.OnDisk
}

func summary(s Series) seriesSummary {
	return seriesSummary{
		ID: s.ID, Title: s.Title, Year: s.Year, Status: s.Status, Monitored: s.Monitored, Network: s.Network,
		Seasons:  s.Statistics.SeasonCount,
		Episodes: fmt.Sprintf("%d/%d", s.Statistics.EpisodeFileCount, s.Statistics.EpisodeCount),
		OnDisk:   arrapi.OnDiskOf(s.Statistics.SizeOnDisk),
	}
}

func (t *tools) seriesList(ctx context.Context, in seriesListArgs) (any, error) {
	if in.Limit < 1 {
		in.Limit = 50
	}
	all, err := t.c.AllSeries(ctx)
	if err != nil {
		return nil, err
	}
	var match func(Series) bool
	if q := strings.ToLower(strings.TrimSpace(in.Query)); q != "" {
		match = func(s Series) bool { return strings.Contains(strings.ToLower(s.Title), q) }
	}
	out := arrapi.LibraryList(all, func(s Series) string { return s.Title }, match, 0, in.Limit, "series", summary)
	out["episodes_note"] = "episodes = with file / aired and monitored"
	return out, nil
}

func (t *tools) seriesGet(ctx context.Context, in seriesArgs) (any, error) {
	s, err := t.c.Series(ctx, in.SeriesID)
	if err != nil {
		return nil, err
	}
	type season struct {
		Season    int     `json:"season"`
		Monitored bool    `json:"monitored"`
		WithFile  int     `json:"episodes_with_file"`
		Aired     int     `json:"episodes_aired_monitored"`
		Total     int     `json:"episodes_total"`
		Percent   float64 `json:"percent_of_episodes"`
		arrapi.OnDisk
		NextAiring    string `json:"next_airing,omitempty"`
		PreviousAired string `json:"previous_airing,omitempty"`
	}
	seasons := make([]season, 0, len(s.Seasons))
	for _, x := range s.Seasons {
		st := x.Statistics
		seasons = append(seasons, season{x.SeasonNumber, x.Monitored, st.EpisodeFileCount, st.EpisodeCount, st.TotalEpisodeCount, st.PercentOfEpisodes, arrapi.OnDiskOf(st.SizeOnDisk), st.NextAiring, st.PreviousAiring})
	}
	return map[string]any{
		"id": s.ID, "title": s.Title, "year": s.Year, "status": s.Status, "ended": s.Ended, "monitored": s.Monitored,
		"network": s.Network, "quality_profile": s.ProfileName, "next_airing": s.NextAiring, "tvdb_id": s.TvdbID, "imdb_id": s.ImdbID,
		"statistics": summary(s), "seasons": seasons,
	}, nil
}

type episodeOut struct {
	ID        int    `json:"id"`
	Episode   string `json:"episode"`
	Title     string `json:"title"`
	AirDate   string `json:"air_date,omitempty"`
	HasFile   bool   `json:"has_file"`
	Monitored bool   `json:"monitored"`
	Series    string `json:"series,omitempty"`
	SeriesID  int    `json:"series_id,omitempty"`
}

func episodeView(e Episode, withSeries bool) episodeOut {
	o := episodeOut{ID: e.ID, Episode: EpisodeCode(e.SeasonNumber, e.EpisodeNumber), Title: e.Title, AirDate: e.AirDate, HasFile: e.HasFile, Monitored: e.Monitored}
	if withSeries {
		o.SeriesID = e.SeriesID
		if e.Series != nil {
			o.Series = e.Series.Title
		}
	}
	return o
}

func (t *tools) episodes(ctx context.Context, in episodesArgs) (any, error) {
	// The series lookup turns an unknown id into a clear not_found;
	// /episode answers an empty list for it.
	s, err := t.c.Series(ctx, in.SeriesID)
	if err != nil {
		return nil, err
	}
	eps, err := t.c.Episodes(ctx, in.SeriesID, in.Season)
	if err != nil {
		return nil, err
	}
	sort.Slice(eps, func(i, j int) bool {
		if eps[i].SeasonNumber != eps[j].SeasonNumber {
			return eps[i].SeasonNumber < eps[j].SeasonNumber
		}
		return eps[i].EpisodeNumber < eps[j].EpisodeNumber
	})
	out := make([]episodeOut, 0, len(eps))
	have := 0
	for _, e := range eps {
		out = append(out, episodeView(e, false))
		if e.HasFile {
			have++
		}
	}
	res := map[string]any{"series_id": s.ID, "series": s.Title, "count": len(out), "with_file": have, "episodes": out}
	if in.Season != nil {
		res["season"] = *in.Season
		if len(out) == 0 {
			res["note"] = fmt.Sprintf("Sonarr knows no episodes of season %d of this series", *in.Season)
		}
	}
	return res, nil
}

func (t *tools) missing(ctx context.Context, in arrapi.Paging) (any, error) {
	return arrapi.Paged(in, "episodes", func(page, size int) (arrapi.Page[Episode], error) { return t.c.Missing(ctx, page, size) },
		func(e Episode) episodeOut { return episodeView(e, true) })
}

func (t *tools) calendar(ctx context.Context, in calendarArgs) (any, error) {
	days, err := arrapi.Window(t.now(), in.Start, in.End, 7, 62)
	if err != nil {
		return nil, err
	}
	eps, err := t.c.Calendar(ctx, days.Start, days.Until(), in.Unmonitored)
	if err != nil {
		return nil, err
	}
	out := make([]episodeOut, 0, len(eps))
	for _, e := range eps {
		o := episodeView(e, true)
		if e.AirDateUtc != "" {
			o.AirDate = e.AirDateUtc
		}
		out = append(out, o)
	}
	return arrapi.CalendarResult(days, "episodes", out), nil
}

// queueItem is a queue entry as every app shows it, and the series and
// episode it is for; downloads Sonarr could not match have neither.
type queueItem struct {
	arrapi.QueueView
	SeriesID int    `json:"series_id,omitempty"`
	Series   string `json:"series,omitempty"`
	Episode  string `json:"episode,omitempty"`
}

func (t *tools) queue(ctx context.Context, in arrapi.Paging) (any, error) {
	return arrapi.Paged(in, "items", func(page, size int) (arrapi.Page[QueueItem], error) { return t.c.Queue(ctx, page, size) },
		func(r QueueItem) queueItem {
			it := queueItem{QueueView: r.View(), SeriesID: r.SeriesID}
			it.Series, it.Episode = names(r.Series, r.Episode)
			return it
		})
}

// names are the series title and the episode code (S01E02) of a queue
// item or history record, "" for what Sonarr did not include.
func names(s *Series, e *Episode) (series, episode string) {
	if s != nil {
		series = s.Title
	}
	if e != nil {
		episode = EpisodeCode(e.SeasonNumber, e.EpisodeNumber)
	}
	return series, episode
}

// historyEvents maps EpisodeHistoryEventType names to the numbers the
// eventType query parameter takes.
var historyEvents = map[string]int{
	"grabbed": 1, "seriesFolderImported": 2, "downloadFolderImported": 3, "downloadFailed": 4,
	"episodeFileDeleted": 5, "episodeFileRenamed": 6, "downloadIgnored": 7,
}

func (t *tools) history(ctx context.Context, in historyArgs) (any, error) {
	ev := 0
	if in.EventType != "" {
		n, ok := historyEvents[in.EventType]
		if !ok {
			return nil, toolerr.New(toolerr.InvalidArgument, "unknown event_type %q", in.EventType)
		}
		ev = n
	}
	return arrapi.Paged(in, "records", func(page, size int) (arrapi.Page[HistoryItem], error) {
		return t.c.History(ctx, HistoryQuery{Page: page, PageSize: size, SeriesID: in.SeriesID, EpisodeID: in.EpisodeID, EventType: ev})
	}, func(r HistoryItem) historyItem {
		it := historyItem{HistoryView: r.View(), SeriesID: r.SeriesID, EpisodeID: r.EpisodeID}
		it.Series, it.Episode = names(r.Series, r.Episode)
		return it
	})
}

// historyItem is a history record as every app shows it, and the series
// and episode it is about.
type historyItem struct {
	arrapi.HistoryView
	SeriesID  int    `json:"series_id"`
	Series    string `json:"series,omitempty"`
	EpisodeID int    `json:"episode_id"`
	Episode   string `json:"episode,omitempty"`
}

// releaseOut is a release as the tools show it (arrapi.ReleaseView) and
// the season and episodes it covers, as Sonarr mapped them.
type releaseOut struct {
	arrapi.ReleaseView
	FullSeason bool     `json:"full_season"`
	Season     int      `json:"season"`
	Episodes   []string `json:"episodes,omitempty"`
}

func releaseView(r Release, volatile bool) releaseOut {
	season := r.SeasonNumber
	if r.MappedSeasonNumber != nil {
		season = *r.MappedSeasonNumber
	}
	nums := r.MappedEpisodeNumbers
	if len(nums) == 0 {
		nums = r.EpisodeNumbers
	}
	var eps []string
	for _, n := range nums {
		eps = append(eps, EpisodeCode(season, n))
	}
	return releaseOut{ReleaseView: r.View(volatile), FullSeason: r.FullSeason, Season: season, Episodes: eps}
}

func (t *tools) releaseSearch(ctx context.Context, in releaseArgs) (any, error) {
	q := ReleaseQuery{}
	switch {
	case in.EpisodeID > 0 && (in.SeriesID > 0 || in.Season != nil):
		return nil, toolerr.New(toolerr.InvalidArgument, "give either episode_id, or series_id and season, not both")
	case in.EpisodeID > 0:
		q.EpisodeID = in.EpisodeID
		// A clear not_found instead of an empty search for a bad id.
		if _, err := t.c.Episode(ctx, in.EpisodeID); err != nil {
			return nil, err
		}
	case in.SeriesID > 0 && in.Season != nil:
		q.SeriesID, q.Season = in.SeriesID, in.Season
		if _, err := t.c.Series(ctx, in.SeriesID); err != nil {
			return nil, err
		}
	default:
		return nil, toolerr.New(toolerr.InvalidArgument, "give series_id and season (a season search) or episode_id (one episode)")
	}
	if in.Limit < 1 {
		in.Limit = 25
	}
	rels, err := t.c.Releases(ctx, q)
	if err != nil {
		return nil, err
	}
	return arrapi.ReleaseResult(rels, in.Limit, func(r Release) releaseOut { return releaseView(r, true) },
		"To download one, call sonarr_release_grab with series_id, season, guid and indexer_id. A rejected release or download_allowed=false needs force: true and a person's approval."), nil
}
