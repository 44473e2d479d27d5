package fakeradarr

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

func quality(name string, id, resolution int, source string) map[string]any {
	return map[string]any{
		"quality":  map[string]any{"id": id, "name": name, "source": source, "resolution": resolution, "modifier": "none"},
		"revision": map[string]any{"version": 1, "real": 0, "isRepack": false},
	}
}

var english = []any{map[string]any{"id": 1, "name": "English"}}

func movieFile(movieID, id int, q string, qid int, size int64, now time.Time) map[string]any {
	return map[string]any{
		"id": id, "movieId": movieID, "relativePath": fmt.Sprintf("Movie (%d) %s.mkv", movieID, q),
		"path": fmt.Sprintf("/movies/Movie %d/Movie (%d) %s.mkv", movieID, movieID, q), "size": size,
		"dateAdded": now.Add(-300 * 24 * time.Hour).Format(time.RFC3339), "sceneName": "", "releaseGroup": "GROUP",
		"edition": "", "languages": english, "quality": quality(q, qid, 1080, "bluray"), "customFormats": []any{},
		"customFormatScore": 0, "indexerFlags": 0, "qualityCutoffNotMet": false,
	}
}

func seedMovies(now time.Time) []map[string]any {
	day := func(d int) string { return now.AddDate(0, 0, d).Truncate(24 * time.Hour).Format(time.RFC3339) }
	mk := func(id int, title string, year, tmdb int, imdb string, status string, monitored, hasFile bool, cinemas, digital string) map[string]any {
		m := map[string]any{
			"id": id, "title": title, "originalTitle": title, "originalLanguage": map[string]any{"id": 1, "name": "English"},
			"alternateTitles": []any{}, "secondaryYearSourceId": 0, "sortTitle": title, "sizeOnDisk": 0,
			"status": status, "overview": title + " overview from TMDb.", "inCinemas": cinemas, "images": []any{},
			"website": "", "year": year, "studio": "Warner Bros. Pictures", "path": "/movies/" + title + " (" + strconv.Itoa(year) + ")",
			"qualityProfileId": 1, "hasFile": hasFile, "movieFileId": 0, "monitored": monitored,
			"minimumAvailability": "released", "isAvailable": status == "released", "folderName": title,
			"runtime": 120, "cleanTitle": title, "imdbId": imdb, "tmdbId": tmdb, "titleSlug": strconv.Itoa(tmdb),
			"rootFolderPath": "/movies", "certification": "R", "genres": []string{"Science Fiction"}, "keywords": []string{},
			"tags": []int{}, "added": now.Add(-400 * 24 * time.Hour).Format(time.RFC3339),
			"ratings": map[string]any{}, "popularity": 50.0,
			"statistics": map[string]any{"movieFileCount": 0, "sizeOnDisk": 0, "releaseGroups": []string{}},
		}
		if digital != "" {
			m["digitalRelease"] = digital
		}
		if hasFile {
			m["movieFile"] = movieFile(id, 500+id, "Bluray-1080p", 7, 10_737_418_240, now)
			m["movieFileId"] = 500 + id
			m["sizeOnDisk"] = int64(10_737_418_240) // Radarr's long; an int overflows on 32-bit ARM
		}
		return m
	}
	return []map[string]any{
		mk(1, "The Matrix", 1999, 603, "tt0133093", "released", true, true, "1999-03-31T00:00:00Z", "2001-01-01T00:00:00Z"),
		mk(2, "Dune: Part Two", 2024, 693134, "tt15239678", "released", true, false, "2024-02-27T00:00:00Z", "2024-04-16T00:00:00Z"),
		mk(3, "Blade Runner 2049", 2017, 335984, "tt1856101", "released", true, false, "2017-10-04T00:00:00Z", "2017-12-26T00:00:00Z"),
		mk(4, "Nosferatu", 2024, 426063, "tt5040012", "released", false, false, "2024-12-25T00:00:00Z", "2025-01-21T00:00:00Z"),
		mk(5, "Mickey 17", 2025, 696506, "tt12299608", "inCinemas", true, false, day(-3), day(10)),
	}
}

func tmdbOnly() []map[string]any {
	return []map[string]any{{
		"id": 0, "title": "Arrival", "originalTitle": "Arrival", "year": 2016, "tmdbId": 329865, "imdbId": "tt2543164",
		"status": "released", "overview": "Linguist Louise Banks leads a team investigating alien spacecraft.",
		"monitored": false, "hasFile": false, "images": []any{}, "genres": []string{"Drama"}, "tags": []int{},
	}}
}

