package redact

import (
	"encoding/json"
	"fmt"
	"testing"
)

// seriesList builds a Sonarr-like GET /api/v3/series result of about
// 50 KB: no secrets, but many URLs with query strings, colons and '='.
func seriesList(tb testing.TB) []byte {
	tb.Helper()
	var list []any
	for i := 1; i <= 21; i++ {
		var seasons []any
		for s := 0; s <= 3; s++ {
			seasons = append(seasons, map[string]any{
				"seasonNumber": s, "monitored": s > 0,
				"statistics": map[string]any{
					"episodeFileCount": 10, "episodeCount": 10, "totalEpisodeCount": 10,
					"sizeOnDisk": 12345678901, "releaseGroups": []any{"NTb", "FLUX"},
					"percentOfEpisodes": 100.0,
				},
			})
		}
		list = append(list, map[string]any{
			"id":        i,
			"title":     fmt.Sprintf("Series Number %d: The Return", i),
			"sortTitle": fmt.Sprintf("series number %d return", i),
			"status":    "continuing",
			"ended":     false,
			"overview":  "A detective in a futuristic solar system investigates a missing woman; her case leads to a conspiracy that threatens peace (and the crew of the Rocinante) at 12:30.",
			"network":   "Prime Video",
			"airTime":   "21:00",
			"images": []any{
				map[string]any{"coverType": "banner", "url": fmt.Sprintf("/MediaCover/%d/banner.jpg?lastWrite=638412345678901234", i), "remoteUrl": "https://artworks.thetvdb.com/banners/graphical/280619-g.jpg"},
				map[string]any{"coverType": "poster", "url": fmt.Sprintf("/MediaCover/%d/poster.jpg?lastWrite=638412345678901234", i), "remoteUrl": "https://artworks.thetvdb.com/banners/posters/280619-1.jpg"},
				map[string]any{"coverType": "fanart", "url": fmt.Sprintf("/MediaCover/%d/fanart.jpg?lastWrite=638412345678901234", i), "remoteUrl": "https://artworks.thetvdb.com/banners/fanart/original/280619-1.jpg"},
			},
			"originalLanguage":  map[string]any{"id": 1, "name": "English"},
			"seasons":           seasons,
			"year":              2015,
			"path":              fmt.Sprintf("/tv/Series Number %d", i),
			"qualityProfileId":  1,
			"seasonFolder":      true,
			"monitored":         true,
			"monitorNewItems":   "all",
			"useSceneNumbering": false,
			"runtime":           45,
			"tvdbId":            280619 + i,
			"tvRageId":          0,
			"tvMazeId":          1825,
			"firstAired":        "2015-12-14T00:00:00Z",
			"lastAired":         "2022-01-14T00:00:00Z",
			"seriesType":        "standard",
			"cleanTitle":        fmt.Sprintf("seriesnumber%dthereturn", i),
			"imdbId":            "tt3230854",
			"titleSlug":         fmt.Sprintf("series-number-%d", i),
			"rootFolderPath":    "/tv/",
			"certification":     "TV-14",
			"genres":            []any{"Drama", "Mystery", "Science Fiction"},
			"tags":              []any{1, 4},
			"added":             "2021-03-01T18:22:04Z",
			"ratings":           map[string]any{"votes": 1234, "value": 8.5},
			"statistics": map[string]any{
				"seasonCount": 3, "episodeFileCount": 30, "episodeCount": 30,
				"totalEpisodeCount": 40, "sizeOnDisk": 98765432109, "percentOfEpisodes": 100.0,
			},
			"languageProfileId": 1,
		})
	}
	raw, err := json.Marshal(list)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

func TestBenchmarkDocument(t *testing.T) {
	raw := seriesList(t)
	if len(raw) < 45_000 || len(raw) > 60_000 {
		t.Fatalf("benchmark document is %d bytes, want about 50 KB", len(raw))
	}
	r := New([]byte("0123456789abcdef0123456789abcdef"))
	out, err := r.JSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(raw, &a)
	_ = json.Unmarshal(out, &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("a document without secrets changed")
	}
}

func BenchmarkValue(b *testing.B) {
	raw := seriesList(b)
	var doc any
	if err := unmarshalNumber(raw, &doc); err != nil {
		b.Fatal(err)
	}
	r := New([]byte("0123456789abcdef0123456789abcdef"), []byte("gateway-service-token-xyz"))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Value(doc)
	}
}

// BenchmarkJSON is the full decode-redact-encode path for raw results.
func BenchmarkJSON(b *testing.B) {
	raw := seriesList(b)
	r := New([]byte("0123456789abcdef0123456789abcdef"), []byte("gateway-service-token-xyz"))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.JSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}
