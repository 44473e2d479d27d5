package arrapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake"
)

// The error bodies of Sonarr.Http's pipeline (written by arrfake as the
// source writes them) give the model Servarr's own reason, framed, and
// never the exception's description with its stack trace.
func TestServarrReasonsReachTheMessage(t *testing.T) {
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		code   toolerr.Code
		suffix string
	}{
		{"validation failures", func(w http.ResponseWriter) {
			arrfake.ValidationFailed(w,
				arrfake.Failure{Property: "IndexerId", Message: "'Indexer Id' must be greater than '0'.", Attempted: 0},
				arrfake.Failure{Property: "Guid", Message: "'Guid' must not be empty.", Attempted: ""})
		}, toolerr.InvalidArgument, `. Sonarr said: "'Indexer Id' must be greater than '0'.; 'Guid' must not be empty."`},
		{"an ApiException loses its status prefix", func(w http.ResponseWriter) {
			arrfake.APIError(w, http.StatusBadRequest, "seriesId or episodeIds must be provided")
		}, toolerr.InvalidArgument, `. Sonarr said: "seriesId or episodeIds must be provided"`},
		{"a client exception without its description", func(w http.ResponseWriter) {
			arrfake.ClientError(w, http.StatusConflict, "NzbDrone.Core.Exceptions.NzbDroneClientException", "Getting release from indexer failed")
		}, toolerr.InvalidArgument, `. Sonarr said: "Getting release from indexer failed"`},
		{"model binding", func(w http.ResponseWriter) { arrfake.InvalidValue(w, "page", "x") }, toolerr.InvalidArgument,
			`. Sonarr said: "page: The value 'x' is not valid."`},
		{"NotFound() says nothing more", func(w http.ResponseWriter) { arrfake.NotFound(w) }, toolerr.NotFound, "has no such item (HTTP 404)"},
		{"an unexpected exception", func(w http.ResponseWriter) {
			arrfake.ClientError(w, http.StatusInternalServerError, "System.InvalidOperationException", "Sequence contains no matching element")
		}, toolerr.UpstreamUnavailable, `. Sonarr said: "Sequence contains no matching element"`},
		{"the API key in a message", func(w http.ResponseWriter) {
			arrfake.APIError(w, http.StatusBadRequest, "bad key "+testKey)
		}, toolerr.InvalidArgument, `. Sonarr said: "bad key [REDACTED]"`},
		{"a proxy's HTML page", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("<html><h1>502 Bad Gateway</h1>nginx</html>"))
		}, toolerr.UpstreamUnavailable, "try again later"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { tc.answer(w) }))
			t.Cleanup(srv.Close)
			c, err := New(Config{App: "sonarr", URL: srv.URL, APIKey: []byte(testKey), AllowHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			err = c.Post(context.Background(), "/command", map[string]any{"name": "x"}, nil)
			msg := toolerr.MessageOf(err)
			if toolerr.CodeOf(err) != tc.code || !strings.HasSuffix(msg, tc.suffix) {
				t.Fatalf("%s: %q", toolerr.CodeOf(err), msg)
			}
			for _, leak := range []string{"   at ", "NzbDrone.", "traceId", "nginx", testKey, "BadRequest:"} {
				if strings.Contains(msg, leak) {
					t.Errorf("message %q shows %q", msg, leak)
				}
			}
		})
	}
}
