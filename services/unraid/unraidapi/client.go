// Package unraidapi is the unraid service's client of Unraid's GraphQL API
// (POST /graphql with the x-api-key header): the documents the service may
// send, typed answers, a client-side rate limit under Unraid's throttle, and
// a clear error for each way Unraid refuses a query.
package unraidapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// App names the service's Unraid settings: UNRAID_URL (the server's web
// address, https://tower.lan), UNRAID_API_KEY_FILE, UNRAID_CA_FILE,
// UNRAID_ALLOW_HTTP and UNRAID_TIMEOUT. Unraid reads the key from the
// x-api-key header (unraid/api api/src/unraid-api/auth/header.strategy.ts).
var App = upstream.App{Prefix: "UNRAID", Name: "Unraid", Credential: upstream.APIKey, KeyHeader: "x-api-key"}

// Path is where Unraid serves its API, below the server's web address.
const Path = "graphql"

// Client sends the service's documents to one Unraid server.
type Client struct {
	http  *upstream.Client
	limit *Limiter
	log   *slog.Logger
	lacks *lackMemo
}

// New returns a client over hc whose requests pass limit first.
func New(hc *upstream.Client, limit *Limiter, log *slog.Logger) *Client {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{http: hc, limit: limit, log: log, lacks: &lackMemo{now: time.Now, m: map[string]lackEntry{}}}
}

// SetClock replaces the clock that ages what the client remembers of the
// fields this Unraid lacks (tests).
func (c *Client) SetClock(now func() time.Time) { c.lacks.now = now }

// request is the body of a GraphQL POST.
type request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables,omitempty"`
}

// response is Unraid's answer (Apollo Server's shape).
type response struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
	} `json:"extensions"`
}

// unknownRef is a field Unraid said it does not have.
type unknownRef struct{ field, onType string }

// Query sends the read doc with vars and decodes its data into out. When
// this Unraid's API lacks fields of doc that are Optional, it sends doc
// again without them and returns them; a lacking field that the read
// needs fails it, naming the field and the release that has it. Only the
// documents of this package (or one with Optional fields left out) are
// sent: nothing builds a query from a caller's text.
func (c *Client) Query(ctx context.Context, doc Document, vars map[string]any, out any) (Lacks, error) {
	if doc.Mutation {
		return nil, toolerr.New(toolerr.Internal, "document %s is a mutation, not a read", doc.Name)
	}
	if err := checkKnown(doc); err != nil {
		return nil, err
	}
	lacks := c.lacks.get(doc.Name)
	for tries := 0; ; tries++ {
		text := doc.Text
		if len(lacks) > 0 {
			var err error
			if text, err = without(doc, lacks.paths()); err != nil {
				return nil, toolerr.New(toolerr.UpstreamUnavailable, "this Unraid's API lacks everything %s reads: %s; update Unraid (or the Unraid Connect plugin)", doc.Name, lacks)
			}
		}
		unknown, err := c.send(ctx, doc, text, vars, out)
		if err == nil {
			c.lacks.put(doc.Name, lacks)
			return lacks, nil
		}
		if len(unknown) == 0 || tries == maxDegrade {
			return nil, err
		}
		more, err := lacking(doc, unknown)
		if err != nil {
			return nil, err
		}
		for _, l := range more {
			if !lacks.has(l.Field) {
				lacks = append(lacks, l)
			}
		}
		c.log.InfoContext(ctx, "this unraid api lacks fields of a read; asking without them", "operation", doc.Name, "lacks", lacks.String())
	}
}

// Mutate sends the mutation doc once with vars and decodes its data into
// out.
func (c *Client) Mutate(ctx context.Context, doc Document, vars map[string]any, out any) error {
	if !doc.Mutation {
		return toolerr.New(toolerr.Internal, "document %s is a read, not a mutation", doc.Name)
	}
	if err := checkKnown(doc); err != nil {
		return err
	}
	unknown, err := c.send(ctx, doc, doc.Text, vars, out)
	if len(unknown) > 0 {
		if _, lerr := lacking(doc, unknown); lerr != nil {
			return lerr
		}
	}
	return err
}

