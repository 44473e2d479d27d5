package admin

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// Catalog is what the admin API tells of the tools offered: for every
// client of the tokens file, the endpoints where it sees tools.
type Catalog interface {
	// Refresh reads every service's tools again now (after a profile
	// switch, instead of waiting for the next periodic refresh).
	Refresh(ctx context.Context)
	// ClientEndpoints lists each client with the endpoints (/mcp/<name>)
	// whose tools/list shows it at least one tool, through the same
	// visibility filter and policy as the client's own tools/list (without
	// an end user, as a client's set-up sees them).
	ClientEndpoints(ctx context.Context) []ClientEndpoints
}

// ClientEndpoints is one client's endpoints with tools.
type ClientEndpoints struct {
	Client    string          `json:"client"`
	Groups    []string        `json:"groups"`
	Endpoints []EndpointTools `json:"endpoints"`
}

// EndpointTools is one endpoint and how many tools it shows the client.
type EndpointTools struct {
	Endpoint string `json:"endpoint"`
	Tools    int    `json:"tools"`
}

// EndpointList is the body of GET /admin/endpoints.
type EndpointList struct {
	Clients []ClientEndpoints `json:"clients"`
}

// WithCatalog serves GET /admin/endpoints and POST /admin/refresh.
func WithCatalog(c Catalog) Option { return func(h *handler) { h.catalog = c } }

func (h *handler) routeCatalog() {
	h.route("GET", "/admin/endpoints", func(w http.ResponseWriter, r *http.Request) {
		if h.catalog == nil {
			writeError(w, http.StatusNotFound, toolerr.NotFound, "this gateway lists no endpoints")
			return
		}
		list := h.catalog.ClientEndpoints(r.Context())
		if list == nil {
			list = []ClientEndpoints{}
		}
		writeJSON(w, http.StatusOK, EndpointList{Clients: list})
	})
	h.route("POST", "/admin/refresh", func(w http.ResponseWriter, r *http.Request) {
		if h.catalog == nil {
			writeError(w, http.StatusNotFound, toolerr.NotFound, "this gateway has no catalog to refresh")
			return
		}
		h.catalog.Refresh(r.Context())
		h.log.Info("catalog refreshed by the admin API")
		writeJSON(w, http.StatusOK, map[string]bool{"refreshed": true})
	})
}

// listEndpoints prints one line per client and endpoint with tools:
// CLIENT GROUPS ENDPOINT TOOLS, and "- 0" for a client with none.
// --refresh reads every service's tools again first (install.sh does,
// right after a switch).
func (c *CLI) listEndpoints(ctx context.Context, args []string) error {
	pos, flags, err := parseArgs(args, nil, []string{"refresh"})
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageError("endpoints list takes no arguments")
	}
	if flags["refresh"] != "" {
		var done map[string]bool
		if err := c.do(ctx, http.MethodPost, "/admin/refresh", nil, &done); err != nil {
			return fmt.Errorf("refresh: %w", err)
		}
	}
	var reply EndpointList
	if err := c.do(ctx, http.MethodGet, "/admin/endpoints", nil, &reply); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.out(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tGROUPS\tENDPOINT\tTOOLS")
	for _, cl := range reply.Clients {
		if len(cl.Endpoints) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t0\n", cell(cl.Client), cell(strings.Join(cl.Groups, ",")))
		}
		for _, e := range cl.Endpoints {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", cell(cl.Client), cell(strings.Join(cl.Groups, ",")), cell(e.Endpoint), e.Tools)
		}
	}
	return tw.Flush()
}
