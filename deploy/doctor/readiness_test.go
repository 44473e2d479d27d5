package main

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
)

// Readiness is asked of the running tool services only: not the core, the
// fakes, SearXNG, a stopped container or another image.
func TestReadinessTargets(t *testing.T) {
	t.Parallel()
	withImage := func(c container.InspectResponse, image string, running bool) container.InspectResponse {
		c.ID = c.Config.Labels["com.docker.compose.service"] + "-id"
		c.Config.Image = image
		c.State.Running = running
		return c
	}
	s := Stack{Containers: []container.InspectResponse{
		withImage(good("gateway", "clients"), "toolgate/gateway:local", true),
		withImage(goodPolicy(), "toolgate/policy:local", true),
		withImage(good("web", "tools"), "toolgate/web:local", true),
		withImage(good("arr-demo", "tools"), "toolgate/arr:local", true),
		withImage(good("fakes", "upstream"), "toolgate/fakes:local", true),
		withImage(good("searxng", "egress"), "searxng/searxng:latest", true),
		withImage(good("frigate", "tools"), "toolgate/frigate:local", false),
		withImage(good("intruder", "tools"), "busybox", true),
	}}
	got := slices.Sorted(maps.Keys(ReadinessTargets(s)))
	if want := []string{"arr-demo", "web"}; !slices.Equal(got, want) {
		t.Errorf("targets %v, want %v", got, want)
	}
}

func TestPrintReadiness(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	printReadiness(&b, []Readiness{
		{Service: "web", Ready: true, Message: "ready"},
		{Service: "arr", Message: "Sonarr host sonarr.lan cannot be resolved — check SONARR_URL"},
	})
	out := b.String()
	arr, web := strings.Index(out, "arr "), strings.Index(out, "web ")
	switch {
	case arr < 0 || web < arr:
		t.Errorf("not one sorted line per service:\n%s", out)
	case !strings.Contains(out, "Sonarr host sonarr.lan cannot be resolved — check SONARR_URL"),
		!strings.Contains(out[web:], "OK"),
		!strings.Contains(out, "2 services, 1 not ready"):
		t.Errorf("readiness table:\n%s", out)
	}
}