func checkKnown(doc Document) error {
	if k, ok := known[doc.Name]; !ok || k.Text != doc.Text || k.Mutation != doc.Mutation || !slices.Equal(k.Newer, doc.Newer) {
		return toolerr.New(toolerr.Internal, "document %s is not one the service may send", doc.Name)
	}
	return nil
}

// lacking turns the fields Unraid does not know into Lacks when doc may
// be answered without each of them, or into an error naming the first it
// needs (and the release that has it).
func lacking(doc Document, unknown []unknownRef) (Lacks, error) {
	var out Lacks
	for _, u := range unknown {
		found := matchNewer(doc, u.field)
		if len(found) == 0 {
			return nil, toolerr.New(toolerr.UpstreamUnavailable, "this Unraid's API does not know %q (on %s) used by %s: it is older than API %s; update Unraid (or the Unraid Connect plugin)", u.field, u.onType, doc.Name, SchemaVersion)
		}
		for _, f := range found {
			if !f.Optional || doc.Mutation {
				return nil, toolerr.New(toolerr.UpstreamUnavailable, "this Unraid's API lacks %s, which %s needs: it came with Unraid API %s; update Unraid (or the Unraid Connect plugin)", f.Path, doc.Name, f.Since)
			}
			out = append(out, Lack{Field: f.Path, Since: f.Since})
		}
	}
	return out, nil
}

// send posts text as doc and decodes its data into out. When Unraid
// refused the text for fields it does not know, it returns them with the
// error.
func (c *Client) send(ctx context.Context, doc Document, text string, vars map[string]any, out any) ([]unknownRef, error) {
	if err := c.limit.Wait(ctx); err != nil {
		return nil, err
	}
	body, err := json.Marshal(request{Query: text, OperationName: doc.Name, Variables: vars})
	if err != nil {
		return nil, toolerr.Wrap(toolerr.Internal, err, "cannot encode the %s request", doc.Name)
	}
	// A query is safe to repeat; a mutation is sent exactly once. Retries
	// are off in the client anyway, so every request passes the limiter.
	resp, err := c.http.Do(ctx, upstream.Request{
		Method: http.MethodPost, Path: Path, Body: body,
		Idempotent: !doc.Mutation, NoRetry: doc.Mutation,
	})
	if err != nil {
		return nil, err
	}
	var r response
	parsed := json.Unmarshal(resp.Body, &r) == nil
	if resp.Status < 200 || resp.Status > 299 {
		// Apollo answers a document it cannot validate with HTTP 400 and
		// the reasons in errors; say which, not just the status.
		if parsed && len(r.Errors) > 0 && resp.Status == http.StatusBadRequest {
			return unknownFields(r.Errors), c.classify(ctx, doc, resp.Status, r.Errors)
		}
		if resp.Status == http.StatusTooManyRequests {
			return nil, errThrottled
		}
		return nil, resp.Err()
	}
	if !parsed {
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "Unraid answered %s with something that is not GraphQL JSON; check that UNRAID_URL is the server's web address", doc.Name)
	}
	if len(r.Errors) > 0 {
		return unknownFields(r.Errors), c.classify(ctx, doc, resp.Status, r.Errors)
	}
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return nil, toolerr.New(toolerr.UpstreamUnavailable, "Unraid answered %s without data", doc.Name)
	}
	if out == nil {
		return nil, nil
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return nil, toolerr.Wrap(toolerr.UpstreamUnavailable, err, "Unraid's answer to %s does not have the shape of API %s", doc.Name, SchemaVersion)
	}
	return nil, nil
}

// unknownFields are the fields a validation failure names as unknown;
// nil unless every error is one (another failure is not a missing field).
func unknownFields(errs []gqlError) []unknownRef {
	var out []unknownRef
	for _, e := range errs {
		m := unknownField.FindStringSubmatch(e.Message)
		if m == nil || !strings.EqualFold(e.Extensions.Code, "GRAPHQL_VALIDATION_FAILED") {
			return nil
		}
		out = append(out, unknownRef{field: m[1], onType: m[2]})
	}
	return out
}