func (s *Server) queue(w http.ResponseWriter, r *http.Request) {
	includeMovie := r.URL.Query().Get("includeMovie") == "true"
	mk := func(id, movieID int, title, status, tstatus, tstate string, size, left float64, msgs []any, errMsg string) map[string]any {
		q := map[string]any{
			"id": id, "movieId": movieID, "languages": english, "quality": quality("WEBDL-2160p", 18, 2160, "webdl"),
			"customFormats": []any{}, "customFormatScore": 0, "size": size, "title": title,
			"estimatedCompletionTime": s.now.Add(40 * time.Minute).Format(time.RFC3339), "added": s.now.Add(-time.Hour).Format(time.RFC3339),
			"status": status, "trackedDownloadStatus": tstatus, "trackedDownloadState": tstate, "statusMessages": msgs,
			"errorMessage": errMsg, "downloadId": "SABnzbd_nzo_abc123", "protocol": "usenet", "downloadClient": "SABnzbd",
			"downloadClientHasPostImportCategory": false, "indexer": "NZBgeek (Prowlarr)",
			"outputPath": "/downloads/complete/" + title, "sizeleft": left, "timeleft": "00:40:00",
		}
		if includeMovie {
			q["movie"] = s.find(movieID)
		}
		return q
	}
	items := []map[string]any{
		mk(1, 3, "Blade.Runner.2049.2017.2160p.WEB-DL.DDP5.1.HDR.H.265", "downloading", "ok", "downloading", 20e9, 5e9, []any{}, ""),
		mk(2, 2, "Dune.Part.Two.2024.1080p.WEB-DL", "completed", "warning", "importBlocked", 8e9, 0, []any{
			map[string]any{"title": "Dune.Part.Two.2024.1080p.WEB-DL.mkv", "messages": []string{"Not an upgrade for existing movie file. Existing quality: Bluray-1080p"}},
		}, ""),
	}
	// A download Radarr cannot match to a movie: only listed with
	// includeUnknownMovieItems=true (QueueController.GetQueue).
	if r.URL.Query().Get("includeUnknownMovieItems") == "true" {
		u := mk(3, 0, "Some.Unknown.Film.2023.1080p.WEB-DL-XYZ", "completed", "warning", "importBlocked", 4e9, 0, []any{
			map[string]any{"title": "Some.Unknown.Film.2023.1080p.WEB-DL-XYZ", "messages": []string{"Unable to parse download, automatic import is not possible."}},
		}, "")
		delete(u, "movieId")
		delete(u, "movie")
		items = append(items, u)
	}
	paged(w, r.URL.Query(), items, []string{"timeleft", "added", "progress", "size", "status", "title"}, "timeleft", nil, true)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	want := q.Get("movieIds")
	mk := func(id, movieID int, event, title string, data map[string]any) map[string]any {
		h := map[string]any{
			"id": id, "movieId": movieID, "sourceTitle": title, "languages": english, "quality": quality("Bluray-1080p", 7, 1080, "bluray"),
			"customFormats": []any{}, "customFormatScore": 0, "qualityCutoffNotMet": false,
			"date": s.now.Add(-time.Duration(id) * time.Hour).Format(time.RFC3339), "downloadId": "SABnzbd_nzo_" + strconv.Itoa(id),
			"eventType": event, "data": data,
		}
		if q.Get("includeMovie") == "true" {
			h["movie"] = s.find(movieID)
		}
		return h
	}
	dl := "http://prowlarr:9696/1/download?apikey=" + ProwlarrKey + "&link=abc"
	all := []map[string]any{
		mk(1, 1, "downloadFolderImported", "The.Matrix.1999.1080p.BluRay.x264-GROUP", map[string]any{
			"droppedPath": "/downloads/complete/The.Matrix", "importedPath": "/movies/The Matrix (1999)/The Matrix.mkv", "downloadClient": "SABnzbd", "downloadClientName": "SABnzbd"}),
		mk(2, 1, "grabbed", "The.Matrix.1999.1080p.BluRay.x264-GROUP", map[string]any{
			"indexer": "NZBgeek (Prowlarr)", "releaseGroup": "GROUP", "size": "10737418240", "downloadUrl": dl,
			"guid": "https://www.torrentleech.org/rss/download/1/" + TrackerPasskey + "/x.torrent", "protocol": "1", "downloadClient": "SABnzbd"}),
		mk(3, 2, "downloadFailed", "Dune.Part.Two.2024.2160p.WEB-DL", map[string]any{
			"message": "Download failed: not enough free space", "indexer": "NZBgeek (Prowlarr)", "downloadUrl": dl}),
	}
	recs := []map[string]any{}
	for _, h := range all {
		if want == "" || strconv.Itoa(h["movieId"].(int)) == want {
			recs = append(recs, h)
		}
	}
	paged(w, q, recs, []string{"date", "languages", "movieMetadata.sortTitle", "quality"}, "date", nil, false)
}

