package fakesonarr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

type series struct {
	ID        int
	Title     string
	Year      int
	Status    string
	Network   string
	Overview  string
	TvdbID    int
	ImdbID    string
	Monitored bool
	Seasons   []int
}

type episode struct {
	ID            int
	SeriesID      int
	SeasonNumber  int
	EpisodeNumber int
	Title         string
	AirDateUtc    time.Time
	HasFile       bool
	Monitored     bool
	EpisodeFileID int
}

type quality struct {
	Quality struct {
		ID         int    `json:"id"`
		Name       string `json:"name"`
		Source     string `json:"source"`
		Resolution int    `json:"resolution"`
	} `json:"quality"`
	Revision struct {
		Version  int  `json:"version"`
		Real     int  `json:"real"`
		IsRepack bool `json:"isRepack"`
	} `json:"revision"`
}

func mkQuality(name string) quality {
	var q quality
	table := map[string]struct {
		id, res int
		src     string
	}{
		"HDTV-720p": {4, 720, "television"}, "WEBDL-1080p": {3, 1080, "web"}, "Bluray-1080p": {7, 1080, "bluray"},
		"WEBDL-480p": {8, 480, "web"}, "WEBDL-2160p": {18, 2160, "web"}, "WEBRip-1080p": {15, 1080, "webRip"},
	}
	t := table[name]
	q.Quality.ID, q.Quality.Name, q.Quality.Source, q.Quality.Resolution = t.id, name, t.src, t.res
	q.Revision.Version = 1
	return q
}

type language struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

var english = []language{{ID: 1, Name: "English"}}

type episodeFile struct {
	ID                  int        `json:"id"`
	SeriesID            int        `json:"seriesId"`
	SeasonNumber        int        `json:"seasonNumber"`
	RelativePath        string     `json:"relativePath"`
	Path                string     `json:"path"`
	Size                int64      `json:"size"`
	DateAdded           string     `json:"dateAdded"`
	SceneName           string     `json:"sceneName"`
	ReleaseGroup        string     `json:"releaseGroup"`
	Languages           []language `json:"languages"`
	Quality             quality    `json:"quality"`
	CustomFormats       []any      `json:"customFormats"`
	CustomFormatScore   int        `json:"customFormatScore"`
	IndexerFlags        int        `json:"indexerFlags"`
	ReleaseType         string     `json:"releaseType"`
	QualityCutoffNotMet bool       `json:"qualityCutoffNotMet"`
}

type commandBody struct {
	Name       string `json:"name"`
	EpisodeIDs []int  `json:"episodeIds,omitempty"`
	SeriesID   int    `json:"seriesId,omitempty"`
	SeasonNum  *int   `json:"seasonNumber,omitempty"`
}

type command struct {
	ID                  int         `json:"id"`
	Name                string      `json:"name"`
	CommandName         string      `json:"commandName"`
	Message             string      `json:"message,omitempty"`
	Body                commandBody `json:"body"`
	Priority            string      `json:"priority"`
	Status              string      `json:"status"`
	Result              string      `json:"result"`
	Queued              string      `json:"queued"`
	Started             string      `json:"started,omitempty"`
	Ended               string      `json:"ended,omitempty"`
	Trigger             string      `json:"trigger"`
	SendUpdatesToClient bool        `json:"sendUpdatesToClient"`
	UpdateScheduledTask bool        `json:"updateScheduledTask"`
}

