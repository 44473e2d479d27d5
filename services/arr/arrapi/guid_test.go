package arrapi

import (
	"strings"
	"testing"
)

func TestPublicGUIDHidesKeys(t *testing.T) {
	cases := []struct {
		guid   string
		hidden bool
	}{
		{"tl-dune2-720p-cam", false},
		{"https://1337x.to/torrent/4242/Dune-Part-Two-1080p/", false},
		{"https://nzbgeek.info/geekseek.php?guid=abc", false},
		{"https://www.torrentleech.org/rss/download/7777/9f8e7d6c5b4a39281706SECRETpk/x.torrent", true},
		{"https://tracker.example/dl.php?id=1&passkey=abc", true},
		{"http://prowlarr:9696/1/download?apikey=abc&link=x", true},
		{"magnet:?xt=urn:btih:abc", true},
		{"https://user:pw@host.example/x", true},
	}
	for _, tc := range cases {
		got := PublicGUID(tc.guid)
		if hidden := strings.HasPrefix(got, "sha256:"); hidden != tc.hidden {
			t.Errorf("PublicGUID(%q) = %q", tc.guid, got)
		}
		if !MatchGUID(got, tc.guid) || MatchGUID(tc.guid+"x", tc.guid) || MatchGUID("", "") {
			t.Errorf("matchGUID for %q", tc.guid)
		}
		if tc.hidden && MatchGUID(tc.guid, tc.guid) {
			t.Errorf("a hidden GUID %q matched its raw form", tc.guid)
		}
	}
}
