package fakefrigate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The fake answers like Frigate on port 8971: login sets the cookie, a bad
// password is 401, protected endpoints need the session, version is text.
func TestFakeAuth(t *testing.T) {
	srv := httptest.NewServer(Demo())
	t.Cleanup(srv.Close)
	login := func(pw string) *http.Response {
		res, err := http.Post(srv.URL+"/api/login", "application/json", strings.NewReader(`{"user":"`+DemoUser+`","password":"`+pw+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := login("wrong"); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bad password: %d", res.StatusCode)
	}
	res := login(DemoPassword)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if res.StatusCode != http.StatusOK || cookie == nil {
		t.Fatalf("login: %d, cookie %v", res.StatusCode, cookie)
	}
	get := func(path string, c *http.Cookie) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if c != nil {
			req.AddCookie(c)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	tests := []struct {
		path   string
		cookie *http.Cookie
		status int
		ctype  string
	}{
		{"/api/version", nil, 200, "text/plain"},
		{"/api/", nil, 200, "text/plain"},
		{"/api/stats", nil, 401, "application/json"},
		{"/api/stats", cookie, 200, "application/json"},
		{"/api/events?limit=2", cookie, 200, "application/json"},
		{"/api/front_door/latest.jpg?height=90", cookie, 200, "image/jpeg"},
		{"/api/attic/latest.jpg", cookie, 404, "application/json"},
		{"/api/events/nosuch", cookie, 404, "application/json"},
	}
	for _, tc := range tests {
		res := get(tc.path, tc.cookie)
		if res.StatusCode != tc.status || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("%s: %d %s", tc.path, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
}
