package arrapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/internal/redact"
)

// Removed replaces a string that Scrub took out.
const Removed = "[removed: link may carry credentials]"

// droppedKeys are result members that are download or indexer links: a
// Prowlarr-proxied link carries Prowlarr's API key, a tracker link a
// passkey. They are never returned, whatever they hold.
var droppedKeys = map[string]bool{
	"downloadurl": true, "magneturl": true, "infourl": true, "commenturl": true,
	"link": true, "torrenturl": true, "nzburl": true,
}

// linkParams are query parameters that carry a credential in indexer and
// *arr links, beyond the names redact.IsSecretKey knows.
var linkParams = map[string]bool{
	"apikey": true, "api_key": true, "passkey": true, "key": true, "rsskey": true, "authkey": true,
	"torrent_pass": true, "pass": true, "pk": true, "uid": true, "sig": true, "signature": true,
	"token": true,
}

// Scrub returns a copy of v, a decoded JSON value (map[string]any, []any,
// strings, numbers …), without download links: members named downloadUrl,
// magnetUrl, infoUrl, commentUrl or link are dropped, and any other string
// that is a magnet: URI or a URL with credentials (see SensitiveLink) is
// replaced by Removed. Typed results should simply not declare such
// fields; Scrub is for values passed through generically.
func Scrub(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			if droppedKeys[strings.ToLower(k)] {
				continue
			}
			out[k] = Scrub(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = Scrub(val)
		}
		return out
	case string:
		if SensitiveLink(x) {
			return Removed
		}
	}
	return v
}

// SensitiveLink reports whether s is a magnet: URI or an absolute URL
// that carries a credential: userinfo, or a query parameter such as
// apikey, passkey, key or token.
func SensitiveLink(s string) bool {
	t := strings.TrimSpace(s)
	if len(t) >= 7 && strings.EqualFold(t[:7], "magnet:") {
		return true
	}
	i := strings.Index(t, "://")
	if i <= 0 {
		return false
	}
	u, err := url.Parse(t)
	if err != nil {
		// Unparseable but URL-shaped: keep it only if no '?' or '@'.
		return strings.ContainsAny(t, "?@")
	}
	if u.User != nil {
		return true
	}
	for name := range u.Query() {
		n := strings.ToLower(name)
		if linkParams[n] || redact.IsSecretKey(n) {
			return true
		}
	}
	return pathKey(u.Path)
}

// longToken matches 24 or more letters and digits without separators.
var longToken = regexp.MustCompile(`[A-Za-z0-9]{24,}`)

// pathKey reports whether a URL path has a key-like segment: some trackers
// put the passkey in the path, not the query (TorrentLeech RSS download
// links: /rss/download/<id>/<passkey>/<name>.torrent).
func pathKey(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		for _, m := range longToken.FindAllString(seg, -1) {
			if strings.ContainsAny(m, "0123456789") {
				return true
			}
		}
	}
	return false
}

// PublicGUID returns the form of a release GUID that may be shown: the
// GUID itself, or "sha256:<hex>" when it is a link with credentials (some
// indexers use the download link, passkey included, as GUID). Grab tools
// accept either form through MatchGUID.
func PublicGUID(guid string) string {
	if !SensitiveLink(guid) {
		return guid
	}
	sum := sha256.Sum256([]byte(guid))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// MatchGUID reports whether a GUID given by a client (as PublicGUID showed
// it) names the release with GUID actual.
func MatchGUID(given, actual string) bool {
	return given != "" && given == PublicGUID(actual)
}