// release is one seeded interactive-search result.
type release struct {
	guid            string
	indexerID       int
	indexer         string
	title           string
	quality         string
	qid, res        int
	size            int64
	protocol        string
	approved        bool
	rejections      []string
	downloadAllowed bool
	seeders         int
	// temporary: every rejection is of RejectionType.Temporary (a
	// blocked indexer, a minimum age), so Radarr answers
	// temporarilyRejected instead of rejected.
	temporary bool
}

// unmapped: Radarr could not tell which movie the release is
// (remoteMovie.Movie is null), which its rejection says.
func (r release) unmapped() bool {
	return slices.ContainsFunc(r.rejections, func(s string) bool { return strings.HasPrefix(s, "Unknown Movie.") })
}

func seedReleases(movieID int, title string) []release {
	if movieID == 2 {
		return []release{
			{GUIDApproved, 1, "NZBgeek (Prowlarr)", "Dune.Part.Two.2024.2160p.UHD.BluRay.x265-TERMiNAL", "Bluray-2160p", 19, 2160, 64_424_509_440, "usenet", true, nil, true, 0, false},
			{GUIDWithPasskey, 2, "TorrentLeech (Prowlarr)", "Dune.Part.Two.2024.1080p.BluRay.x264-SPARKS", "Bluray-1080p", 7, 1080, 15_032_385_536, "torrent", true, nil, true, 80, false},
			{GUIDRefused, 3, "1337x (Prowlarr)", "Dune.Part.Two.2024.1080p.WEB-DL.DDP5.1", "WEBDL-1080p", 3, 1080, 8_589_934_592, "torrent", true, nil, true, 300, false},
			{GUIDRejected, 2, "TorrentLeech (Prowlarr)", "Dune.Part.Two.2024.720p.CAM", "CAM", 25, 720, 1_610_612_736, "torrent", false, []string{"CAM is not wanted in profile"}, true, 12, false},
			{GUIDNotAllowed, 3, "1337x (Prowlarr)", "Dune.2.2024.1080p.HDTC", "TELECINE", 26, 1080, 2_147_483_648, "torrent", false, []string{"Unknown Movie. Unable to identify correct movie using release name."}, false, 5, false},
			// BlockedIndexerSpecification is a temporary rejection.
			{GUIDHeldBack, 4, "DrunkenSlug (Prowlarr)", "Dune.Part.Two.2024.1080p.WEB-DL.H264-FLUX", "WEBDL-1080p", 3, 1080, 6_442_450_944, "usenet", false, []string{"Indexer DrunkenSlug (Prowlarr) is blocked till 12/4/2026 9:00:00 PM due to failures, cannot grab release."}, true, 0, true},
		}
	}
	return []release{
		{fmt.Sprintf("https://nzbgeek.info/geekseek.php?guid=m%d", movieID), 1, "NZBgeek (Prowlarr)", title + ".1080p.BluRay.x264-GROUP", "Bluray-1080p", 7, 1080, 12_884_901_888, "usenet", true, nil, true, 0, false},
	}
}

func (s *Server) releases(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(w, r.URL.Query(), "movieId", 0)
	if !ok {
		return
	}
	m := s.find(id)
	if m == nil {
		// MovieSearch's lookup throws; the catch-all answers 500 with its
		// message.
		arrfake.ClientError(w, http.StatusInternalServerError, clientException, "Movie with ID "+strconv.Itoa(id)+" does not exist")
		return
	}
	if !s.WaitSearch(r.Context()) {
		return
	}
	out := []map[string]any{}
	s.mu.Lock()
	for i, rel := range seedReleases(id, m["title"].(string)) {
		if !s.evicted[rel.guid] {
			s.cache[strconv.Itoa(rel.indexerID)+"/"+rel.guid] = true
			s.unmapped[strconv.Itoa(rel.indexerID)+"/"+rel.guid] = rel.unmapped()
		}
		out = append(out, s.releaseResource(i+1, id, m, rel))
	}
	s.mu.Unlock()
	arrfake.WriteJSON(w, http.StatusOK, out)
}

