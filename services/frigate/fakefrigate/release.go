package fakefrigate

// Release is the Frigate release the fake plays. The differences are the
// ones the frigate service meets, each read from blakeblackshear/frigate
// at the release's tag (frigate/api/*.py, frigate/embeddings/__init__.py,
// docker/main/rootfs/usr/local/nginx/conf/nginx.conf).
type Release string

// The releases the fake can play: the last patch release of each minor
// line, and the 0.18 beta.
const (
	// Release014 (v0.14.1) serves a Flask API: pictures are sized with
	// h (not height), a wrong password is 400, a 404 body is plain text,
	// and there is no semantic search (/events/search reaches the
	// /events/<id> route and answers 404 "Event not found"). No roles.
	Release014 Release = "0.14"
	// Release015 (v0.15.2) is the first FastAPI release: height, 401 for
	// a wrong password, semantic search. No roles.
	Release015 Release = "0.15"
	// Release016 (v0.16.4) adds the admin and viewer roles.
	Release016 Release = "0.16"
	// Release017 (v0.17.2) checks a role's cameras per request: an event
	// or a latest frame of a camera the role may not see is 403, event
	// lists silently leave such cameras out, and a non-admin asking for a
	// path that names no camera gets 403 (admin required).
	Release017 Release = "0.17"
	// Release018 (v0.18.0-beta1) serves an offline camera's latest frame
	// from its last preview, marked X-Frigate-Offline: true, matches
	// sub-labels case-insensitively, and answers /login with 404 when
	// authentication is disabled.
	Release018 Release = "0.18"
)

// Releases lists every release the fake can play, oldest first.
var Releases = []Release{Release014, Release015, Release016, Release017, Release018}

// Version is the text the release's GET /api/version answers: the
// release and the short commit of its tag, as Frigate's build writes it.
func (r Release) Version() string {
	switch r {
	case Release014:
		return "0.14.1-f4f3cfa"
	case Release015:
		return "0.15.2-3bda638"
	case Release016:
		return "0.16.4-4131252"
	case Release018:
		return "0.18.0-5f6043a"
	}
	return "0.17.2-3d4dd3a"
}

// flask: the 0.14 API (Flask, before the FastAPI rewrite in 0.15).
func (r Release) flask() bool { return r == Release014 }

// semanticSearch: /events/search exists (0.15 and later).
func (r Release) semanticSearch() bool { return r != Release014 }

// cameraRoles: per-camera role checks on single reads (0.17 and later).
func (r Release) cameraRoles() bool { return r == Release017 || r == Release018 }

// previewFallback: an offline camera's latest frame is its last preview
// frame, marked X-Frigate-Offline (0.18).
func (r Release) previewFallback() bool { return r == Release018 }

// foldedSubLabels: sub-label filters ignore case (0.18).
func (r Release) foldedSubLabels() bool { return r == Release018 }

// loginRefusedWhenAuthOff: POST /login answers 404 "Authentication is
// disabled" when auth.enabled is false (0.18).
func (r Release) loginRefusedWhenAuthOff() bool { return r == Release018 }