// SchemaVersion is the unraid/api release whose schema the documents are
// validated against (services/unraid/apischema).
const SchemaVersion = "4.37.2"

var (
	errThrottled = toolerr.New(toolerr.Busy, "Unraid is throttling requests (its API allows about 100 per 10 seconds); retry in a few seconds")
	// unknownName picks the name out of a validation message; only an
	// identifier is ever shown, never the rest of the upstream text.
	unknownName = regexp.MustCompile(`^(?:Cannot query field|Unknown argument|Unknown type) "([A-Za-z_][A-Za-z0-9_]{0,63})"`)
	// typeSince names the release that brought a type the documents use.
	typeSince = map[string]string{"PrefixedID": "4.8.0"}
)

// classify turns Unraid's GraphQL errors into one stable error. Where the
// error is Unraid's to explain (bad arguments, a failure), its messages end
// the text, framed as Unraid's words (said).
func (c *Client) classify(ctx context.Context, doc Document, status int, errs []gqlError) error {
	e := errs[0]
	code := strings.ToUpper(e.Extensions.Code)
	msg := strings.ToLower(e.Message)
	c.log.WarnContext(ctx, "unraid refused a request", "operation", doc.Name, "status", status, "code", code, "errors", len(errs))
	switch {
	case code == "UNAUTHENTICATED" || e.Extensions.Status == http.StatusUnauthorized || status == http.StatusUnauthorized:
		return toolerr.New(toolerr.AuthFailed, "Unraid rejected the API key; check UNRAID_API_KEY_FILE (create a key with role VIEWER under Settings → Management Access → API Keys)")
	case code == "FORBIDDEN" || e.Extensions.Status == http.StatusForbidden || status == http.StatusForbidden:
		if doc.Mutation {
			return toolerr.New(toolerr.AuthFailed, "the Unraid API key may not do %s; management needs a key with more than the VIEWER role", doc.Name)
		}
		return toolerr.New(toolerr.AuthFailed, "the Unraid API key may not read this (%s); give the key the VIEWER role", doc.Name)
	case e.Extensions.Status == http.StatusTooManyRequests || strings.Contains(msg, "too many requests") || strings.Contains(msg, "throttlerexception"):
		return errThrottled
	case code == "GRAPHQL_VALIDATION_FAILED" || unknownName.MatchString(e.Message):
		what, since := "a field", SchemaVersion
		if m := unknownName.FindStringSubmatch(e.Message); m != nil {
			what = fmt.Sprintf("%q", m[1])
			if v, ok := typeSince[m[1]]; ok {
				since = v
			}
		}
		return toolerr.New(toolerr.UpstreamUnavailable, "this Unraid's API does not know %s used by %s: it is older than API %s; update Unraid (or the Unraid Connect plugin)", what, doc.Name, since)
	case code == "BAD_USER_INPUT":
		return toolerr.New(toolerr.InvalidArgument, "Unraid refused the arguments of %s%s", doc.Name, c.said(http.StatusBadRequest, errs))
	}
	return toolerr.New(toolerr.UpstreamUnavailable, "Unraid failed to answer %s; see the Unraid API log (unraid-api logs)%s", doc.Name, c.said(http.StatusInternalServerError, errs))
}

// said is Unraid's own reason — the messages of its GraphQL errors, never
// their extensions (a stack trace) — framed, cleaned and redacted as an
// error body's reason is (status picks the rule), after ". "; "" for none.
func (c *Client) said(status int, errs []gqlError) string {
	msgs := make([]string, 0, min(len(errs), 3))
	for _, e := range errs[:min(len(errs), 3)] {
		if m := strings.TrimSpace(e.Message); m != "" {
			msgs = append(msgs, m)
		}
	}
	if s := c.http.Said(status, strings.Join(msgs, "; ")); s != "" {
		return ". " + s
	}
	return ""
}

// IsCode reports whether err carries code.
func IsCode(err error, code toolerr.Code) bool {
	var te *toolerr.Error
	return errors.As(err, &te) && te.Code == code
}
