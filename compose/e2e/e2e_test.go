//go:build e2e

// Package e2e runs the whole stack as a user would: ./install.sh --demo
// under a unique compose project, then a real MCP client from a container
// on the clients network, isolation checks, a root-filesystem write attempt
// and doctor. scripts/test.sh runs it when a Docker engine is present:
//
//	go test -tags e2e -count=1 ./compose/e2e/
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// repoRoot is where install.sh and compose.yaml live.
var repoRoot, _ = filepath.Abs("../..")

// probeImage is the probe built with the images under test; TestStack
// sets its tag (install.sh tags the images per compose project).
var probeImage string

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func TestStack(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker engine: ", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	project := fmt.Sprintf("tge2e%d", time.Now().UnixNano()%1e9)
	// install.sh tags the images with the project's name unless TOOLGATE_TAG
	// says otherwise; this run's images go again at the end.
	tag := envOr("TOOLGATE_TAG", project)
	probeImage = "toolgate/probe:" + tag
	if tag == project {
		t.Cleanup(func() {
			ids, _ := run(context.Background(), "docker", "image", "ls", "-q", "--filter", "reference=toolgate/*:"+tag)
			if ids := strings.Fields(ids); len(ids) > 0 {
				_, _ = run(context.Background(), "docker", append([]string{"image", "rm", "-f"}, ids...)...)
			}
		})
	}
	dir := t.TempDir()
	secrets, envFile := filepath.Join(dir, "secrets"), filepath.Join(dir, "env")
	compose := func(args ...string) []string {
		return append([]string{"compose", "--env-file", envFile, "--project-name", project, "--project-directory", repoRoot}, args...)
	}
	// Teardown runs even when a step fails: containers, networks, volumes.
	t.Cleanup(func() {
		out, err := run(context.Background(), "docker", compose("--profile", "*", "down", "--volumes", "--remove-orphans", "--timeout", "5")...)
		if err != nil {
			t.Logf("teardown: %v\n%s", err, out)
		}
		left, _ := run(context.Background(), "docker", "ps", "-aq", "--filter", "label=com.docker.compose.project="+project)
		nets, _ := run(context.Background(), "docker", "network", "ls", "-q", "--filter", "label=com.docker.compose.project="+project)
		if strings.TrimSpace(left+nets) != "" {
			t.Errorf("teardown left containers or networks behind: %q %q", left, nets)
		}
	})

	// A stand-in for the user's OpenWebUI container (created, not started:
	// install.sh only connects it to the clients network).
	owui := project + "-openwebui"
	if _, err := run(ctx, "docker", "create", "--name", owui, probeImage); err != nil {
		if _, err := run(ctx, "env", "TOOLGATE_TAG="+tag, filepath.Join(repoRoot, "scripts/images.sh"), "probe"); err != nil {
			t.Fatalf("build the probe image: %v", err)
		}
		if out, err := run(ctx, "docker", "create", "--name", owui, probeImage); err != nil {
			t.Fatalf("create the OpenWebUI stand-in: %v %s", err, out)
		}
	}
	t.Cleanup(func() { _, _ = run(context.Background(), "docker", "rm", "-f", owui) })
	// As on a host without Go (builder_test.go): the images are built inside
	// the Go image; the host's Go path is TestImagesForArm64's (and the
	// probe's above, when its image is missing).
	ensureCompose(ctx, t)
	noGo := withoutGo(t)
	install := func(args ...string) (string, error) {
		return runEnv(ctx, noGo, filepath.Join(repoRoot, "install.sh"), append([]string{"--demo", "--project", project, "--secrets", secrets, "--env-file", envFile, "--openwebui", owui}, args...)...)
	}

	// The approval page is published on the host's loopback, as a person
	// would reach it.
	approvalsAddr := freeLoopback(t)
	out, err := install("--approvals", approvalsAddr)
	if err != nil {
		logs, _ := run(context.Background(), "docker", compose("logs", "--no-color", "--tail", "30")...)
		t.Fatalf("install.sh --demo: %v\n%s\n--- logs\n%s", err, out, logs)
	}
	if !strings.Contains(out, "Console: http://"+approvalsAddr+"/ ") {
		t.Errorf("install.sh did not print the console's address:\n%s", out)
	}
	if !strings.Contains(out, "building inside "+builderImage(t)) {
		t.Errorf("install.sh did not build inside the Go image:\n%s", out)
	}
	printed := regexp.MustCompile(`(?m)^\s+(tg_[A-Za-z0-9_-]+)\s*$`).FindAllStringSubmatch(out, -1)
	if len(printed) != 2 {
		t.Fatalf("install.sh printed %d client tokens, want openwebui's and demo-admin's:\n%s", len(printed), out)
	}
	token, adminToken := printed[0][1], printed[1][1]
	if !strings.Contains(out, "http://gateway:8080/mcp") || !strings.Contains(out, "FORWARD_USER_INFO_HEADER_JWT_SECRET") {
		t.Errorf("install.sh did not print the MCP URL and OpenWebUI's settings:\n%s", out)
	}
	// The first token is OpenWebUI's: its end users come from the signed
	// user token, minted here as OpenWebUI mints it.
	jwtSecret, err := os.ReadFile(filepath.Join(secrets, "gateway", "user_jwt_secret"))
	if err != nil || len(strings.TrimSpace(string(jwtSecret))) < 32 {
		t.Fatalf("install.sh generated no user token secret: %v", err)
	}
	userJWT := func(email, role string) string {
		return mintOpenWebUI(strings.TrimSpace(string(jwtSecret)), email, role)
	}

	if nets, _ := run(ctx, "docker", "inspect", "-f", "{{range $k, $v := .NetworkSettings.Networks}}{{$k}} {{end}}", owui); !strings.Contains(nets, project+"_clients") {
		t.Errorf("install.sh did not connect the OpenWebUI container to the clients network: %q", nets)
	}

	// Every container but the gateway, by name and by address: none may
	// be reachable from the clients network.
	targets := []string{"arr:8000", "frigate:8000", "ersatztv:8000", "unraid:8000", "tower:8880", "tuliprox:8000", "tuliprox-app:8901", "sonarr:8989", "nvr:5000", "etv:8409", "searxng-demo:8080", "searxng:8080"}
	// The policy sidecar by every name and address a neighbour could try.
	policyURLs := []string{"http://policy:8181"}
	for svc, port := range map[string]string{"policy": "8181", "demo": "8000", "web": "8000", "arr-demo": "8000", "frigate-demo": "8000", "ersatztv-demo": "8000", "unraid-demo": "8000", "tuliprox-demo": "8000", "fakes": "8989"} {
		targets = append(targets, svc+":"+port)
		ips, err := run(ctx, "docker", "inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}", project+"-"+svc+"-1")
		if err != nil {
			t.Fatalf("inspect %s: %v %s", svc, err, ips)
		}
		for _, ip := range strings.Fields(ips) {
			targets = append(targets, ip+":"+port)
			if svc == "policy" {
				policyURLs = append(policyURLs, "http://"+ip+":"+port)
			}
		}
	}
	policyFlags := func(extra ...string) []string {
		for _, u := range policyURLs {
			extra = append(extra, "-policy", u)
		}
		return extra
	}
	// A value only a tool call's arguments carry: it must reach no log.
	planted := fmt.Sprintf("e2e-planted-SECRET-%d", time.Now().UnixNano())
	t.Run("MCP client on the clients network", func(t *testing.T) {
		out, err := run(ctx, "docker", append([]string{"run", "--rm", "--network", project + "_clients",
			"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65532",
			probeImage, "-url", "http://gateway:8080/mcp", "-token", token,
			"-user-jwt", userJWT("ann@example.org", "user"),
			"-unreachable", strings.Join(targets, ","),
			"-read", `demo_echo={"text":"` + planted + `"}`}, policyFlags(
			// One read per service, each answered by its fake upstream.
			"-read", "sonarr_series_list={}", "-read", "radarr_movie_list={}", "-read", "prowlarr_indexer_list={}",
			"-read", "frigate_list_cameras={}", "-read", "ersatztv_list_playouts={}", "-read", "tuliprox_list_playlist_sources={}",
			// Home Assistant's REST and its configuration directory, which
			// the demo shares between the fake and the service.
			"-read", `ha_entity_list={"domain":"lock"}`, "-read", `ha_yaml_list={"kind":"automation"}`,
			"-read", `ha_yaml_find_source={"query":"openweathermap"}`,
			"-read", `web_search={"query":"nimbus nas 3.2"}`,
			"-read", `web_fetch={"url":"http://searxng-demo:8080/pages/nimbus-3-2-released"}`)...)...)
		t.Logf("probe:\n%s", out)
		if err != nil || !strings.Contains(out, "\nPASS") {
			// What the gateway saw of each service explains a missing tool.
			logs, _ := run(context.Background(), "docker", compose("logs", "--no-color", "--tail", "40", "gateway")...)
			t.Fatalf("probe failed: %v\n--- gateway log\n%s", err, logs)
		}
	})

	t.Run("the demo's admin token reads Unraid without an end user", func(t *testing.T) {
		out, err := run(ctx, "docker", "run", "--rm", "--network", project+"_clients",
			"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65532",
			probeImage, "-url", "http://gateway:8080/mcp/unraid", "-token", adminToken, "-demo=false",
			"-read", "unraid_system_overview={}")
		t.Logf("probe:\n%s", strings.ReplaceAll(out, adminToken, "<demo-admin token>"))
		if err != nil || !strings.Contains(out, "\nPASS") {
			t.Fatalf("probe failed: %v", err)
		}
	})

	t.Run("a client in group nas reads Unraid", func(t *testing.T) {
		// The shipped policy gives unraid only to admins and the nas group:
		// add a nas client as an operator would; the running gateway takes
		// it in from its first request, nothing restarted.
		out, err := run(ctx, filepath.Join(repoRoot, "compose", ".build", "bin", "gateway"), "token", "e2e-nas", "nas")
		if err != nil {
			t.Fatalf("gateway token: %v %s", err, out)
		}
		var nasToken, line string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "sha256:") {
				line = l
			} else if _, after, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(l, "token ") {
				nasToken = strings.TrimSpace(after)
			}
		}
		if line == "" || nasToken == "" {
			t.Fatalf("gateway token printed no token: %s", out)
		}
		f, err := os.OpenFile(filepath.Join(secrets, "gateway", "client_tokens"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(line + "\n")
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		out, err = run(ctx, "docker", "run", "--rm", "--network", project+"_clients",
			"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65532",
			probeImage, "-url", "http://gateway:8080/mcp/unraid", "-token", nasToken, "-demo=false",
			"-read", "unraid_system_overview={}", "-read", `unraid_container_logs={"container":"nextcloud","lines":3}`)
		t.Logf("probe:\n%s", strings.ReplaceAll(out, nasToken, "<nas token>"))
		if err != nil || !strings.Contains(out, "\nPASS") {
			t.Fatalf("probe failed: %v", err)
		}
	})

	t.Run("OpenWebUI-style client: signed user, OpenAPI write approved on the page", func(t *testing.T) {
		approveOnThePage(ctx, t, project, "http://"+approvalsAddr, token, userJWT("ann@example.org", "admin"), filepath.Join(secrets, "gateway", "admin_token"))
	})

	t.Run("the policy sidecar refuses its neighbours", func(t *testing.T) {
		// A compromised tool service sits on tools; the gateway's own network
		// namespace reaches the sidecar, and even its token may only ask for
		// decisions.
		policyToken, err := os.ReadFile(filepath.Join(secrets, "gateway", "policy_token"))
		if err != nil {
			t.Fatal(err)
		}
		from := map[string][]string{
			"tools network":     append([]string{"--network", project + "_tools"}, policyFlags()...),
			"gateway's network": {"--network", "container:" + project + "-gateway-1", "-policy", "http://policy:8181", "-policy-token", string(policyToken)},
		}
		outs := make(map[string]string, len(from))
		errs := make(map[string]error, len(from))
		var mu sync.Mutex
		var wg sync.WaitGroup
		for where, args := range from {
			wg.Go(func() {
				// --network must precede the image; the rest are probe flags.
				cmd := append([]string{"run", "--rm", args[0], args[1], "--read-only", "--cap-drop", "ALL",
					"--security-opt", "no-new-privileges", "--user", "65532", probeImage, "-url", ""}, args[2:]...)
				out, err := run(ctx, "docker", cmd...)
				mu.Lock()
				defer mu.Unlock()
				outs[where], errs[where] = out, err
			})
		}
		wg.Wait()
		for where := range from {
			t.Logf("probe from the %s:\n%s", where, strings.ReplaceAll(outs[where], string(policyToken), "<policy token>"))
			if errs[where] != nil || !strings.Contains(outs[where], "\nPASS") {
				t.Errorf("from the %s: %v", where, errs[where])
			}
		}
	})

	t.Run("no container logs a call's arguments or a token", func(t *testing.T) {
		logs, err := run(ctx, "docker", compose("logs", "--no-color")...)
		if err != nil {
			t.Fatalf("compose logs: %v", err)
		}
		policyToken, err := os.ReadFile(filepath.Join(secrets, "gateway", "policy_token"))
		if err != nil {
			t.Fatal(err)
		}
		for what, secret := range map[string]string{"the planted argument": planted, "the client token": token, "the demo's admin token": adminToken, "the policy token": string(policyToken)} {
			if strings.Contains(logs, secret) {
				for _, line := range strings.Split(logs, "\n") {
					if strings.Contains(line, secret) {
						t.Errorf("%s is in a container's log: %.300s", what, strings.ReplaceAll(line, secret, "<"+what+">"))
						break
					}
				}
			}
		}
	})

	t.Run("approvals CLI inside the gateway container", func(t *testing.T) {
		// How an operator decides human-approval tickets: exec the gateway
		// binary in its own container, against the admin API on loopback.
		out, err := run(ctx, "docker", "exec", project+"-gateway-1", "/app", "approvals", "list")
		if err != nil {
			t.Fatalf("approvals list: %v\n%s", err, out)
		}
	})

	t.Run("each service holds only its own approval key", func(t *testing.T) {
		// Services with write tools get the key derived for them; web and
		// frigate, which have none, get no key at all.
		want := map[string]string{"arr-demo": "approval_key_arr", "ersatztv-demo": "approval_key_ersatztv", "tuliprox-demo": "approval_key_tuliprox", "homeassistant-demo": "approval_key_homeassistant", "unraid-demo": "approval_key_unraid", "demo": "approval_key_demo", "web": "", "frigate-demo": ""}
		for svc, key := range want {
			out, err := run(ctx, "docker", "inspect", "-f", `{{range .Mounts}}{{.Source}}>{{.Destination}} {{end}}`, project+"-"+svc+"-1")
			if err != nil {
				t.Fatalf("inspect %s: %v %s", svc, err, out)
			}
			var got string
			for _, m := range strings.Fields(out) {
				if src, dst, _ := strings.Cut(m, ">"); dst == "/run/secrets/approval_key" || strings.Contains(filepath.Base(src), "approval_key") {
					got += filepath.Base(src) + " "
				}
			}
			if strings.TrimSpace(got) != key {
				t.Errorf("%s mounts approval keys %q, want %q", svc, got, key)
			}
		}
	})

	t.Run("root filesystems are read-only", func(t *testing.T) {
		f := filepath.Join(dir, "intruder")
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, svc := range []string{"gateway", "policy", "demo", "web", "arr-demo", "frigate-demo", "ersatztv-demo", "tuliprox-demo", "fakes"} {
			out, err := run(ctx, "docker", "cp", f, project+"-"+svc+"-1:/intruder")
			if err == nil || !strings.Contains(out, "read-only") {
				t.Errorf("%s: writing its root filesystem was not refused as read-only: %v %s", svc, err, out)
			}
		}
	})

	t.Run("doctor passes", func(t *testing.T) {
		out, err := run(ctx, "go", "run", "./deploy/doctor", "-project", project, "-approvals", approvalsAddr)
		t.Logf("doctor:\n%s", out)
		if err != nil || !strings.Contains(out, " 0 failed") {
			t.Fatalf("doctor failed on the demo stack: %v", err)
		}
		// Every demo service reaches its fake with the right credentials.
		if !strings.Contains(out, " 0 not ready") || !regexp.MustCompile(`(?m)^arr-demo\s+OK$`).MatchString(out) {
			t.Errorf("doctor's readiness of the demo stack is not all OK:\n%s", out)
		}
	})

	t.Run("doctor catches a container that breaks the rules", func(t *testing.T) {
		// A container smuggled into the project: writable root, root user,
		// all capabilities, on the clients network.
		name := project + "-intruder"
		out, err := run(ctx, "docker", "run", "-d", "--name", name, "--network", project+"_clients",
			"--label", "com.docker.compose.project="+project, "--label", "com.docker.compose.service=intruder",
			"--user", "0", "--entrypoint", "/app", probeImage, "-url", "http://127.0.0.1:1/mcp")
		if err != nil {
			t.Fatalf("start intruder: %v %s", err, out)
		}
		t.Cleanup(func() { _, _ = run(context.Background(), "docker", "rm", "-f", name) })
		out, err = run(ctx, "go", "run", "./deploy/doctor", "-project", project)
		for _, rule := range []string{"read-only root", "capabilities dropped", "no-new-privileges", "non-root user", "only the gateway on clients"} {
			if !regexp.MustCompile(`intruder\s+` + rule + `\s+FAIL`).MatchString(out) {
				t.Errorf("doctor did not flag %q:\n%s", rule, out)
			}
		}
		if err == nil {
			t.Fatalf("doctor exited 0 with an intruder:\n%s", out)
		}
	})

	t.Run("faults survived", func(t *testing.T) {
		survivesFaults(ctx, t, faultStack{project: project, token: token, userJWT: func() string { return userJWT("ann@example.org", "user") }})
	})

	// The gateway on the host's loopback, from the next step on (re-runs
	// keep --publish): the switch test knocks on it with printed tokens.
	var published string
	t.Run("install.sh again, publishing on loopback, changes no secret", func(t *testing.T) {
		before := snapshot(t, secrets)
		publish := freeLoopback(t)
		published = publish
		out, err := install("--no-build", "--publish", publish)
		if err != nil {
			t.Fatalf("second install.sh: %v\n%s", err, out)
		}
		if strings.Contains(out, "first client token") || !strings.Contains(out, "already on") {
			t.Errorf("second run printed a new token or reconnected OpenWebUI:\n%s", out)
		}
		if after := snapshot(t, secrets); after != before {
			t.Errorf("a second run changed the secrets:\n%s\n--- became\n%s", before, after)
		}
		// The gateway is now on the host's loopback, as asked, and only there.
		res, err := http.Get("http://" + publish + "/healthz")
		if err != nil {
			t.Fatalf("published gateway: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("published gateway /healthz: HTTP %d", res.StatusCode)
		}
		// The approval page stays published: a re-run keeps --approvals.
		if out, err := run(ctx, "go", "run", "./deploy/doctor", "-project", project, "-publish", publish, "-approvals", approvalsAddr); err != nil {
			t.Fatalf("doctor refused the requested publish: %v\n%s", err, out)
		}
		// Both kept publishes are unrequested here; doctor lists them sorted,
		// so the gateway's port is not always the first.
		unrequested := regexp.MustCompile(`no published ports\s+FAIL: publishes [^\n]*\b` + regexp.QuoteMeta(publish) + `→8080/tcp`)
		if out, err := run(ctx, "go", "run", "./deploy/doctor", "-project", project); err == nil || !unrequested.MatchString(out) {
			t.Fatalf("doctor did not report an unrequested publish: %v\n%s", err, out)
		}
	})

	t.Run("profile switches are exact: demo, real arr, demo", func(t *testing.T) {
		demoSet := []string{"arr-demo", "demo", "ersatztv-demo", "fakes", "frigate-demo", "gateway", "homeassistant-demo", "policy", "tuliprox-demo", "unraid-demo", "web"}
		services := func() []string {
			out, err := run(ctx, "docker", "ps", "-a", "--filter", "label=com.docker.compose.project="+project, "--format", `{{.Label "com.docker.compose.service"}}`)
			if err != nil {
				t.Fatalf("docker ps: %v %s", err, out)
			}
			got := strings.Fields(out)
			slices.Sort(got)
			return got
		}
		if got := services(); !slices.Equal(got, demoSet) {
			t.Fatalf("the demo runs %v, want %v", got, demoSet)
		}
		// The user's LAN: a Sonarr (and a SearXNG, so nothing is pulled)
		// outside the project, played by the fakes image on the project's
		// upstream and egress networks. install.sh must not touch it.
		lan := project + "-lan"
		demoSecrets := filepath.Join(secrets, "demo")
		args := []string{"run", "-d", "--name", lan, "--network", project + "_upstream", "--network-alias", "sonarr-lan",
			"-v", demoSecrets + ":/s:ro"}
		for env, file := range map[string]string{"API_KEY": "api_key", "FRIGATE_PASSWORD": "frigate_password", "UNRAID_API_KEY": "unraid_api_key",
			"HA_TOKEN": "ha_token", "TULIPROX_USERNAME": "tuliprox_username", "TULIPROX_PASSWORD": "tuliprox_password"} {
			args = append(args, "-e", "FAKES_"+env+"_FILE=/s/"+file)
		}
		if out, err := run(ctx, "docker", append(args, "toolgate/fakes:"+tag)...); err != nil {
			t.Fatalf("start the LAN's fake Sonarr: %v %s", err, out)
		}
		t.Cleanup(func() { _, _ = run(context.Background(), "docker", "rm", "-f", lan) })
		if out, err := run(ctx, "docker", "network", "connect", "--alias", "searxng-lan", project+"_egress", lan); err != nil {
			t.Fatalf("connect the LAN's SearXNG: %v %s", err, out)
		}
		key, err := os.ReadFile(filepath.Join(demoSecrets, "api_key"))
		if err != nil {
			t.Fatal(err)
		}
		write := func(rel, content string) {
			t.Helper()
			p := filepath.Join(secrets, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("web.env", "WEB_SEARXNG_URL=http://searxng-lan:8080\n")
		write("arr/sonarr_api_key", string(key))
		arrEnv := func(host string) string {
			return "SONARR_URL=http://" + host + ":8989\nSONARR_ALLOW_HTTP=true\nSONARR_API_KEY_FILE=/run/secrets/arr/sonarr_api_key\n"
		}
		real := func(step string) string {
			t.Helper()
			out, err := run(ctx, filepath.Join(repoRoot, "install.sh"), "--no-build", "--project", project, "--secrets", secrets, "--env-file", envFile, "--openwebui", owui)
			if err != nil {
				t.Fatalf("%s: install.sh: %v\n%s", step, err, out)
			}
			t.Logf("%s: install.sh:\n%s", step, out)
			return out
		}
		untouched := func(step string) {
			t.Helper()
			for _, c := range []string{lan, owui} {
				if _, err := run(ctx, "docker", "inspect", c); err != nil {
					t.Errorf("%s: install.sh removed %s, which is not the project's", step, c)
				}
			}
		}
		realSet := []string{"arr", "gateway", "policy", "web"}

		// A Sonarr host that cannot be resolved: the install succeeds and
		// says what to fix.
		write("arr.env", arrEnv("sonarr.invalid"))
		out := real("real arr, host unresolvable")
		if got := services(); !slices.Equal(got, realSet) {
			t.Errorf("after the real install the project runs %v, want exactly %v:\n%s", got, realSet, out)
		}
		if !strings.Contains(out, "arr: Sonarr host sonarr.invalid cannot be resolved — check SONARR_URL") || !strings.Contains(out, "web: OK") {
			t.Errorf("install.sh did not name the unresolvable host and its setting:\n%s", out)
		}
		if strings.Contains(out, "token above") {
			t.Errorf("a re-run refers to a token it did not print:\n%s", out)
		}
		// No demo credential outlives the demo.
		if tokens, err := os.ReadFile(filepath.Join(secrets, "gateway", "client_tokens")); err != nil || strings.Contains(string(tokens), " demo-admin ") || !strings.Contains(out, "removed the demo's admin token") {
			t.Errorf("the real install kept the demo's admin token (%v):\n%s", err, out)
		}
		// ... and the running gateway refuses it at once, nothing restarted.
		if code := gatewayStatus(t, published, "/mcp", adminToken); code != http.StatusUnauthorized {
			t.Errorf("the removed demo-admin token: HTTP %d right after the real install, want 401", code)
		}
		// Only Sonarr is set up: the endpoints printed per client name
		// /mcp/sonarr, never /mcp/radarr or /mcp/prowlarr (no tools there).
		if !strings.Contains(out, "  openwebui (groups users): sonarr web") || strings.Contains(out, "radarr") || strings.Contains(out, "prowlarr") {
			t.Errorf("install.sh did not print exactly the endpoints with tools:\n%s", out)
		}
		untouched("real arr")

		write("arr.env", arrEnv("sonarr-lan"))
		out = real("real arr, host fixed")
		if got := services(); !slices.Equal(got, realSet) {
			t.Errorf("after fixing SONARR_URL the project runs %v, want %v", got, realSet)
		}
		if !regexp.MustCompile(`(?m)^  arr: OK$`).MatchString(out) {
			t.Errorf("arr is not ready against the LAN's Sonarr:\n%s", out)
		}
		untouched("real arr, fixed")

		// arr's settings file removed: its container goes too.
		if err := os.Remove(filepath.Join(secrets, "arr.env")); err != nil {
			t.Fatal(err)
		}
		real("arr.env removed")
		if got, want := services(), []string{"gateway", "policy", "web"}; !slices.Equal(got, want) {
			t.Errorf("without arr.env the project runs %v, want exactly %v", got, want)
		}
		untouched("arr.env removed")

		out, err = install("--no-build")
		if err != nil {
			t.Fatalf("back to the demo: %v\n%s", err, out)
		}
		if got := services(); !slices.Equal(got, demoSet) {
			t.Errorf("back in the demo the project runs %v, want exactly %v", got, demoSet)
		}
		// A new demo-admin token, printed once: it works at once, through
		// a real MCP client; the one removed before stays refused.
		again := regexp.MustCompile(`(?m)^\s+(tg_[A-Za-z0-9_-]+)\s*$`).FindAllStringSubmatch(out, -1)
		if len(again) != 1 {
			t.Fatalf("back in the demo install.sh printed %d tokens, want the new demo-admin's:\n%s", len(again), out)
		}
		newAdmin := again[0][1]
		probe, err := run(ctx, "docker", "run", "--rm", "--network", project+"_clients",
			"--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--user", "65532",
			probeImage, "-url", "http://gateway:8080/mcp/demo", "-token", newAdmin, "-demo=false", "-read", `demo_echo={"text":"again"}`)
		if err != nil || !strings.Contains(probe, "\nPASS") {
			t.Errorf("the demo-admin token just printed does not work: %v\n%s", err, strings.ReplaceAll(probe, newAdmin, "<demo-admin token>"))
		}
		if code := gatewayStatus(t, published, "/mcp", adminToken); code != http.StatusUnauthorized {
			t.Errorf("the demo-admin token removed earlier: HTTP %d, want 401", code)
		}
		// The demo takes nothing of secrets/: web.env names the LAN's
		// SearXNG, the demo's web asks its fake.
		if env, _ := run(ctx, "docker", "inspect", "-f", "{{json .Config.Env}}", project+"-web-1"); !strings.Contains(env, "WEB_SEARXNG_URL=http://searxng-demo:8080") || strings.Contains(env, "searxng-lan") {
			t.Errorf("the demo's web takes secrets/web.env: %s", env)
		}
		// OpenWebUI's OpenAPI URL is the tool server's address; the
		// document answers there.
		if code := gatewayGet(t, published, "/openapi/demo", newAdmin); code != http.StatusOK {
			t.Errorf("GET /openapi/demo: HTTP %d, want the document", code)
		}
		// The images are the project's own.
		if img, _ := run(ctx, "docker", "inspect", "-f", "{{.Config.Image}}", project+"-gateway-1"); strings.TrimSpace(img) != "toolgate/gateway:"+tag {
			t.Errorf("the gateway runs %q, want toolgate/gateway:%s", strings.TrimSpace(img), tag)
		}
		if !regexp.MustCompile(`(?m)^  arr-demo: OK$`).MatchString(out) {
			t.Errorf("the demo's arr is not ready again:\n%s", out)
		}
		untouched("demo again")
	})

	t.Run("install.sh --down stops the stack and keeps the secrets", func(t *testing.T) {
		before := snapshot(t, secrets)
		out, err := install("--down")
		if err != nil {
			t.Fatalf("install.sh --down: %v\n%s", err, out)
		}
		if left, _ := run(ctx, "docker", "ps", "-q", "--filter", "label=com.docker.compose.project="+project); strings.TrimSpace(left) != "" {
			t.Errorf("containers still running after --down: %s", left)
		}
		if after := snapshot(t, secrets); after != before {
			t.Error("--down changed the secrets")
		}
	})
}

// gatewayStatus POSTs a ping to the gateway published at addr with token
// and returns the HTTP status: 401 when the token is refused.
func gatewayStatus(t *testing.T, addr, path, token string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// gatewayGet GETs path of the gateway published at addr with token.
func gatewayGet(t *testing.T, addr, path, token string) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// freeLoopback returns a 127.0.0.1 address with a port nobody listens on.
func freeLoopback(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// snapshot lists every file under dir with its content's length and a
// hash, so two snapshots differ when any secret changed.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %x\n", strings.TrimPrefix(p, dir), len(data), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// run executes a command in the repo root and returns its combined output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = repoRoot
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}
