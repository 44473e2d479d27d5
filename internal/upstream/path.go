package upstream

import (
	"net/url"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// target builds the absolute request URL from the base and an escaped path.
func (c *Client) target(p string, q url.Values) (string, error) {
	rel, err := cleanPath(p)
	if err != nil {
		return "", err
	}
	u := c.base
	u.RawPath = c.base.RawPath + "/" + rel
	u.Path, _ = url.PathUnescape(u.RawPath) // every segment was checked by cleanPath
	if len(c.baseQuery) == 0 {
		u.RawQuery = q.Encode()
	} else {
		merged := make(url.Values, len(c.baseQuery)+len(q))
		for k, vs := range c.baseQuery {
			merged[k] = append(merged[k], vs...)
		}
		for k, vs := range q {
			merged[k] = append(merged[k], vs...)
		}
		u.RawQuery = merged.Encode()
	}
	return u.String(), nil
}

// cleanPath checks an escaped request path and returns it without its
// leading slash. A trailing slash is kept (some APIs need it).
func cleanPath(p string) (string, error) {
	p = strings.TrimPrefix(p, "/")
	if strings.ContainsAny(p, "?#") {
		return "", toolerr.New(toolerr.InvalidArgument, "request path must not contain '?' or '#'; pass query parameters separately")
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if s == "" {
			if i == len(segs)-1 {
				continue
			}
			return "", toolerr.New(toolerr.InvalidArgument, "request path has an empty segment")
		}
		raw, err := url.PathUnescape(s)
		if err != nil {
			return "", toolerr.New(toolerr.InvalidArgument, "request path has a malformed escape")
		}
		if err := checkSegment(raw); err != nil {
			return "", err
		}
	}
	return p, nil
}

// Path joins segments into an escaped request path ("/a/b%2Fc"), escaping
// each with url.PathEscape, so a value such as "a/b" stays one segment. It
// refuses "", "." and ".." and segments with control characters (NUL, CR,
// LF, ...) with toolerr.InvalidArgument, so a value can never canonicalize
// onto another route.
func Path(segments ...string) (string, error) {
	if len(segments) == 0 {
		return "", toolerr.New(toolerr.InvalidArgument, "request path has no segments")
	}
	var b strings.Builder
	for _, s := range segments {
		if err := checkSegment(s); err != nil {
			return "", err
		}
		b.WriteByte('/')
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

func checkSegment(s string) error {
	switch {
	case s == "":
		return toolerr.New(toolerr.InvalidArgument, "path segment must not be empty")
	case s == "." || s == "..":
		return toolerr.New(toolerr.InvalidArgument, "path segment must not be %q", s)
	case hasCTL(s):
		return toolerr.New(toolerr.InvalidArgument, "path segment must not contain control characters")
	}
	return nil
}

// HeaderValue reports whether v may be sent as a header value: it rejects
// CR, LF, NUL and the other ASCII control characters except tab (which the
// HTTP grammar allows). Use it for any value that ends up in a header.
func HeaderValue(v string) error {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b != '\t' && (b < 0x20 || b == 0x7f) {
			return toolerr.New(toolerr.InvalidArgument, "header value must not contain control characters (CR, LF, NUL, ...)")
		}
	}
	return nil
}

func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == 0x7f {
			return true
		}
	}
	return false
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}
