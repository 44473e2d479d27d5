package tools_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/config"
	"github.com/toolgate/toolgate/internal/fakeclock"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
	"github.com/toolgate/toolgate/services/tuliprox/client"
	"github.com/toolgate/toolgate/services/tuliprox/faketuliprox"
	"github.com/toolgate/toolgate/services/tuliprox/tools"
)

var t0 = time.Date(2026, 12, 3, 12, 30, 0, 0, time.UTC)

// secrets are what no answer may hold: every planted secret and every
// demo password.
var secrets = append([]string{faketuliprox.DemoAdminPassword, faketuliprox.DemoAssistantPassword,
	faketuliprox.DemoViewerPassword, faketuliprox.DemoOperatorPassword}, faketuliprox.AllSecrets...)

type env struct {
	fake  *faketuliprox.Fake
	clock *fakeclock.Clock
	svc   *tools.Service
	set   client.Settings
}

func writeFile(t testing.TB, name, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(v), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// start serves a fake Tuliprox and the tuliprox tools over it, signed in
// as user.
func start(t testing.TB, o faketuliprox.Options, user, pass string, writes bool) *env {
	t.Helper()
	e := &env{clock: fakeclock.New(t0)}
	o.Now = e.clock.Now
	e.fake = faketuliprox.New(o)
	srv := httptest.NewServer(e.fake)
	t.Cleanup(srv.Close)
	lookup := map[string]string{"TULIPROX_URL": srv.URL + o.WebPath, "TULIPROX_ALLOW_HTTP": "true", "TULIPROX_TIMEOUT": "5s",
		"TULIPROX_USERNAME_FILE": writeFile(t, "user", user), "TULIPROX_PASSWORD_FILE": writeFile(t, "pass", pass)}
	if writes {
		lookup["TULIPROX_ALLOW_WRITES"] = "true"
	}
	set, err := client.LoadSettings(config.New(func(k string) (string, bool) { v, ok := lookup[k]; return v, ok }))
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewFromSettings(set, client.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	e.set, e.svc = set, tools.New(set, c, nil)
	return e
}

// admin is the fake with every permission.
func admin(t testing.TB, o faketuliprox.Options) *env {
	return start(t, o, faketuliprox.DemoAdmin, faketuliprox.DemoAdminPassword, false)
}

func (e *env) service(t testing.TB) *toolkittest.Service {
	t.Helper()
	return toolkittest.Start(t, "tuliprox", e.svc.Tools())
}