// release is a ReleaseResource with the fake's own switches.
type release struct {
	GUID                 string     `json:"guid"`
	Quality              quality    `json:"quality"`
	QualityWeight        int        `json:"qualityWeight"`
	Age                  int        `json:"age"`
	AgeHours             float64    `json:"ageHours"`
	AgeMinutes           float64    `json:"ageMinutes"`
	Size                 int64      `json:"size"`
	IndexerID            int        `json:"indexerId"`
	Indexer              string     `json:"indexer"`
	ReleaseGroup         string     `json:"releaseGroup"`
	Title                string     `json:"title"`
	FullSeason           bool       `json:"fullSeason"`
	SceneSource          bool       `json:"sceneSource"`
	SeasonNumber         int        `json:"seasonNumber"`
	Languages            []language `json:"languages"`
	SeriesTitle          string     `json:"seriesTitle"`
	EpisodeNumbers       []int      `json:"episodeNumbers"`
	MappedSeasonNumber   int        `json:"mappedSeasonNumber"`
	MappedEpisodeNumbers []int      `json:"mappedEpisodeNumbers"`
	MappedEpisodeInfo    []any      `json:"mappedEpisodeInfo"`
	Approved             bool       `json:"approved"`
	TemporarilyRejected  bool       `json:"temporarilyRejected"`
	Rejected             bool       `json:"rejected"`
	TvdbID               int        `json:"tvdbId"`
	Rejections           []string   `json:"rejections"`
	PublishDate          string     `json:"publishDate"`
	CommentURL           string     `json:"commentUrl"`
	DownloadURL          string     `json:"downloadUrl"`
	InfoURL              string     `json:"infoUrl"`
	MagnetURL            string     `json:"magnetUrl,omitempty"`
	InfoHash             string     `json:"infoHash,omitempty"`
	Seeders              *int       `json:"seeders,omitempty"`
	Leechers             *int       `json:"leechers,omitempty"`
	EpisodeRequested     bool       `json:"episodeRequested"`
	DownloadAllowed      bool       `json:"downloadAllowed"`
	ReleaseWeight        int        `json:"releaseWeight"`
	CustomFormats        []any      `json:"customFormats"`
	CustomFormatScore    int        `json:"customFormatScore"`
	Protocol             string     `json:"protocol"`
	IndexerFlags         int        `json:"indexerFlags"`
	Special              bool       `json:"special"`
	// MappedSeriesID is the series Sonarr matched (ReleaseResource:
	// remoteEpisode.Series?.Id); seriesId itself is only ever sent by a
	// client, so Sonarr leaves it out.
	MappedSeriesID int `json:"mappedSeriesId"`

	uncached bool // never enters the cache: a grab answers 404
	refuse   bool // the download client refuses it: a grab answers 409
}

