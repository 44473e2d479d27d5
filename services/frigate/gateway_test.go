package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/jpeg"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolgate/toolgate/internal/capture"
	"github.com/toolgate/toolgate/services/frigate/client"
	"github.com/toolgate/toolgate/services/frigate/fakefrigate"
	"github.com/toolgate/toolgate/services/frigate/tools"
	"github.com/toolgate/toolgate/services/gateway/gatewaytest"
)

// Planted credentials of the gateway test; none may cross the gateway or
// reach a log or audit line.
const (
	gwUser     = "viewer"
	gwPassword = "pw-Planted-gateway-2718"
	gwBearer   = "bearer-Planted-gateway-3141"
	// sessionPrefix starts every frigate_token cookie value the fake issues.
	sessionPrefix = "eyJhbGciOiJIUzI1NiJ9."
	// gwMaxHeight is below the fake's 720-pixel frames, so the bound shows.
	gwMaxHeight = 360
)

var gwNow = time.Unix(1_750_000_000, 0)

// wantTools is the whole frigate tool set; all of it is read-only.
var wantTools = []string{
	"frigate_get_capabilities", "frigate_get_event", "frigate_get_event_snapshot", "frigate_get_latest_frame",
	"frigate_get_system_status", "frigate_list_cameras", "frigate_list_events", "frigate_search_events",
}

// pictureTools show camera pictures; the shipped policy gives them to
// group admins only (policies/data/toolgate/tools.json, tools.restricted).
var pictureTools = []string{"frigate_get_event_snapshot", "frigate_get_latest_frame"}

// mcpUser is one MCP client library talking to the gateway.
type mcpUser interface {
	// tools returns each tool's name and whether it is read-only and not
	// destructive.
	tools(t *testing.T) map[string]bool
	// call returns the structured (or text) content as an object, whether
	// the call failed, and the image contents as raw bytes by MIME type.
	call(t *testing.T, name string, args map[string]any) (map[string]any, bool, map[string][]byte)
	// refused calls a tool the caller may not use and reports whether the
	// call failed (a protocol error or an error result) and carried no
	// picture.
	refused(t *testing.T, name string, args map[string]any) bool
}

type mcpgoUser struct{ c *mcpclient.Client }

func (u mcpgoUser) tools(t *testing.T) map[string]bool {
	t.Helper()
	res, err := u.c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]bool{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		out[tool.Name] = a.ReadOnlyHint != nil && *a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint)
	}
	return out
}

func (u mcpgoUser) call(t *testing.T, name string, args map[string]any) (map[string]any, bool, map[string][]byte) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := u.c.CallTool(t.Context(), req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	images := map[string][]byte{}
	var text string
	for _, c := range res.Content {
		switch c := c.(type) {
		case mcp.ImageContent:
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				t.Fatalf("image content is not base64: %v", err)
			}
			images[c.MIMEType] = data
		case mcp.TextContent:
			if text == "" {
				text = c.Text
			}
		}
	}
	return object(t, name, res.StructuredContent, text), res.IsError, images
}

func (u mcpgoUser) refused(t *testing.T, name string, args map[string]any) bool {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := u.c.CallTool(t.Context(), req)
	if err != nil {
		return true
	}
	for _, c := range res.Content {
		if _, ok := c.(mcp.ImageContent); ok {
			return false
		}
	}
	return res.IsError
}

type sdkUser struct{ s *sdk.ClientSession }

func (u sdkUser) tools(t *testing.T) map[string]bool {
	t.Helper()
	res, err := u.s.ListTools(t.Context(), &sdk.ListToolsParams{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]bool{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		out[tool.Name] = a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint)
	}
	return out
}

func (u sdkUser) call(t *testing.T, name string, args map[string]any) (map[string]any, bool, map[string][]byte) {
	t.Helper()
	res, err := u.s.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	images := map[string][]byte{}
	var text string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.ImageContent:
			images[c.MIMEType] = c.Data
		case *sdk.TextContent:
			if text == "" {
				text = c.Text
			}
		}
	}
	return object(t, name, res.StructuredContent, text), res.IsError, images
}

func (u sdkUser) refused(t *testing.T, name string, args map[string]any) bool {
	t.Helper()
	res, err := u.s.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return true
	}
	for _, c := range res.Content {
		if _, ok := c.(*sdk.ImageContent); ok {
			return false
		}
	}
	return res.IsError
}

// object returns structured content as a JSON object, falling back to the
// first text content as the toolkit mirrors it there.
func object(t *testing.T, name string, structured any, text string) map[string]any {
	t.Helper()
	raw := []byte(text)
	if structured != nil {
		var err error
		if raw, err = json.Marshal(structured); err != nil {
			t.Fatal(err)
		}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: result is not a JSON object: %.300s", name, raw)
	}
	return m
}

