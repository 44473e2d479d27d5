package arrapi

import (
	"context"
	"net/url"
	"strconv"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// SystemStatus is the part of GET /system/status (SystemResource) the
// tools show. Paths and the authentication mode are left out on purpose.
type SystemStatus struct {
	AppName      string `json:"appName"`
	InstanceName string `json:"instanceName,omitempty"`
	Version      string `json:"version"`
	Branch       string `json:"branch,omitempty"`
	StartTime    string `json:"startTime,omitempty"`
	IsDocker     bool   `json:"isDocker"`
	OSName       string `json:"osName,omitempty"`
}

// Health is one entry of GET /health (HealthResource).
type Health struct {
	Source string `json:"source"`
	// Type is ok, notice, warning or error.
	Type    string `json:"type"`
	Message string `json:"message"`
	WikiURL string `json:"wikiUrl,omitempty"`
}

// DiskSpace is one entry of GET /diskspace (DiskSpaceResource).
type DiskSpace struct {
	Path       string `json:"path"`
	Label      string `json:"label,omitempty"`
	FreeSpace  int64  `json:"freeSpace"`
	TotalSpace int64  `json:"totalSpace"`
}

// Command is a CommandResource: what POST /command answers and GET
// /command/{id} reports.
type Command struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	CommandName string `json:"commandName,omitempty"`
	Message     string `json:"message,omitempty"`
	// Status is queued, started, completed, failed, aborted, cancelled
	// or orphaned.
	Status string `json:"status"`
	// Result is unknown, successful or unsuccessful (not in Prowlarr).
	Result  string `json:"result,omitempty"`
	Queued  string `json:"queued,omitempty"`
	Started string `json:"started,omitempty"`
	Ended   string `json:"ended,omitempty"`
	Trigger string `json:"trigger,omitempty"`
}

// Page is the paging envelope of queue, history and wanted/missing
// (…PagingResource).
type Page[T any] struct {
	Page          int    `json:"page"`
	PageSize      int    `json:"pageSize"`
	SortKey       string `json:"sortKey,omitempty"`
	SortDirection string `json:"sortDirection,omitempty"`
	TotalRecords  int    `json:"totalRecords"`
	Records       []T    `json:"records"`
}

// Quality is a QualityModel reduced to its name and revision.
type Quality struct {
	Quality struct {
		ID         int    `json:"id"`
		Name       string `json:"name"`
		Source     string `json:"source,omitempty"`
		Resolution int    `json:"resolution,omitempty"`
	} `json:"quality"`
	Revision struct {
		Version  int  `json:"version"`
		Real     int  `json:"real"`
		IsRepack bool `json:"isRepack"`
	} `json:"revision"`
}

// Name returns the quality name ("WEBDL-1080p"), with " Proper"/" vN"
// when the revision is above 1.
func (q Quality) Name() string {
	if q.Revision.Version > 1 {
		return q.Quality.Name + " v" + strconv.Itoa(q.Revision.Version)
	}
	return q.Quality.Name
}

// Language is a Language resource.
type Language struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// StatusMessage is a TrackedDownloadStatusMessage of a queue item.
type StatusMessage struct {
	Title    string   `json:"title"`
	Messages []string `json:"messages"`
}

// PageQuery builds the page, pageSize, sortKey and sortDirection
// parameters of a paged list.
func PageQuery(page, pageSize int, sortKey, sortDirection string) url.Values {
	q := url.Values{}
	q.Set("page", strconv.Itoa(max(page, 1)))
	q.Set("pageSize", strconv.Itoa(max(pageSize, 1)))
	if sortKey != "" {
		q.Set("sortKey", sortKey)
	}
	if sortDirection != "" {
		q.Set("sortDirection", sortDirection)
	}
	return q
}

// SystemStatus calls GET /system/status; it is also the readiness probe.
func (c *Client) SystemStatus(ctx context.Context) (SystemStatus, error) {
	var s SystemStatus
	err := c.Get(ctx, "/system/status", nil, &s)
	return s, err
}

// Health calls GET /health.
func (c *Client) Health(ctx context.Context) ([]Health, error) {
	var h []Health
	err := c.Get(ctx, "/health", nil, &h)
	return h, err
}

// DiskSpace calls GET /diskspace (Sonarr and Radarr only).
func (c *Client) DiskSpace(ctx context.Context) ([]DiskSpace, error) {
	var d []DiskSpace
	err := c.Get(ctx, "/diskspace", nil, &d)
	return d, err
}

// Command calls GET /command/{id}; an unknown id is toolerr.NotFound.
func (c *Client) Command(ctx context.Context, id int) (Command, error) {
	var cmd Command
	if id < 1 {
		return cmd, toolerr.New(toolerr.InvalidArgument, "command id must be a positive integer")
	}
	p, err := upstream.Path("command", strconv.Itoa(id))
	if err != nil {
		return cmd, err
	}
	if err := c.Get(ctx, p, nil, &cmd); err != nil {
		if toolerr.CodeOf(err) == toolerr.NotFound {
			return cmd, upstream.Explain(toolerr.Wrap(toolerr.NotFound, err, "%s has no command %d (finished commands are forgotten after a while)", c.display, id))
		}
		return cmd, err
	}
	return cmd, nil
}

// StartCommand POSTs body (a struct with at least "name", e.g.
// {"name":"EpisodeSearch","episodeIds":[1,2]}) to /command and returns
// the queued command. Only the write tools call it, with fixed names.
func (c *Client) StartCommand(ctx context.Context, body any) (Command, error) {
	var cmd Command
	err := c.Post(ctx, "/command", body, &cmd)
	return cmd, err
}