func (s *Server) seed() {
	now := s.now().UTC()
	day := now.Truncate(24 * time.Hour)
	s.series = []*series{
		{ID: 1, Title: "The Expanse", Year: 2015, Status: "ended", Network: "Prime Video", TvdbID: 280619, ImdbID: "tt3230854", Monitored: true, Seasons: []int{1, 2},
			Overview: "Humanity has colonized the solar system."},
		{ID: 2, Title: "Severance", Year: 2022, Status: "continuing", Network: "Apple TV+", TvdbID: 371980, ImdbID: "tt11280740", Monitored: true, Seasons: []int{1, 2},
			Overview: "Mark leads a team of office workers whose memories have been surgically divided."},
		{ID: 3, Title: "Slow Horses", Year: 2022, Status: "continuing", Network: "Apple TV+", TvdbID: 393378, ImdbID: "tt5875444", Monitored: false, Seasons: []int{1},
			Overview: "A dysfunctional team of MI5 agents."},
	}
	titles := []string{"Pilot", "The Big Empty", "Remember the Cant", "CQB", "Back to the Butcher", "Rock Bottom"}
	add := func(sid, season, n int, aired time.Time, hasFile, monitored bool) {
		e := &episode{ID: sid*1000 + season*100 + n, SeriesID: sid, SeasonNumber: season, EpisodeNumber: n,
			Title: titles[(n-1)%len(titles)], AirDateUtc: aired, Monitored: monitored}
		s.episodes = append(s.episodes, e)
		if hasFile {
			s.addFile(e, "WEBDL-1080p", "NTb")
		}
	}
	// The Expanse: S01E01–E04 have files, E05–E06 are missing; S02 has
	// E01–E02 and misses E03–E06.
	for n := 1; n <= 6; n++ {
		add(1, 1, n, time.Date(2015, 12, 14+7*(n-1), 2, 0, 0, 0, time.UTC), n <= 4, true)
	}
	for n := 1; n <= 6; n++ {
		add(1, 2, n, time.Date(2017, 2, 1+7*(n-1), 2, 0, 0, 0, time.UTC), n <= 2, true)
	}
	// Severance: season 1 complete; season 2 airing weekly around now.
	for n := 1; n <= 6; n++ {
		add(2, 1, n, time.Date(2022, 2, 18+7*(n-1), 8, 0, 0, 0, time.UTC), true, true)
	}
	for n := 1; n <= 6; n++ {
		aired := day.AddDate(0, 0, 7*(n-3)).Add(2 * time.Hour)
		add(2, 2, n, aired, n <= 1, true)
	}
	// Slow Horses: unmonitored, nothing on disk.
	for n := 1; n <= 6; n++ {
		add(3, 1, n, time.Date(2022, 4, 1+7*(n-1), 1, 0, 0, 0, time.UTC), false, false)
	}

	seeders := func(n int) *int { return &n }
	key := [2]int{1, 1}
	pub := now.Add(-36 * time.Hour).Format(time.RFC3339)
	s.releases[key] = []*release{
		s.mkRelease(GUIDSeasonPack, IndexerNZBgeek, "The.Expanse.S01.1080p.BluRay.x264-FuN", "Bluray-1080p", 1, nil, true, 14_200_000_000, pub),
		s.mkRelease(GUIDEpisode5, IndexerNZBgeek, "The.Expanse.S01E05.720p.HDTV.x264-KILLERS", "HDTV-720p", 1, []int{5}, false, 1_150_000_000, pub),
		s.mkRelease(GUIDRejected, IndexerNZBgeek, "The.Expanse.S01.480p.WEB-DL.x264-LQ", "WEBDL-480p", 1, nil, true, 3_900_000_000, pub),
		s.mkRelease(GUIDNotAllowed, IndexerTorrents, "The.Expanse.S01E06.1080p.WEB.h264-GRP", "WEBDL-1080p", 1, []int{6}, false, 2_400_000_000, pub),
		s.mkRelease(GUIDUncached, IndexerNZBgeek, "The.Expanse.S01E05.1080p.WEB-DL.DDP5.1.H.264-CACHEMISS", "WEBDL-1080p", 1, []int{5}, false, 2_100_000_000, pub),
		s.mkRelease(GUIDRefused, IndexerNZBgeek, "The.Expanse.S01E06.2160p.WEB-DL.DDP5.1.H.265-REFUSED", "WEBDL-2160p", 1, []int{6}, false, 6_800_000_000, pub),
	}
	rs := s.releases[key]
	rs[2].Approved, rs[2].Rejected = false, true
	rs[2].Rejections = []string{"WEBDL-480p is not wanted in profile", "Existing file on disk is of equal or higher preference: WEBDL-1080p"}
	rs[3].DownloadAllowed = false
	rs[3].Protocol, rs[3].Seeders, rs[3].Leechers = "torrent", seeders(41), seeders(3)
	rs[3].Indexer = "TorrentLeech (Prowlarr)"
	rs[3].MagnetURL = "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&tr=https://tracker.example/announce?passkey=" + TrackerPasskey
	rs[3].InfoHash = "0123456789abcdef0123456789abcdef01234567"
	rs[4].uncached = true
	rs[5].refuse = true

	s.releases[[2]int{1, 2}] = []*release{
		s.mkRelease("nzbgeek-c003-expanse-s02-ntb", IndexerNZBgeek, "The.Expanse.S02.1080p.AMZN.WEB-DL.DDP5.1.H.264-NTb", "WEBDL-1080p", 2, nil, true, 18_700_000_000, pub),
		s.mkRelease("nzbgeek-c004-expanse-s02e03", IndexerNZBgeek, "The.Expanse.S02E03.1080p.WEBRip.x264-RARBG", "WEBRip-1080p", 2, []int{3}, false, 1_900_000_000, pub),
	}
}

func (s *Server) addFile(e *episode, q, group string) {
	ser := s.seriesByID(e.SeriesID)
	id := 50000 + e.ID
	rel := fmt.Sprintf("Season %02d/%s - S%02dE%02d - %s [%s]-%s.mkv", e.SeasonNumber, ser.Title, e.SeasonNumber, e.EpisodeNumber, e.Title, q, group)
	s.files[id] = &episodeFile{
		ID: id, SeriesID: e.SeriesID, SeasonNumber: e.SeasonNumber, RelativePath: rel, Path: "/tv/" + ser.Title + "/" + rel,
		Size: 1_800_000_000 + int64(e.EpisodeNumber)*10_000_000, DateAdded: e.AirDateUtc.Add(48 * time.Hour).Format(time.RFC3339),
		SceneName: fmt.Sprintf("%s.S%02dE%02d.1080p.WEB-DL-%s", ser.Title, e.SeasonNumber, e.EpisodeNumber, group), ReleaseGroup: group,
		Languages: english, Quality: mkQuality(q), CustomFormats: []any{}, ReleaseType: "singleEpisode",
	}
	e.HasFile, e.EpisodeFileID = true, id
}