// releaseResource renders a release as Radarr does for an indexer synced
// from Prowlarr: the download link goes through Prowlarr with its key.
func (s *Server) releaseResource(n, movieID int, m map[string]any, rel release) map[string]any {
	dl := fmt.Sprintf("http://prowlarr:9696/%d/download?apikey=%s&link=%s", rel.indexerID, ProwlarrKey, url.QueryEscape(rel.guid))
	rejections := rel.rejections
	if rejections == nil {
		rejections = []string{}
	}
	out := map[string]any{
		"id": n, "guid": rel.guid, "quality": quality(rel.quality, rel.qid, rel.res, "bluray"), "customFormats": []any{},
		"customFormatScore": 0, "qualityWeight": 100 * rel.qid, "age": 30 * n, "ageHours": float64(720 * n), "ageMinutes": float64(43200 * n),
		"size": rel.size, "indexerId": rel.indexerID, "indexer": rel.indexer, "releaseGroup": "GROUP", "releaseHash": "",
		"title": rel.title, "sceneSource": false, "movieTitles": []string{m["title"].(string)}, "languages": english,
		"mappedMovieId": movieID, "approved": rel.approved, "temporarilyRejected": rel.temporary && len(rel.rejections) > 0, "rejected": !rel.temporary && len(rel.rejections) > 0,
		"tmdbId": m["tmdbId"], "imdbId": 0, "rejections": rejections,
		"publishDate": s.now.AddDate(0, 0, -30*n).Format(time.RFC3339), "commentUrl": "", "downloadUrl": dl,
		"infoUrl": rel.guid, "movieRequested": true, "downloadAllowed": rel.downloadAllowed, "releaseWeight": n,
		"edition": "", "protocol": rel.protocol, "indexerFlags": []string{},
	}
	// ReleaseResource: movieId is only sent by a client (null, so left
	// out), and mappedMovieId is the movie Radarr matched: none for a
	// release it could not identify.
	if rel.unmapped() {
		delete(out, "mappedMovieId")
	}
	if rel.protocol == "torrent" {
		out["magnetUrl"] = "magnet:?xt=urn:btih:" + fmt.Sprintf("%040d", n) + "&tr=" + url.QueryEscape("https://tracker.example/announce/"+TrackerPasskey)
		out["infoHash"] = fmt.Sprintf("%040d", n)
		out["seeders"] = rel.seeders
		out["leechers"] = rel.seeders / 3
	}
	return out
}

// grab is POST /release: like Radarr it looks the release up in the cache
// of recent searches by indexer id and GUID (404 when absent) and answers
// 409 when fetching it from the indexer fails.
func (s *Server) grab(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	guid, _ := body["guid"].(string)
	ix, _ := body["indexerId"].(float64)
	if guid == "" || ix <= 0 {
		var fs []arrfake.Failure
		if ix <= 0 {
			fs = append(fs, arrfake.Failure{Property: "IndexerId", Message: "'Indexer Id' must be greater than '0'.", Attempted: ix})
		}
		if guid == "" {
			fs = append(fs, arrfake.Failure{Property: "Guid", Message: "'Guid' must not be empty.", Attempted: ""})
		}
		arrfake.ValidationFailed(w, fs...)
		return
	}
	mid, _ := body["movieId"].(float64)
	movieGiven := mid > 0 && s.find(int(mid)) != nil // before s.mu: find takes it
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.cache[strconv.Itoa(int(ix))+"/"+guid] {
		arrfake.ClientError(w, http.StatusNotFound, clientException, "Couldn't find requested release in cache, try searching again")
		return
	}
	// DownloadRelease: a release Radarr could not match needs the movie
	// from the client.
	if s.unmapped[strconv.Itoa(int(ix))+"/"+guid] && !movieGiven {
		arrfake.ClientError(w, http.StatusNotFound, clientException, "Unable to find matching movie, will need to be manually provided")
		return
	}
	if s.refused[guid] {
		arrfake.ClientError(w, http.StatusConflict, clientException, "Getting release from indexer failed")
		return
	}
	s.grabs = append(s.grabs, body)
	arrfake.WriteJSON(w, http.StatusOK, body)
}
