package fakeprowlarr

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

type release struct {
	title      string
	indexerID  int
	indexer    string
	protocol   string
	size       int64
	age        int
	categories []int
	seeders    int
	imdb, tmdb int
	tvdb       int
	infoURL    string
}

func seedReleases() []release {
	return []release{
		{"The Matrix 1999 1080p BluRay x264-GROUP", 1, "NZBgeek", "usenet", 9_663_676_416, 812, []int{2000, 2040}, 0, 133093, 603, 0, "https://nzbgeek.info/geekseek.php?guid=a1b2c3"},
		{"The Matrix 1999 2160p UHD BluRay x265-TERMiNAL", 2, "TorrentLeech", "torrent", 61_203_283_968, 400, []int{2000, 2045}, 54, 133093, 603, 0, "https://www.torrentleech.org/torrent/456?passkey=" + IndexerPasskey},
		{"The.Matrix.1999.720p.WEB-DL.DD5.1.H264", 3, "1337x", "torrent", 4_294_967_296, 1500, []int{2000, 2040}, 120, 133093, 603, 0, "https://1337x.to/torrent/123/The-Matrix-1999/"},
		{"Severance S02E01 1080p WEB H264-SuccessfulCrab", 1, "NZBgeek", "usenet", 3_221_225_472, 3, []int{5000, 5040}, 0, 0, 0, 371980, "https://nzbgeek.info/geekseek.php?guid=d4e5f6"},
		{"Severance S02 1080p ATVP WEB-DL DDP5.1 H.264-FLUX", 3, "1337x", "torrent", 32_212_254_720, 1, []int{5000, 5040}, 300, 0, 0, 371980, "https://1337x.to/torrent/789/Severance-S02/"},
	}
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	if !s.WaitSearch(r.Context()) {
		return
	}
	// ReleaseSearchService: an unknown type is a basic search; values
	// that do not bind are ASP.NET's 400; selected indexers that are all
	// unknown or disabled fail an interactive search; limit and offset page
	// each indexer's own answer, before the category filter and the
	// de-duplication.
	q := r.URL.Query()
	ids, bad := ints(q["indexerIds"])
	if bad != "" {
		arrfake.InvalidValue(w, "indexerIds", bad)
		return
	}
	cats, bad := ints(q["categories"])
	if bad != "" {
		arrfake.InvalidValue(w, "categories", bad)
		return
	}
	limit, err := arrfake.IntParam(q, "limit", 0)
	if err != nil {
		arrfake.InvalidValue(w, "limit", q.Get("limit"))
		return
	}
	offset, err := arrfake.IntParam(q, "offset", 0)
	if err != nil {
		arrfake.InvalidValue(w, "offset", q.Get("offset"))
		return
	}
	if len(ids) > 0 && !s.anyEnabled(ids) {
		arrfake.ClientError(w, http.StatusBadRequest, "NzbDrone.Core.Exceptions.NzbDroneClientException", "Search failed due to all selected indexers being unavailable")
		return
	}
	words := strings.Fields(strings.ToLower(q.Get("query")))
	var out []any
	seen := map[int]int{} // per indexer: matches so far
	for i, rel := range s.release {
		if len(ids) > 0 && !contains(ids, rel.indexerID) {
			continue
		}
		title := strings.ToLower(strings.NewReplacer(".", " ", "-", " ").Replace(rel.title))
		match := true
		for _, wd := range words {
			if !strings.Contains(title, wd) {
				match = false
			}
		}
		if !match {
			continue
		}
		n := seen[rel.indexerID]
		seen[rel.indexerID]++
		if n < offset || (limit > 0 && n >= offset+limit) {
			continue
		}
		if len(cats) > 0 && !overlaps(cats, rel.categories) {
			continue
		}
		out = append(out, s.resource(i+1, rel))
	}
	if out == nil {
		out = []any{}
	}
	arrfake.WriteJSON(w, http.StatusOK, out)
}

// resource renders a release as Prowlarr does: the download link is
// rewritten to Prowlarr itself with its API key, torrents carry a magnet
// link with a tracker passkey.
func (s *Server) resource(id int, rel release) map[string]any {
	link := "https://" + hostOf(rel.infoURL) + "/download/" + strconv.Itoa(id) + "?passkey=" + IndexerPasskey
	dl := fmt.Sprintf("%s/%d/download?apikey=%s&link=%s&file=%s", s.base, rel.indexerID, url.QueryEscape(s.key),
		url.QueryEscape(link), url.QueryEscape(rel.title))
	cats := make([]any, 0, len(rel.categories))
	for _, c := range rel.categories {
		cats = append(cats, map[string]any{"id": c, "name": categoryName(c), "subCategories": []any{}})
	}
	pub := started.Add(-time.Duration(rel.age) * 24 * time.Hour)
	m := map[string]any{
		"id": id, "guid": link, "age": rel.age, "ageHours": float64(rel.age * 24), "ageMinutes": float64(rel.age * 1440),
		"size": rel.size, "files": 1, "grabs": 10 + id, "indexerId": rel.indexerID, "indexer": rel.indexer,
		"title": rel.title, "sortTitle": strings.ToLower(rel.title), "imdbId": rel.imdb, "tmdbId": rel.tmdb, "tvdbId": rel.tvdb,
		"tvMazeId": 0, "publishDate": pub.Format(time.RFC3339), "commentUrl": rel.infoURL, "downloadUrl": dl,
		"infoUrl": rel.infoURL, "indexerFlags": []string{}, "categories": cats, "protocol": rel.protocol,
		"fileName": rel.title + ".nzb",
	}
	if rel.protocol == "torrent" {
		m["magnetUrl"] = "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&dn=" + url.QueryEscape(rel.title) +
			"&tr=" + url.QueryEscape("https://tracker.example/announce/"+IndexerPasskey)
		m["infoHash"] = "0123456789abcdef0123456789abcdef01234567"
		m["seeders"] = rel.seeders
		m["leechers"] = rel.seeders / 4
		m["fileName"] = rel.title + ".torrent"
	}
	return m
}

func categoryName(id int) string {
	switch id {
	case 2000:
		return "Movies"
	case 2040:
		return "Movies/HD"
	case 2045:
		return "Movies/UHD"
	case 5000:
		return "TV"
	case 5040:
		return "TV/HD"
	}
	return ""
}

func hostOf(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "indexer.example"
	}
	return u.Host
}

// ints reads a repeated integer parameter; bad is the first value that
// does not bind.
func ints(vs []string) (out []int, bad string) {
	for _, v := range vs {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, v
		}
		out = append(out, n)
	}
	return out, ""
}

// anyEnabled reports whether one of ids is an enabled indexer.
func (s *Server) anyEnabled(ids []int) bool {
	for _, ix := range s.indexerList() {
		id, _ := ix["id"].(int)
		if on, _ := ix["enable"].(bool); on && contains(ids, id) {
			return true
		}
	}
	return false
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func overlaps(want, have []int) bool {
	for _, w := range want {
		if contains(have, w) {
			return true
		}
	}
	return false
}
