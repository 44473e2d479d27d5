package arrapi

import (
	"strings"
	"time"
)

// ReleaseRecord is the part of a ReleaseResource that Sonarr and Radarr
// share (Sonarr.Api.V3/Indexers/ReleaseResource.cs, Radarr's likewise);
// an app's release embeds it and adds what the release is of. Its links
// (downloadUrl, magnetUrl, infoUrl, commentUrl) are deliberately not
// decoded: they may carry indexer or Prowlarr keys.
type ReleaseRecord struct {
	GUID                string     `json:"guid"`
	IndexerID           int        `json:"indexerId"`
	Indexer             string     `json:"indexer"`
	Title               string     `json:"title"`
	Size                int64      `json:"size"`
	Age                 int        `json:"age"`
	PublishDate         *time.Time `json:"publishDate"`
	Quality             Quality    `json:"quality"`
	CustomFormatScore   int        `json:"customFormatScore"`
	Languages           []Language `json:"languages"`
	Protocol            string     `json:"protocol"`
	ReleaseGroup        string     `json:"releaseGroup"`
	Approved            bool       `json:"approved"`
	Rejected            bool       `json:"rejected"`
	TemporarilyRejected bool       `json:"temporarilyRejected"`
	Rejections          []string   `json:"rejections"`
	DownloadAllowed     bool       `json:"downloadAllowed"`
	Seeders             *int       `json:"seeders"`
	Leechers            *int       `json:"leechers"`
}

// Record returns r itself, so that generic code takes any app's release
// that embeds it.
func (r ReleaseRecord) Record() ReleaseRecord { return r }

// Release is any app's release: one that embeds ReleaseRecord.
type Release interface{ Record() ReleaseRecord }

// FindRelease returns the release of rels that guid (its GUID or public
// form, see MatchGUID) and indexerID name.
func FindRelease[R Release](rels []R, guid string, indexerID int) (R, bool) {
	for _, r := range rels {
		if rec := r.Record(); rec.IndexerID == indexerID && MatchGUID(guid, rec.GUID) {
			return r, true
		}
	}
	var none R
	return none, false
}

// ReleaseView is a release as the release search and grab tools of every
// app show it; an app's view embeds it and adds what the release covers.
type ReleaseView struct {
	GUID      string `json:"guid"`
	IndexerID int    `json:"indexer_id"`
	Indexer   string `json:"indexer"`
	Title     string `json:"title"`
	Sized
	Quality             string     `json:"quality"`
	CustomFormatScore   int        `json:"custom_format_score"`
	Languages           []string   `json:"languages,omitempty"`
	Protocol            string     `json:"protocol"`
	PublishDate         *time.Time `json:"publish_date,omitempty"`
	Approved            bool       `json:"approved"`
	Rejected            bool       `json:"rejected"`
	TemporarilyRejected bool       `json:"temporarily_rejected,omitempty"`
	Rejections          []string   `json:"rejections"`
	DownloadAllowed     bool       `json:"download_allowed"`
	// Only in search results: a grab preview must hold what stays put
	// between preview and confirm, and age and peers do not.
	AgeDays  *int `json:"age_days,omitempty"`
	Seeders  *int `json:"seeders,omitempty"`
	Leechers *int `json:"leechers,omitempty"`
}

// View is r as the tools show it, with its age and peers when volatile
// (search results) and without (grab previews). The GUID is its public
// form (PublicGUID).
func (r ReleaseRecord) View(volatile bool) ReleaseView {
	rej := r.Rejections
	if rej == nil {
		rej = []string{}
	}
	v := ReleaseView{
		GUID: PublicGUID(r.GUID), IndexerID: r.IndexerID, Indexer: r.Indexer, Title: r.Title, Sized: SizeOf(r.Size),
		Quality: r.Quality.Name(), CustomFormatScore: r.CustomFormatScore, Languages: LanguageNames(r.Languages),
		Protocol: r.Protocol, PublishDate: r.PublishDate, Approved: r.Approved, Rejected: r.Rejected,
		TemporarilyRejected: r.TemporarilyRejected, Rejections: rej, DownloadAllowed: r.DownloadAllowed,
	}
	if volatile {
		age := r.Age
		v.AgeDays, v.Seeders, v.Leechers = &age, r.Seeders, r.Leechers
	}
	return v
}

// NeedsForce reports whether a grab of r overrides the app's decision:
// the app did not approve it (any rejection, temporary ones included: a
// blocked indexer, a minimum age) or does not allow its download. Sonarr,
// Radarr and Prowlarr's ReleaseResource set approved only when a release
// has no rejection at all (DownloadDecision.Approved).
func (r ReleaseRecord) NeedsForce() bool { return r.Rejected || !r.Approved || !r.DownloadAllowed }

// Refusal says in the app's name (display, "Sonarr") why grabbing r
// overrides the app: its rejections, download_allowed=false, or, when it
// names neither, that it did not approve r.
func (r ReleaseRecord) Refusal(display string) string {
	var why []string
	if r.Rejected || len(r.Rejections) > 0 {
		s := display + " rejected this release"
		if r.TemporarilyRejected && !r.Rejected {
			s = display + " holds this release back for now"
		}
		if len(r.Rejections) > 0 {
			s += " (" + strings.Join(r.Rejections, "; ") + ")"
		}
		why = append(why, s)
	}
	if !r.DownloadAllowed {
		why = append(why, display+" does not allow its download (download_allowed=false)")
	}
	if len(why) == 0 {
		return display + " did not approve this release"
	}
	return strings.Join(why, "; ")
}

// ReleaseResult is the answer of the <app>_release_search tools: how many
// releases the search found and the app approved, and the first limit of
// them (the app's preferred first) as view shows them; next says how to
// grab one.
func ReleaseResult[R Release, V any](rels []R, limit int, view func(R) V, next string) map[string]any {
	out := make([]V, 0, min(len(rels), limit))
	approved := 0
	for _, r := range rels {
		if r.Record().Approved {
			approved++
		}
		if len(out) < limit {
			out = append(out, view(r))
		}
	}
	return map[string]any{"total": len(rels), "approved": approved, "returned": len(out), "releases": out, "next": next}
}

// FileRecord is the part of an EpisodeFileResource or MovieFileResource
// the tools show.
type FileRecord struct {
	ID           int        `json:"id"`
	RelativePath string     `json:"relativePath"`
	Size         int64      `json:"size"`
	DateAdded    *time.Time `json:"dateAdded"`
	ReleaseGroup string     `json:"releaseGroup"`
	Languages    []Language `json:"languages"`
	Quality      Quality    `json:"quality"`
	CutoffNotMet bool       `json:"qualityCutoffNotMet"`
}

// FileView is a media file as the tools of every app show it.
type FileView struct {
	ID           int    `json:"id"`
	RelativePath string `json:"relative_path"`
	Quality      string `json:"quality"`
	Sized
	Languages    []string   `json:"languages,omitempty"`
	ReleaseGroup string     `json:"release_group,omitempty"`
	DateAdded    *time.Time `json:"date_added,omitempty"`
	CutoffNotMet bool       `json:"quality_cutoff_not_met"`
}

// View is f as the tools show it.
func (f FileRecord) View() FileView {
	return FileView{ID: f.ID, RelativePath: f.RelativePath, Quality: f.Quality.Name(), Sized: SizeOf(f.Size),
		Languages: LanguageNames(f.Languages), ReleaseGroup: f.ReleaseGroup, DateAdded: f.DateAdded, CutoffNotMet: f.CutoffNotMet}
}
