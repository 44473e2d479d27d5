package fakeradarr_test

import (
	"testing"

	"github.com/toolgate/toolgate/services/arr/arrapi/arrfake/arrfaketest"
	"github.com/toolgate/toolgate/services/arr/radarr/fakeradarr"
)

func TestStatusCodes(t *testing.T) {
	const key = "fake-radarr-key"
	grab := `{"guid":"` + fakeradarr.GUIDApproved + `","indexerId":1}`
	arrfaketest.Check(t, fakeradarr.NewDemo(key), []arrfaketest.Case{
		{Name: "no key", Method: "GET", Target: "/api/v3/system/status", Status: 401},
		{Name: "wrong key", Method: "GET", Target: "/api/v3/system/status", Key: "wrong", Status: 401},
		{Name: "key header", Method: "GET", Target: "/api/v3/system/status", Key: key, Status: 200},
		{Name: "key parameter", Method: "GET", Target: "/api/v3/system/status?apikey=" + key, Status: 200},
		{Name: "unknown movie", Method: "GET", Target: "/api/v3/movie/99", Key: key, Status: 404},
		{Name: "unknown command", Method: "GET", Target: "/api/v3/command/5", Key: key, Status: 404},
		{Name: "grab before search", Method: "POST", Target: "/api/v3/release", Key: key, Body: grab, Status: 404}, // not in the cache
		{Name: "unknown command throws", Method: "POST", Target: "/api/v3/command", Key: key, Body: `{"name":"DeleteEverything"}`, Status: 500, Contains: "Sequence contains no matching element"},
		{Name: "movie search is created", Method: "POST", Target: "/api/v3/command", Key: key, Body: `{"name":"MoviesSearch","movieIds":[2]}`, Status: 201},
	})
}
