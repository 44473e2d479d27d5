package toolkit_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
)

func TestNewUpstreamBuildsTheClientFromSettings(t *testing.T) {
	var gotAuth, gotAgent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotAgent = r.Header.Get("Authorization"), r.Header.Get("User-Agent")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("ha-t0ken-31f0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	app := upstream.App{Prefix: "HA", Name: "Home Assistant", Credential: upstream.Token}
	lookup := func(m map[string]string) *config.Loader {
		return config.New(func(k string) (string, bool) { v, ok := m[k]; return v, ok })
	}

	s, c, err := toolkit.NewUpstream(lookup(map[string]string{"HA_URL": srv.URL, "HA_ALLOW_HTTP": "true", "HA_TOKEN_FILE": token}), app,
		func(c *upstream.Config) { c.UserAgent = "toolgate-ha" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := c.GetJSON(t.Context(), "/api/", nil, &out); err != nil || out["ok"] != true {
		t.Fatalf("GetJSON: %v %v", err, out)
	}
	if gotAuth != "Bearer ha-t0ken-31f0" || gotAgent != "toolgate-ha" || string(s.Secret) != "ha-t0ken-31f0" {
		t.Errorf("request headers %q %q", gotAuth, gotAgent)
	}

	_, _, err = toolkit.NewUpstream(lookup(map[string]string{"HA_URL": srv.URL, "HA_TIMEOUT": "soon-77"}), app, nil, nil)
	for _, want := range []string{"HA_ALLOW_HTTP", "HA_TOKEN_FILE", "HA_TIMEOUT"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "soon-77") {
		t.Errorf("error echoes a value: %v", err)
	}
}