func (s *Server) seriesByID(id int) *series {
	for _, x := range s.series {
		if x.ID == id {
			return x
		}
	}
	return nil
}

func (s *Server) mkRelease(guid string, indexer int, title, q string, season int, eps []int, full bool, size int64, pub string) *release {
	name := map[int]string{IndexerNZBgeek: "NZBgeek (Prowlarr)", IndexerTorrents: "TorrentLeech (Prowlarr)"}[indexer]
	if eps == nil {
		eps = []int{}
	}
	return &release{
		GUID: guid, Quality: mkQuality(q), QualityWeight: 100, Age: 1, AgeHours: 36, AgeMinutes: 2160, Size: size,
		IndexerID: indexer, Indexer: name, ReleaseGroup: title[strings.LastIndex(title, "-")+1:], Title: title, FullSeason: full,
		SeasonNumber: season, Languages: english, SeriesTitle: "The Expanse", EpisodeNumbers: eps,
		MappedSeasonNumber: season, MappedEpisodeNumbers: slices.Clone(eps), MappedEpisodeInfo: []any{},
		Approved: true, TvdbID: 280619, Rejections: []string{}, PublishDate: pub,
		CommentURL:       "https://nzbgeek.info/geekseek.php?guid=" + strconv.Itoa(len(title)),
		DownloadURL:      "http://prowlarr:9696/" + strconv.Itoa(indexer) + "/download?apikey=" + ProwlarrKey + "&link=abc&file=" + title,
		InfoURL:          "http://prowlarr:9696/" + strconv.Itoa(indexer) + "/info?apikey=" + ProwlarrKey,
		EpisodeRequested: true, DownloadAllowed: true, ReleaseWeight: 1, CustomFormats: []any{}, Protocol: "usenet", MappedSeriesID: 1,
	}
}

func (s *Server) seriesResource(x *series) map[string]any {
	var seasons []map[string]any
	var tot struct {
		files, count, total int
		size                int64
	}
	now := s.now()
	for _, sn := range x.Seasons {
		var files, count, total int
		var size int64
		for _, e := range s.episodes {
			if e.SeriesID != x.ID || e.SeasonNumber != sn {
				continue
			}
			total++
			if e.HasFile {
				files++
				size += s.files[e.EpisodeFileID].Size
			}
			if e.HasFile || (e.Monitored && !e.AirDateUtc.After(now)) {
				count++
			}
		}
		pct := 0.0
		if count > 0 {
			pct = float64(files) * 100 / float64(count)
		}
		seasons = append(seasons, map[string]any{"seasonNumber": sn, "monitored": x.Monitored, "images": []any{},
			"statistics": map[string]any{"episodeFileCount": files, "episodeCount": count, "totalEpisodeCount": total, "sizeOnDisk": size, "releaseGroups": []string{"NTb"}, "percentOfEpisodes": pct}})
		tot.files, tot.count, tot.total, tot.size = tot.files+files, tot.count+count, tot.total+total, tot.size+size
	}
	pct := 0.0
	if tot.count > 0 {
		pct = float64(tot.files) * 100 / float64(tot.count)
	}
	return map[string]any{
		"id": x.ID, "title": x.Title, "sortTitle": x.Title, "status": x.Status, "ended": x.Status == "ended",
		"overview": x.Overview, "network": x.Network, "airTime": "21:00", "images": []any{}, "seasons": seasons,
		"year": x.Year, "path": "/tv/" + x.Title, "qualityProfileId": 1, "profileName": "HD-1080p", "seasonFolder": true, "monitored": x.Monitored,
		"monitorNewItems": "all", "useSceneNumbering": false, "runtime": 50, "tvdbId": x.TvdbID, "tvRageId": 0, "tvMazeId": 0, "tmdbId": 0,
		"seriesType": "standard", "cleanTitle": x.Title, "imdbId": x.ImdbID, "titleSlug": x.Title, "rootFolderPath": "/tv/",
		"genres": []string{"Drama"}, "tags": []int{}, "added": "2023-01-01T00:00:00Z",
		"ratings":           map[string]any{"votes": 1000, "value": 8.5},
		"statistics":        map[string]any{"seasonCount": len(x.Seasons), "episodeFileCount": tot.files, "episodeCount": tot.count, "totalEpisodeCount": tot.total, "sizeOnDisk": tot.size, "releaseGroups": []string{"NTb"}, "percentOfEpisodes": pct},
		"languageProfileId": 1,
	}
}

