// Package hass is the homeassistant service's client of Home Assistant's
// REST API: states, history, logbook, the core configuration and its check,
// service calls and template rendering. Every request goes through the
// bounded upstream client with the long-lived access token; nothing here
// returns an upstream body or the token in an error.
package hass

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// App names the service's Home Assistant settings: HA_URL, HA_TOKEN_FILE,
// HA_CA_FILE, HA_ALLOW_HTTP, HA_TIMEOUT.
var App = upstream.App{Prefix: "HA", Name: "Home Assistant", Credential: upstream.Token}

// Client talks to one Home Assistant instance.
type Client struct {
	c *upstream.Client
}

// New returns a client over an upstream client configured with HA's base URL
// and bearer token.
func New(c *upstream.Client) *Client { return &Client{c: c} }

// Upstream is the bounded HTTP client underneath (the MCP relay posts
// through it too).
func (h *Client) Upstream() *upstream.Client { return h.c }

// State is one entity's state as /api/states returns it.
type State struct {
	EntityID    string         `json:"entity_id"`
	State       string         `json:"state"`
	Attributes  map[string]any `json:"attributes"`
	LastChanged string         `json:"last_changed"`
	LastUpdated string         `json:"last_updated"`
}

// Name is the entity's friendly name, or its object id when it has none.
func (s State) Name() string {
	if n, ok := s.Attributes["friendly_name"].(string); ok && n != "" {
		return n
	}
	_, obj, _ := strings.Cut(s.EntityID, ".")
	return obj
}

// Domain is the part of the entity id before the dot.
func (s State) Domain() string {
	d, _, _ := strings.Cut(s.EntityID, ".")
	return d
}

// DeviceClass is the entity's device_class attribute, or "".
func (s State) DeviceClass() string {
	d, _ := s.Attributes["device_class"].(string)
	return d
}

// entityID is HA's entity id format (domain.object_id, lower-case).
var entityID = regexp.MustCompile(`^[a-z0-9_]{1,64}\.[a-z0-9_]{1,200}$`)

// ValidEntityID reports whether id has HA's entity id shape.
func ValidEntityID(id string) bool { return entityID.MatchString(id) }

// domainName is an integration domain or a service name.
var domainName = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

// ValidName reports whether s is a valid domain or service name.
func ValidName(s string) bool { return domainName.MatchString(s) }

// Ping checks that HA answers and accepts the token: GET /api/ answers
// {"message":"API running."} for a valid token and 401 otherwise.
func (h *Client) Ping(ctx context.Context) error {
	var out struct {
		Message string `json:"message"`
	}
	return h.c.GetJSON(ctx, "/api/", nil, &out)
}

