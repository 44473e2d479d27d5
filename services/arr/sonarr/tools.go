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
			"List the episodes of a series, or of one season, with episode id, number, title, air date, hasFile and monitored. Use it before sonarr_episode_search or sonarr_release_search.",
			t.episodes),
		arrapi.Read("sonarr_wanted_missing", "Missing episodes",
			"List monitored episodes that have aired but have no file, newest first, paged; totalRecords is the full count.",
			t.missing),
		arrapi.Read("sonarr_calendar", "Upcoming episodes",
			"List episodes airing between start and end (dates YYYY-MM-DD, default today and 7 days later, at most 62 days apart), with series title and hasFile.",
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
			Description: fmt.Sprintf("Interactive search: Sonarr asks all its indexers now for releases of one season (series_id + season) or one episode (episode_id) and returns each with guid, indexer_id, size, quality, approved, rejections and downloadAllowed. Slow and loads the indexers: up to %d s; do not repeat it needlessly. Pass guid and indexer_id to sonarr_release_grab.", int(c.api.SearchTimeout().Seconds())),
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
	ID        int     `json:"id"`
	Title     string  `json:"title"`
	Year      int     `json:"year"`
	Status    string  `json:"status"`
	Monitored bool    `json:"monitored"`
	Network   string  `json:"network,omitempty"`
	Seasons   int     `json:"seasons"`
	Episodes  string  `json:"episodes"`
	SizeGB    float64 `json:"size_on_disk_gb"`
}

func summary(s Series) seriesSummary {
	return seriesSummary{
		ID: s.ID, Title: s.Title, Year: s.Year, Status: s.Status, Monitored: s.Monitored, Network: s.Network,
		Seasons:  s.Statistics.SeasonCount,
		Episodes: fmt.Sprintf("%d/%d", s.Statistics.EpisodeFileCount, s.Statistics.EpisodeCount),
		SizeGB:   gb(s.Statistics.SizeOnDisk),
	}
}

func gb(b int64) float64 { return float64(b/10_000_000) / 100 }

func (t *tools) seriesList(ctx context.Context, in seriesListArgs) (any, error) {
	if in.Limit < 1 {
		in.Limit = 50
	}
	all, err := t.c.AllSeries(ctx)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(in.Query))
	var out []seriesSummary
	matched := 0
	sort.SliceStable(all, func(i, j int) bool { return strings.ToLower(all[i].Title) < strings.ToLower(all[j].Title) })
	for _, s := range all {
		if q != "" && !strings.Contains(strings.ToLower(s.Title), q) {
			continue
		}
		matched++
		if len(out) < in.Limit {
			out = append(out, summary(s))
		}
	}
	if out == nil {
		out = []seriesSummary{}
	}
	return map[string]any{"total": len(all), "matched": matched, "series": out, "episodes_note": "episodes = with file / aired and monitored"}, nil
}

func (t *tools) seriesGet(ctx context.Context, in seriesArgs) (any, error) {
	s, err := t.c.Series(ctx, in.SeriesID)
	if err != nil {
		return nil, err
	}
	type season struct {
		Season        int     `json:"season"`
		Monitored     bool    `json:"monitored"`
		WithFile      int     `json:"episodes_with_file"`
		Aired         int     `json:"episodes_aired_monitored"`
		Total         int     `json:"episodes_total"`
		Percent       float64 `json:"percent_of_episodes"`
		SizeGB        float64 `json:"size_on_disk_gb"`
		NextAiring    string  `json:"next_airing,omitempty"`
		PreviousAired string  `json:"previous_airing,omitempty"`
	}
	seasons := make([]season, 0, len(s.Seasons))
	for _, x := range s.Seasons {
		st := x.Statistics
		seasons = append(seasons, season{x.SeasonNumber, x.Monitored, st.EpisodeFileCount, st.EpisodeCount, st.TotalEpisodeCount, st.PercentOfEpisodes, gb(st.SizeOnDisk), st.NextAiring, st.PreviousAiring})
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
	page, size := in.Defaults()
	p, err := t.c.Missing(ctx, page, size)
	if err != nil {
		return nil, err
	}
	out := make([]episodeOut, 0, len(p.Records))
	for _, e := range p.Records {
		out = append(out, episodeView(e, true))
	}
	return map[string]any{"page": p.Page, "page_size": p.PageSize, "total_records": p.TotalRecords, "episodes": out}, nil
}

func parseDay(s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, toolerr.New(toolerr.InvalidArgument, "date %q is not a valid YYYY-MM-DD date", s)
	}
	return d, nil
}

func (t *tools) calendar(ctx context.Context, in calendarArgs) (any, error) {
	today := t.now().UTC().Truncate(24 * time.Hour)
	start, err := parseDay(in.Start, today)
	if err != nil {
		return nil, err
	}
	end, err := parseDay(in.End, start.AddDate(0, 0, 7))
	if err != nil {
		return nil, err
	}
	if end.Before(start) {
		return nil, toolerr.New(toolerr.InvalidArgument, "end (%s) is before start (%s)", end.Format(time.DateOnly), start.Format(time.DateOnly))
	}
	if end.Sub(start) > 62*24*time.Hour {
		return nil, toolerr.New(toolerr.InvalidArgument, "start and end are more than 62 days apart; ask for a shorter range")
	}
	// end is inclusive: the whole end day.
	eps, err := t.c.Calendar(ctx, start, end.Add(24*time.Hour-time.Second), in.Unmonitored)
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
	return map[string]any{"start": start.Format(time.DateOnly), "end": end.Format(time.DateOnly), "count": len(out), "episodes": out}, nil
}