// TestThroughTheGateway runs the frigate tools behind a real gateway (with
// its embedded policy) against the fake Frigate, in managed-session and
// bearer mode, and drives them with both mcp-go and the official SDK, as a
// client of group users (events, no pictures) and of group admins
// (pictures too).
func TestThroughTheGateway(t *testing.T) {
	events := fakefrigate.DemoEvents(gwNow)
	var snapEvent fakefrigate.Event
	for _, e := range events {
		if e.Camera == "front_door" && e.HasSnapshot {
			snapEvent = e
			break
		}
	}
	modes := []struct {
		name string
		set  func(*tools.Settings)
	}{
		{"managed session", func(s *tools.Settings) { s.Auth, s.Username, s.Password = client.Managed, gwUser, []byte(gwPassword) }},
		{"bearer token", func(s *tools.Settings) { s.Auth, s.Token = client.Bearer, []byte(gwBearer) }},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			fake := fakefrigate.New(fakefrigate.Options{
				Users: map[string]string{gwUser: gwPassword}, Tokens: []string{gwBearer},
				Cameras: fakefrigate.DemoCameras(), Events: events, SemanticSearch: true,
			})
			srv := httptest.NewServer(fake.Handler())
			t.Cleanup(srv.Close)
			root, _ := url.Parse(srv.URL + "/api")
			set := tools.Settings{
				APIRoot: root, CookieName: client.DefaultCookieName, AllowHTTP: true, Timeout: 30 * time.Second, // generous: snapshots are decoded and scaled on a loaded 2-core CI machine
				// backyard exists in Frigate but is outside the scope.
				Cameras:          []string{"front_door", "driveway"},
				MaxResponseBytes: tools.DefaultMaxResponseBytes,
				PageSize:         tools.DefaultPageSize, MaxWindow: tools.DefaultMaxWindow,
				ImageMaxBytes: tools.DefaultImageMaxBytes, ImageMaxHeight: gwMaxHeight,
			}
			mode.set(&set)
			// The Frigate client's own debug lines (retries) are checked too.
			clientLogs := &capture.Buffer{}
			fc, err := tools.NewClient(set, slog.New(slog.NewJSONHandler(clientLogs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			if err != nil {
				t.Fatal(err)
			}
			g := gatewaytest.Start(t, gatewaytest.Options{
				Service: "frigate", Tools: tools.New(set, tools.DefaultLimits, fc, func() time.Time { return gwNow }).Tools(),
				Secrets: [][]byte{set.Password, set.Token}, Limits: tools.DefaultLimits,
			})

			sdkWire := &capture.Buffer{}
			users := []struct {
				name string
				u    mcpUser
				// pictures: the client's groups are granted the picture tools.
				pictures bool
			}{
				{"mcp-go users", mcpgoUser{c: g.Client("openwebui", "ann@example.org")}, false},
				{"go-sdk users", sdkUser{s: g.SDKClientAt("openwebui", "/mcp", sdkWire)}, false},
				{"mcp-go admins", mcpgoUser{c: g.Client("admin", "ann@example.org")}, true},
				{"go-sdk admins", sdkUser{s: g.SDKClientAt("admin", "/mcp", sdkWire)}, true},
			}
			for _, user := range users {
				t.Run(user.name, func(t *testing.T) {
					t.Run("tools/list is the read-only frigate set", func(t *testing.T) {
						got := user.u.tools(t)
						names := make([]string, 0, len(got))
						for name, readOnly := range got {
							names = append(names, name)
							if !readOnly {
								t.Errorf("%s is not marked read-only and non-destructive", name)
							}
						}
						slices.Sort(names)
						want := wantTools
						if !user.pictures {
							want = slices.DeleteFunc(slices.Clone(wantTools), func(n string) bool { return slices.Contains(pictureTools, n) })
						}
						if !slices.Equal(names, want) {
							t.Fatalf("tools = %v, want %v", names, want)
						}
					})

					if !user.pictures {
						t.Run("camera pictures are refused before Frigate is asked", func(t *testing.T) {
							before := len(fake.Requests())
							if !user.u.refused(t, "frigate_get_latest_frame", map[string]any{"camera": "front_door"}) {
								t.Error("a users client got the latest frame")
							}
							if !user.u.refused(t, "frigate_get_event_snapshot", map[string]any{"eventId": snapEvent.ID}) {
								t.Error("a users client got an event snapshot")
							}
							if after := fake.Requests()[before:]; len(after) != 0 {
								t.Errorf("refused picture calls reached Frigate: %v", after)
							}
						})
					}

					t.Run("list events", func(t *testing.T) {
						out, isErr, _ := user.u.call(t, "frigate_list_events", map[string]any{
							"after": float64(gwNow.Add(-24 * time.Hour).Unix()), "before": float64(gwNow.Unix()),
						})
						evs, _ := out["events"].([]any)
						if isErr || len(evs) == 0 {
							t.Fatalf("list events: %v", out)
						}
						for _, e := range evs {
							if cam := e.(map[string]any)["camera"]; cam != "front_door" && cam != "driveway" {
								t.Errorf("event from out-of-scope camera %v", cam)
							}
						}
						if c, _ := out["completeness"].(map[string]any); c["complete"] != true {
							t.Errorf("completeness = %v", out["completeness"])
						}
					})

					t.Run("event snapshot arrives as a bounded JPEG", func(t *testing.T) {
						if !user.pictures {
							t.Skip("pictures are for admins")
						}
						out, isErr, images := user.u.call(t, "frigate_get_event_snapshot", map[string]any{"eventId": snapEvent.ID, "height": 1080})
						if isErr {
							t.Fatalf("snapshot: %v", out)
						}
						data, ok := images["image/jpeg"]
						if !ok {
							t.Fatalf("no image/jpeg content; result %v", out)
						}
						img, err := jpeg.Decode(bytes.NewReader(data))
						if err != nil {
							t.Fatalf("not a JPEG: %v", err)
						}
						if h := img.Bounds().Dy(); h > gwMaxHeight || h < 1 {
							t.Errorf("height %d, limit %d", h, gwMaxHeight)
						}
						if len(data) > tools.DefaultImageMaxBytes {
							t.Errorf("%d bytes, limit %d", len(data), tools.DefaultImageMaxBytes)
						}
						if out["eventId"] != snapEvent.ID || out["camera"] != "front_door" || out["height"] != float64(img.Bounds().Dy()) {
							t.Errorf("details = %v", out)
						}
					})

					t.Run("out-of-scope camera refused alike whether it exists or not", func(t *testing.T) {
						before := len(fake.Requests())
						for _, tc := range []struct {
							tool string
							args func(camera string) map[string]any
						}{
							{"frigate_get_latest_frame", func(c string) map[string]any { return map[string]any{"camera": c} }},
							{"frigate_list_cameras", func(c string) map[string]any { return map[string]any{"camera": c} }},
							{"frigate_list_events", func(c string) map[string]any {
								return map[string]any{"after": float64(gwNow.Add(-time.Hour).Unix()), "before": float64(gwNow.Unix()), "cameras": []any{c}}
							}},
						} {
							if !user.pictures && slices.Contains(pictureTools, tc.tool) {
								continue
							}
							existing, errA, _ := user.u.call(t, tc.tool, tc.args("backyard"))
							missing, errB, _ := user.u.call(t, tc.tool, tc.args("attic"))
							if !errA || !errB || gatewaytest.ErrorCode(existing) != "forbidden" {
								t.Fatalf("%s: existing %v, missing %v", tc.tool, existing, missing)
							}
							if a, b := mustJSON(t, existing), mustJSON(t, missing); a != b {
								t.Errorf("%s: answers differ:\n%s\n%s", tc.tool, a, b)
							}
							if a := mustJSON(t, existing); strings.Contains(a, "backyard") || strings.Contains(a, "front_door") {
								t.Errorf("%s: refusal names a camera: %s", tc.tool, a)
							}
						}
						if after := fake.Requests()[before:]; len(after) != 0 {
							t.Errorf("refused calls reached Frigate: %v", after)
						}
					})
				})
			}

			// Both clients' traffic was recorded, so the check below covers it.
			for name, wire := range map[string]string{"mcp-go": g.Wire.String(), "go-sdk": sdkWire.String()} {
				if !strings.Contains(wire, "event_snapshot") {
					t.Fatalf("the %s wire recorder saw no snapshot result", name)
				}
			}
			// One session served every call of both clients; in bearer mode
			// there is no login at all.
			if want := map[client.Mode]int{client.Managed: 1, client.Bearer: 0}[set.Auth]; fake.Logins() != want {
				t.Errorf("logins = %d, want %d", fake.Logins(), want)
			}
			if g.Logs.String() == "" || g.Audit.String() == "" {
				t.Error("logs or audit are empty; the secret check would prove nothing")
			}
			g.NoLeaks(t, []string{gwPassword, gwBearer, sessionPrefix}, map[string]string{"go-sdk wire": sdkWire.String(), "client logs": clientLogs.String()})
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