// States returns every state the token's user may read.
func (h *Client) States(ctx context.Context) ([]State, error) {
	var out []State
	if err := h.c.GetJSON(ctx, "/api/states", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// State returns one entity's state; an unknown entity is not_found.
func (h *Client) State(ctx context.Context, id string) (State, error) {
	if !ValidEntityID(id) {
		return State{}, toolerr.New(toolerr.InvalidArgument, "entity_id must look like domain.object_id (lower-case letters, digits, _)")
	}
	p, err := upstream.Path("api", "states", id)
	if err != nil {
		return State{}, err
	}
	var out State
	if err := h.c.GetJSON(ctx, p, nil, &out); err != nil {
		if toolerr.CodeOf(err) == toolerr.NotFound {
			return State{}, toolerr.New(toolerr.NotFound, "Home Assistant has no entity %s (check the id with ha_entity_list)", id)
		}
		return State{}, err
	}
	return out, nil
}

// HistoryPoint is one state of a minimal history response: the first and
// last point of a series carry the entity id and attributes, the others
// only state and last_changed.
type HistoryPoint struct {
	EntityID    string `json:"entity_id,omitempty"`
	State       string `json:"state"`
	LastChanged string `json:"last_changed"`
}

// History returns the state changes of ids between start and end, one
// series per entity, in HA's minimal form without attributes.
func (h *Client) History(ctx context.Context, ids []string, start, end time.Time) ([][]HistoryPoint, error) {
	p, err := upstream.Path("api", "history", "period", start.UTC().Format(time.RFC3339))
	if err != nil {
		return nil, err
	}
	q := url.Values{
		"filter_entity_id": {strings.Join(ids, ",")},
		"end_time":         {end.UTC().Format(time.RFC3339)},
		"minimal_response": {""},
		"no_attributes":    {""},
	}
	var out [][]HistoryPoint
	if err := h.c.GetJSON(ctx, p, q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// LogbookEntry is one line of HA's logbook.
type LogbookEntry struct {
	When     string `json:"when"`
	Name     string `json:"name"`
	Message  string `json:"message,omitempty"`
	State    string `json:"state,omitempty"`
	EntityID string `json:"entity_id,omitempty"`
	Domain   string `json:"domain,omitempty"`
}

// Logbook returns the logbook between start and end, of one entity when
// entity is set.
func (h *Client) Logbook(ctx context.Context, start, end time.Time, entity string) ([]LogbookEntry, error) {
	p, err := upstream.Path("api", "logbook", start.UTC().Format(time.RFC3339))
	if err != nil {
		return nil, err
	}
	q := url.Values{"end_time": {end.UTC().Format(time.RFC3339)}}
	if entity != "" {
		q.Set("entity", entity)
	}
	var out []LogbookEntry
	if err := h.c.GetJSON(ctx, p, q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Config is the part of /api/config the service passes on.
type Config struct {
	Version      string            `json:"version"`
	LocationName string            `json:"location_name"`
	TimeZone     string            `json:"time_zone"`
	Country      string            `json:"country"`
	Language     string            `json:"language"`
	Currency     string            `json:"currency"`
	State        string            `json:"state"`
	SafeMode     bool              `json:"safe_mode"`
	RecoveryMode bool              `json:"recovery_mode"`
	ConfigSource string            `json:"config_source"`
	UnitSystem   map[string]string `json:"unit_system"`
	Components   []string          `json:"components"`
}

// Config returns the core configuration.
func (h *Client) Config(ctx context.Context) (Config, error) {
	var out Config
	err := h.c.GetJSON(ctx, "/api/config", nil, &out)
	return out, err
}

// CheckResult is HA's answer to a configuration check.
type CheckResult struct {
	Result   string  `json:"result"`
	Errors   *string `json:"errors"`
	Warnings *string `json:"warnings"`
}

// Valid reports whether the check passed.
func (r CheckResult) Valid() bool { return r.Result == "valid" }

// CheckConfig runs HA's full configuration check (an admin-only endpoint:
// POST /api/config/core/check_config). It changes nothing.
func (h *Client) CheckConfig(ctx context.Context) (CheckResult, error) {
	var out CheckResult
	// Idempotent: the check reads files and changes nothing, so a
	// transient failure may be retried.
	err := h.c.DoJSON(ctx, upstream.Request{Method: http.MethodPost, Path: "/api/config/core/check_config", Idempotent: true}, &out)
	if err != nil {
		return out, adminHint(err, "the configuration check")
	}
	if out.Result != "valid" && out.Result != "invalid" {
		return out, toolerr.New(toolerr.UpstreamUnavailable, "Home Assistant answered the configuration check without a result")
	}
	return out, nil
}

// CallService calls domain.service with data (POST /api/services/…),
// once: a service call is never retried.
func (h *Client) CallService(ctx context.Context, domain, service string, data map[string]any) error {
	if !ValidName(domain) || !ValidName(service) {
		return toolerr.New(toolerr.InvalidArgument, "domain and service must be lower-case names")
	}
	p, err := upstream.Path("api", "services", domain, service)
	if err != nil {
		return err
	}
	if data == nil {
		data = map[string]any{}
	}
	body, err := json.Marshal(data)
	if err != nil {
		return toolerr.Wrap(toolerr.Internal, err, "cannot encode the service data")
	}
	var changed []json.RawMessage
	return h.c.DoJSON(ctx, upstream.Request{Method: http.MethodPost, Path: p, Body: body, NoRetry: true}, &changed)
}

// Render renders template with variables through HA (POST /api/template,
// admin only) and returns the text. Values reach the template only as
// variables, never spliced into its source.
func (h *Client) Render(ctx context.Context, template string, variables map[string]any) (string, error) {
	body, err := json.Marshal(map[string]any{"template": template, "variables": variables})
	if err != nil {
		return "", toolerr.Wrap(toolerr.Internal, err, "cannot encode the template request")
	}
	resp, err := h.c.Do(ctx, upstream.Request{Method: http.MethodPost, Path: "/api/template", Body: body, Idempotent: true})
	if err != nil {
		return "", err
	}
	if err := resp.Err(); err != nil {
		return "", adminHint(err, "template rendering")
	}
	return string(resp.Body), nil
}

// adminHint adds to an auth failure that the endpoint needs an admin.
func adminHint(err error, what string) error {
	if toolerr.CodeOf(err) == toolerr.AuthFailed {
		return upstream.Explain(toolerr.Wrap(toolerr.AuthFailed, err, "Home Assistant refused %s: it needs a long-lived access token of an administrator", what))
	}
	return err
}

// ScriptConfig returns the configuration of the script with key from
// scripts.yaml (GET /api/config/script/config/<key>, admin only); nil
// when HA has no such script there.
func (h *Client) ScriptConfig(ctx context.Context, key string) (map[string]any, error) {
	if !ValidName(key) {
		return nil, toolerr.New(toolerr.InvalidArgument, "a script key is lower-case letters, digits and _")
	}
	p, err := upstream.Path("api", "config", "script", "config", key)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := h.c.GetJSON(ctx, p, nil, &out); err != nil {
		if toolerr.CodeOf(err) == toolerr.NotFound {
			return nil, nil
		}
		return nil, adminHint(err, "reading a script's configuration")
	}
	return out, nil
}
