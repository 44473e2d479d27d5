package arrapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
)

type testRelease struct {
	ReleaseRecord
	Season int
}

func rel(guid string, indexer int, approved bool) testRelease {
	return testRelease{ReleaseRecord: ReleaseRecord{GUID: guid, IndexerID: indexer, Title: guid, Size: 3 << 30, Approved: approved, DownloadAllowed: true, Age: 4}}
}

// A release shows its age and peers in a search and not in a grab
// preview (they change between two searches), its size as Sized, its
// GUID only in public form, and rejections as a list even when there are
// none.
func TestReleaseView(t *testing.T) {
	seeders := 12
	r := rel("https://tracker/dl/1?passkey=0123456789abcdef0123", 2, true).ReleaseRecord
	r.Seeders, r.Title = &seeders, "Some.Release.1080p"
	search, preview := r.View(true), r.View(false)
	if search.AgeDays == nil || *search.AgeDays != 4 || search.Seeders == nil || *search.Seeders != 12 {
		t.Errorf("search view %+v", search)
	}
	if preview.AgeDays != nil || preview.Seeders != nil || preview.Leechers != nil {
		t.Errorf("preview view holds volatile values: %+v", preview)
	}
	if search.Size != "3.0 GiB" || search.SizeBytes != 3<<30 || !strings.HasPrefix(search.GUID, "sha256:") || search.Rejections == nil {
		t.Errorf("view %+v", search)
	}
	b, _ := json.Marshal(preview)
	if strings.Contains(string(b), "passkey") || !strings.Contains(string(b), `"rejections":[]`) {
		t.Errorf("json %s", b)
	}
}

// A forced grab says why the application refused the release; without
// force the preview is refused and says how to ask anyway.
func TestOverride(t *testing.T) {
	cases := []struct {
		name string
		r    ReleaseRecord
		why  string
	}{
		{"rejected", ReleaseRecord{Rejected: true, Rejections: []string{"CAM is not wanted", "too small"}, DownloadAllowed: true}, "Sonarr rejected this release (CAM is not wanted; too small)"},
		{"not allowed only", ReleaseRecord{Approved: true, DownloadAllowed: false}, "Sonarr does not allow its download (download_allowed=false)"},
		{"both", ReleaseRecord{Rejected: true, Rejections: []string{"Unknown Movie"}}, "Sonarr rejected this release (Unknown Movie); Sonarr does not allow its download (download_allowed=false)"},
		{"not approved, no reason", ReleaseRecord{DownloadAllowed: true}, "Sonarr did not approve this release"},
	}
	for _, c := range cases {
		if got := c.r.Refusal("Sonarr"); got != c.why {
			t.Errorf("%s: %q, want %q", c.name, got, c.why)
		}
		_, err := c.r.Override("Sonarr", true, false)
		if toolerr.CodeOf(err) != toolerr.Forbidden || !strings.Contains(err.Error(), c.why+". Nothing was grabbed") || !strings.Contains(err.Error(), "force: true") {
			t.Errorf("%s unforced: %v", c.name, err)
		}
		w, err := c.r.Override("Sonarr", true, true)
		if err != nil || w != c.why+"; grabbing anyway because force is set." {
			t.Errorf("%s forced: %q %v", c.name, w, err)
		}
	}
	if w, err := (ReleaseRecord{Rejected: true}).Override("Radarr", false, false); w != "" || err != nil {
		t.Errorf("a release that needs no force: %q %v", w, err)
	}
}

// A search answer counts every release and the approved ones and shows
// the first limit; a grab finds its release by public GUID and indexer.
func TestReleaseResultAndFind(t *testing.T) {
	passkey := "https://tracker/dl/2?passkey=0123456789abcdef0123"
	rels := []testRelease{rel("a", 1, true), rel(passkey, 2, false), rel("c", 1, true)}
	got := ReleaseResult(rels, 2, func(r testRelease) string { return r.Title }, "grab one")
	if got["total"] != 3 || got["approved"] != 2 || got["returned"] != 2 || got["next"] != "grab one" || len(got["releases"].([]string)) != 2 {
		t.Errorf("result %v", got)
	}
	if r, ok := FindRelease(rels, PublicGUID(passkey), 2); !ok || r.GUID != passkey {
		t.Errorf("public GUID: %v %v", r, ok)
	}
	for _, c := range []struct {
		guid    string
		indexer int
	}{{"a", 2}, {passkey, 2}, {"nope", 1}} {
		if _, ok := FindRelease(rels, c.guid, c.indexer); ok {
			t.Errorf("found %s on %d", c.guid, c.indexer)
		}
	}
}

// The parts of the write tools both applications share.
func TestSharedWriteAnswers(t *testing.T) {
	c, err := New(Config{App: "radarr", URL: "http://127.0.0.1:1", APIKey: []byte(testKey), AllowHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Started(Command{ID: 7, Status: "queued"}, "MoviesSearch"); got != (CommandStarted{CommandID: 7, Command: "MoviesSearch", Status: "queued", Next: "follow it with radarr_command_status and radarr_queue"}) {
		t.Errorf("started %+v", got)
	}
	if got := c.GrabbedBy(ReleaseView{Title: "T", Indexer: "I"}, "promise"); got != (Grabbed{Grabbed: true, Title: "T", Indexer: "I", Next: "follow the download with radarr_queue", Note: "promise"}) {
		t.Errorf("grabbed %+v", got)
	}
	if err := c.NotOffered("Dune", "radarr_release_search"); toolerr.CodeOf(err) != toolerr.NotFound || !strings.Contains(err.Error(), "a fresh search of Dune does not offer this release") {
		t.Errorf("not offered: %v", err)
	}
	if got := SearchNote("Radarr", "movie", 2, 0); got != "Radarr will search its indexers for these 2 movie(s) and grab what its quality profile accepts. No monitoring is changed and no other command runs." {
		t.Errorf("note %q", got)
	}
	if got := SearchNote("Sonarr", "episode", 1, 3); !strings.Contains(got, " 3 requested episode(s) already have a file and are left out.") {
		t.Errorf("note %q", got)
	}
	f := FileRecord{ID: 4, RelativePath: "a.mkv", Size: 1 << 30, Languages: []Language{{Name: "English"}}}.View()
	if f.Size != "1.0 GiB" || f.SizeBytes != 1<<30 || f.Languages[0] != "English" || f.DateAdded != nil {
		t.Errorf("file %+v", f)
	}
}