func (t *tools) queue(ctx context.Context, in arrapi.Paging) (any, error) {
	page, size := in.Defaults()
	p, err := t.c.Queue(ctx, page, size)
	if err != nil {
		return nil, err
	}
	type item struct {
		arrapi.QueueView
		SeriesID int    `json:"series_id,omitempty"`
		Series   string `json:"series,omitempty"`
		Episode  string `json:"episode,omitempty"`
	}
	out := make([]item, 0, len(p.Records))
	for _, r := range p.Records {
		it := item{QueueView: r.View(), SeriesID: r.SeriesID}
		if r.Series != nil {
			it.Series = r.Series.Title
		}
		if r.Episode != nil {
			it.Episode = EpisodeCode(r.Episode.SeasonNumber, r.Episode.EpisodeNumber)
		}
		out = append(out, it)
	}
	return arrapi.PageResult(page, p, "items", out), nil
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
	page, size := in.Defaults()
	p, err := t.c.History(ctx, HistoryQuery{Page: page, PageSize: size, SeriesID: in.SeriesID, EpisodeID: in.EpisodeID, EventType: ev})
	if err != nil {
		return nil, err
	}
	type item struct {
		arrapi.HistoryView
		SeriesID  int    `json:"series_id"`
		Series    string `json:"series,omitempty"`
		EpisodeID int    `json:"episode_id"`
		Episode   string `json:"episode,omitempty"`
	}
	out := make([]item, 0, len(p.Records))
	for _, r := range p.Records {
		it := item{HistoryView: arrapi.NewHistoryView(r.ID, r.Date, r.EventType, r.SourceTitle, r.Quality, r.Data), SeriesID: r.SeriesID, EpisodeID: r.EpisodeID}
		if r.Series != nil {
			it.Series = r.Series.Title
		}
		if r.Episode != nil {
			it.Episode = EpisodeCode(r.Episode.SeasonNumber, r.Episode.EpisodeNumber)
		}
		out = append(out, it)
	}
	return arrapi.PageResult(page, p, "records", out), nil
}

// releaseOut is a release as the tools show it: stable fields only (no
// age or peer counts, which change between two searches and would
// invalidate a grab preview) plus, in search results, the volatile ones.
type releaseOut struct {
	GUID            string   `json:"guid"`
	IndexerID       int      `json:"indexer_id"`
	Indexer         string   `json:"indexer"`
	Title           string   `json:"title"`
	SizeGB          float64  `json:"size_gb"`
	Size            int64    `json:"size_bytes"`
	Quality         string   `json:"quality"`
	Protocol        string   `json:"protocol"`
	Languages       []string `json:"languages,omitempty"`
	FullSeason      bool     `json:"full_season"`
	Season          int      `json:"season"`
	Episodes        []string `json:"episodes,omitempty"`
	Approved        bool     `json:"approved"`
	Rejected        bool     `json:"rejected"`
	Rejections      []string `json:"rejections"`
	DownloadAllowed bool     `json:"download_allowed"`
	CustomFormat    int      `json:"custom_format_score"`
	AgeDays         *int     `json:"age_days,omitempty"`
	Seeders         *int     `json:"seeders,omitempty"`
	Leechers        *int     `json:"leechers,omitempty"`
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
	rej := r.Rejections
	if rej == nil {
		rej = []string{}
	}
	o := releaseOut{
		GUID: arrapi.PublicGUID(r.GUID), IndexerID: r.IndexerID, Indexer: r.Indexer, Title: r.Title,
		SizeGB: gb(r.Size), Size: r.Size, Quality: r.Quality.Name(), Protocol: r.Protocol, Languages: arrapi.LanguageNames(r.Languages),
		FullSeason: r.FullSeason, Season: season, Episodes: eps, Approved: r.Approved, Rejected: r.Rejected,
		Rejections: rej, DownloadAllowed: r.DownloadAllowed, CustomFormat: r.CustomFormatScore,
	}
	if volatile {
		age := r.Age
		o.AgeDays, o.Seeders, o.Leechers = &age, r.Seeders, r.Leechers
	}
	return o
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
	out := make([]releaseOut, 0, min(len(rels), in.Limit))
	approved := 0
	for _, r := range rels {
		if r.Approved {
			approved++
		}
		if len(out) < in.Limit {
			out = append(out, releaseView(r, true))
		}
	}
	return map[string]any{
		"total": len(rels), "approved": approved, "returned": len(out), "releases": out,
		"next": "To download one, call sonarr_release_grab with series_id, season, guid and indexer_id. A rejected release or download_allowed=false needs force: true and a person's approval.",
	}, nil
}