func (s *Server) episodeResource(e *episode, withSeries bool) map[string]any {
	m := map[string]any{
		"id": e.ID, "seriesId": e.SeriesID, "tvdbId": 9_000_000 + e.ID, "episodeFileId": e.EpisodeFileID,
		"seasonNumber": e.SeasonNumber, "episodeNumber": e.EpisodeNumber, "title": e.Title,
		"airDate": e.AirDateUtc.Format(time.DateOnly), "airDateUtc": e.AirDateUtc.Format(time.RFC3339),
		"runtime": 50, "overview": "", "hasFile": e.HasFile, "monitored": e.Monitored, "unverifiedSceneNumbering": false,
	}
	if withSeries {
		if x := s.seriesByID(e.SeriesID); x != nil {
			m["series"] = s.seriesResource(x)
		}
	}
	return m
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ep := func(id int) map[string]any {
		for _, e := range s.episodes {
			if e.ID == id {
				return s.episodeResource(e, false)
			}
		}
		return nil
	}
	q := r.URL.Query()
	items := []map[string]any{
		{
			"id": 2201, "seriesId": 1, "episodeId": 1203, "seasonNumber": 2, "languages": english, "quality": mkQuality("WEBDL-1080p"),
			"customFormats": []any{}, "customFormatScore": 0, "size": 1_900_000_000.0, "sizeleft": 640_000_000.0, "timeleft": "00:04:12",
			"title": "The.Expanse.S02E03.1080p.AMZN.WEB-DL.DDP5.1.H.264-NTb", "estimatedCompletionTime": s.now().UTC().Add(4 * time.Minute).Format(time.RFC3339),
			"added": s.now().UTC().Add(-20 * time.Minute).Format(time.RFC3339), "status": "downloading", "trackedDownloadStatus": "ok",
			"trackedDownloadState": "downloading", "statusMessages": []any{}, "downloadId": "SABnzbd_nzo_abc123", "protocol": "usenet",
			"downloadClient": "SABnzbd", "downloadClientHasPostImportCategory": false, "indexer": "NZBgeek (Prowlarr)",
			"outputPath": "/downloads/complete/tv/The.Expanse.S02E03", "episodeHasFile": false,
		},
		{
			"id": 2202, "seriesId": 2, "episodeId": 2202, "seasonNumber": 2, "languages": english, "quality": mkQuality("WEBRip-1080p"),
			"customFormats": []any{}, "customFormatScore": 0, "size": 2_300_000_000.0, "sizeleft": 0.0, "timeleft": "00:00:00",
			"title": "Severance.S02E02.1080p.WEBRip.x264-GRP", "added": s.now().UTC().Add(-3 * time.Hour).Format(time.RFC3339),
			"status": "completed", "trackedDownloadStatus": "warning", "trackedDownloadState": "importBlocked",
			"statusMessages": []any{map[string]any{"title": "Severance.S02E02.1080p.WEBRip.x264-GRP", "messages": []string{
				"Found matching series via grab history, but release was matched to series by ID. Automatic import is not possible. See the FAQ for details.",
			}}},
			"errorMessage": "", "downloadId": "qbittorrent_ABCDEF", "protocol": "torrent", "downloadClient": "qBittorrent",
			"downloadClientHasPostImportCategory": false, "indexer": "TorrentLeech (Prowlarr)", "outputPath": "/downloads/complete/Severance.S02E02", "episodeHasFile": false,
		},
	}
	if boolParam(q, "includeEpisode", false) {
		items[0]["episode"], items[1]["episode"] = ep(1203), ep(2202)
	}
	if boolParam(q, "includeSeries", false) {
		items[0]["series"], items[1]["series"] = s.seriesResource(s.series[0]), s.seriesResource(s.series[1])
	}
	// A download Sonarr cannot match to a series (QueueController: only
	// with includeUnknownSeriesItems=true; CompletedDownloadService's
	// warning for it).
	if boolParam(q, "includeUnknownSeriesItems", false) {
		items = append(items, map[string]any{
			"id": 2203, "languages": []any{}, "quality": mkQuality("WEBDL-1080p"),
			"customFormats": []any{}, "customFormatScore": 0, "size": 1_400_000_000.0, "sizeleft": 0.0, "timeleft": "00:00:00",
			"title": "Some.Unknown.Show.S01E01.1080p.WEB-DL-XYZ", "added": s.now().UTC().Add(-5 * time.Hour).Format(time.RFC3339),
			"status": "completed", "trackedDownloadStatus": "warning", "trackedDownloadState": "importBlocked",
			"statusMessages": []any{map[string]any{"title": "Some.Unknown.Show.S01E01.1080p.WEB-DL-XYZ", "messages": []string{
				"Unable to parse download, automatic import is not possible.",
			}}},
			"downloadId": "SABnzbd_nzo_unknown", "protocol": "usenet", "downloadClient": "SABnzbd",
			"downloadClientHasPostImportCategory": false, "outputPath": "/downloads/complete/tv/Some.Unknown.Show.S01E01", "episodeHasFile": false,
		})
	}
	page, ok := intParam(w, q, "page", 1)
	if !ok {
		return
	}
	size, ok := intParam(w, q, "pageSize", 10)
	if !ok {
		return
	}
	key, dir := sorting(q, []string{"timeleft", "added", "progress", "size", "status", "title"}, "timeleft")
	arrfake.WriteJSON(w, http.StatusOK, arrfake.QueuePageOf(items, max(page, 1), max(size, 1), key, dir))
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	epID, ok := intParam(w, q, "episodeId", 0)
	if !ok {
		return
	}
	var seriesIDs, events []int
	for name, dst := range map[string]*[]int{"seriesIds": &seriesIDs, "eventType": &events} {
		for _, v := range q[name] {
			n, err := strconv.Atoi(v)
			if err != nil {
				arrfake.InvalidValue(w, name, v)
				return
			}
			*dst = append(*dst, n)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC()
	type rec struct {
		id, ep, series, event int
		name, title, q        string
		at                    time.Time
		data                  map[string]string
	}
	recs := []rec{
		{1, 2202, 2, 1, "grabbed", "Severance.S02E02.1080p.WEBRip.x264-GRP", "WEBRip-1080p", now.Add(-3 * time.Hour), map[string]string{
			"indexer": "TorrentLeech (Prowlarr)", "releaseGroup": "GRP", "downloadClient": "qBittorrent", "downloadClientName": "qBittorrent",
			"downloadUrl": "http://prowlarr:9696/2/download?apikey=" + ProwlarrKey + "&link=xyz", "protocol": "torrent", "size": "2300000000",
			"torrentInfoHash": "ABCDEF"}},
		{2, 1203, 1, 1, "grabbed", "The.Expanse.S02E03.1080p.AMZN.WEB-DL.DDP5.1.H.264-NTb", "WEBDL-1080p", now.Add(-20 * time.Minute), map[string]string{
			"indexer": "NZBgeek (Prowlarr)", "releaseGroup": "NTb", "downloadClient": "SABnzbd", "nzbInfoUrl": "https://nzbgeek.info/geekseek.php?guid=1&apikey=" + ProwlarrKey,
			"downloadUrl": "http://prowlarr:9696/1/download?apikey=" + ProwlarrKey + "&link=abc", "protocol": "usenet"}},
		{3, 2201, 2, 3, "downloadFolderImported", "Severance.S02E01.1080p.WEB-DL-NTb", "WEBDL-1080p", now.Add(-7 * 24 * time.Hour), map[string]string{
			"droppedPath": "/downloads/complete/Severance.S02E01/s02e01.mkv", "importedPath": "/tv/Severance/Season 02/Severance - S02E01.mkv", "downloadClient": "SABnzbd"}},
		{4, 1105, 1, 4, "downloadFailed", "The.Expanse.S01E05.720p.HDTV.x264-BROKEN", "HDTV-720p", now.Add(-30 * 24 * time.Hour), map[string]string{
			"indexer": "NZBgeek (Prowlarr)", "message": "Download failed: missing articles", "downloadClient": "SABnzbd"}},
	}
	out := []map[string]any{}
	for _, x := range recs {
		if (epID != 0 && x.ep != epID) || (len(seriesIDs) > 0 && !slices.Contains(seriesIDs, x.series)) || (len(events) > 0 && !slices.Contains(events, x.event)) {
			continue
		}
		m := map[string]any{"id": x.id, "episodeId": x.ep, "seriesId": x.series, "sourceTitle": x.title, "languages": english,
			"quality": mkQuality(x.q), "customFormats": []any{}, "customFormatScore": 0, "qualityCutoffNotMet": false,
			"date": x.at.Format(time.RFC3339), "downloadId": "dl-" + strconv.Itoa(x.id), "eventType": x.name, "data": x.data}
		for _, e := range s.episodes {
			if e.ID == x.ep && boolParam(q, "includeEpisode", false) {
				m["episode"] = s.episodeResource(e, false)
			}
		}
		if boolParam(q, "includeSeries", false) {
			m["series"] = s.seriesResource(s.seriesByID(x.series))
		}
		out = append(out, m)
	}
	p, ok := pageOf(w, q, out, []string{"date", "series.sortTitle"}, "date")
	if ok {
		arrfake.WriteJSON(w, http.StatusOK, p)
	}
}

func (s *Server) releaseSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	sid, ok := intParam(w, q, "seriesId", 0)
	if !ok {
		return
	}
	season, ok := intParam(w, q, "seasonNumber", -1)
	if !ok {
		return
	}
	epID, ok := intParam(w, q, "episodeId", 0)
	if !ok {
		return
	}
	if !s.WaitSearch(r.Context()) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []*release
	switch {
	case epID > 0:
		var e *episode
		for _, x := range s.episodes {
			if x.ID == epID {
				e = x
			}
		}
		if e == nil {
			// The search's catch-all turns the lookup's exception into
			// a 500 with its message.
			arrfake.ClientError(w, http.StatusInternalServerError, clientException, "Episode with ID "+strconv.Itoa(epID)+" does not exist")
			return
		}
		for _, rel := range s.releases[[2]int{e.SeriesID, e.SeasonNumber}] {
			if slices.Contains(rel.EpisodeNumbers, e.EpisodeNumber) {
				found = append(found, rel)
			}
		}
	case sid > 0 && season >= 0:
		if s.seriesByID(sid) == nil {
			arrfake.ClientError(w, http.StatusInternalServerError, clientException, "Series with ID "+strconv.Itoa(sid)+" does not exist")
			return
		}
		found = s.releases[[2]int{sid, season}]
	default:
		// Sonarr without parameters lists its cached RSS releases; the
		// fake has none.
	}
	out := []json.RawMessage{}
	for _, rel := range found {
		if !rel.uncached {
			s.cache[cacheKey(rel.IndexerID, rel.GUID)] = rel
		}
		// mappedEpisodeInfo: the episodes Sonarr matched, a season
		// pack's being every episode of the season.
		info := []any{}
		for _, e := range s.episodes {
			if e.SeriesID == rel.MappedSeriesID && e.SeasonNumber == rel.MappedSeasonNumber && (rel.FullSeason || slices.Contains(rel.MappedEpisodeNumbers, e.EpisodeNumber)) {
				info = append(info, map[string]any{"id": e.ID, "seasonNumber": e.SeasonNumber, "episodeNumber": e.EpisodeNumber, "title": e.Title})
			}
		}
		rel.MappedEpisodeInfo = info
		b, _ := json.Marshal(rel)
		out = append(out, b)
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

// clientException is the exception the release routes throw for their
// refusals; the pipeline answers its status and message.
const clientException = "NzbDrone.Core.Exceptions.NzbDroneClientException"

func cacheKey(indexer int, guid string) string { return strconv.Itoa(indexer) + "/" + guid }

func (s *Server) releaseGrab(w http.ResponseWriter, r *http.Request) {
	var body struct {
		GUID      string `json:"guid"`
		IndexerID int    `json:"indexerId"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.GUID == "" || body.IndexerID <= 0 {
		var fs []arrfake.Failure
		if body.IndexerID <= 0 {
			fs = append(fs, arrfake.Failure{Property: "IndexerId", Message: "'Indexer Id' must be greater than '0'.", Attempted: body.IndexerID})
		}
		if body.GUID == "" {
			fs = append(fs, arrfake.Failure{Property: "Guid", Message: "'Guid' must not be empty.", Attempted: ""})
		}
		arrfake.ValidationFailed(w, fs...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rel, ok := s.cache[cacheKey(body.IndexerID, body.GUID)]
	if !ok {
		arrfake.ClientError(w, http.StatusNotFound, clientException, "Couldn't find requested release in cache, try searching again")
		return
	}
	if rel.refuse {
		arrfake.ClientError(w, http.StatusConflict, clientException, "Getting release from indexer failed")
		return
	}
	s.grabs = append(s.grabs, Grab{GUID: rel.GUID, IndexerID: rel.IndexerID, Title: rel.Title})
	arrfake.WriteJSON(w, http.StatusOK, rel)
}
