package arrapi

import (
	"context"
	"fmt"
	"math"
	"net/url"

	"github.com/toolgate/toolgate/internal/toolkit"
)

// The reads below exist in more than one app and are one implementation,
// so the apps answer in one shape (they had drifted apart: a queue's
// progress was "42%" in one and 42.3 in the other).

// QueueRecord is the part of a QueueResource that Sonarr and Radarr share
// (Sonarr.Api.V3/Queue/QueueResource.cs, Radarr's likewise). An app's
// queue item embeds it and adds its media (series and episode, movie).
type QueueRecord struct {
	ID                    int             `json:"id"`
	Title                 string          `json:"title"`
	Quality               Quality         `json:"quality"`
	Size                  float64         `json:"size"`
	Sizeleft              float64         `json:"sizeleft"`
	Timeleft              string          `json:"timeleft"`
	EstimatedCompletion   string          `json:"estimatedCompletionTime"`
	Status                string          `json:"status"`
	TrackedDownloadStatus string          `json:"trackedDownloadStatus"`
	TrackedDownloadState  string          `json:"trackedDownloadState"`
	StatusMessages        []StatusMessage `json:"statusMessages"`
	ErrorMessage          string          `json:"errorMessage"`
	Protocol              string          `json:"protocol"`
	DownloadClient        string          `json:"downloadClient"`
	Indexer               string          `json:"indexer"`
}

// QueueView is a queue entry as the <app>_queue tools show it; an app's
// view embeds it and adds what the item is for.
type QueueView struct {
	ID              int             `json:"id"`
	Title           string          `json:"title"`
	Status          string          `json:"status"`
	TrackedStatus   string          `json:"tracked_status,omitempty"`
	TrackedState    string          `json:"tracked_state,omitempty"`
	ProgressPercent float64         `json:"progress_percent"`
	Size            string          `json:"size"`
	TimeLeft        string          `json:"time_left,omitempty"`
	Estimated       string          `json:"estimated_completion,omitempty"`
	Quality         string          `json:"quality,omitempty"`
	Protocol        string          `json:"protocol,omitempty"`
	DownloadClient  string          `json:"download_client,omitempty"`
	Indexer         string          `json:"indexer,omitempty"`
	ErrorMessage    string          `json:"error_message,omitempty"`
	StatusMessages  []StatusMessage `json:"status_messages,omitempty"`
}

// View is r as the queue tools show it: progress in percent with one
// decimal, rounded down so a download is never shown done before it is.
func (r QueueRecord) View() QueueView {
	v := QueueView{
		ID: r.ID, Title: r.Title, Status: r.Status, TrackedStatus: r.TrackedDownloadStatus, TrackedState: r.TrackedDownloadState,
		Size: HumanSize(int64(r.Size)), TimeLeft: r.Timeleft, Estimated: r.EstimatedCompletion, Quality: r.Quality.Name(),
		Protocol: r.Protocol, DownloadClient: r.DownloadClient, Indexer: r.Indexer, ErrorMessage: r.ErrorMessage,
		StatusMessages: r.StatusMessages,
	}
	if r.Size > 0 {
		v.ProgressPercent = math.Floor((r.Size-r.Sizeleft)/r.Size*1000) / 10
	}
	return v
}

// QueueQuery is the query of GET /queue for the tools: the download that
// will finish first on top, and the downloads the app could not match to
// its library included — those are the stuck ones ("Unable to parse
// download"), which the apps hide unless asked (include, e.g.
// "includeUnknownSeriesItems").
func QueueQuery(page, size int, include string) url.Values {
	q := PageQuery(page, size, "timeleft", "ascending")
	q.Set(include, "true")
	return q
}

// PageResult is the answer of a paged read. Sonarr and Radarr answer a
// queue page past the end with an earlier page (the last one, or the one
// before it) instead of an empty one; the note says so, so the records are
// not read as the page that was asked for.
func PageResult[T any](asked int, p Page[T], key string, records any) map[string]any {
	out := map[string]any{"page": p.Page, "page_size": p.PageSize, "total_records": p.TotalRecords, key: records}
	if p.Page != asked {
		out["note"] = fmt.Sprintf("page %d is past the end (%d records); the application answered page %d instead", asked, p.TotalRecords, p.Page)
	}
	return out
}

// diskView is one disk as the <app>_disk_space tools show it.
type diskView struct {
	Path        string  `json:"path"`
	Label       string  `json:"label,omitempty"`
	Free        string  `json:"free"`
	Total       string  `json:"total"`
	FreeBytes   int64   `json:"free_bytes"`
	TotalBytes  int64   `json:"total_bytes"`
	FreePercent float64 `json:"free_percent"`
}

// DiskSpaceTool is the read of the <app>_disk_space tools (GET
// /diskspace).
func DiskSpaceTool(c *Client) func(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	return func(ctx context.Context, _ toolkit.NoArgs) (any, error) {
		ds, err := c.DiskSpace(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]diskView, 0, len(ds))
		for _, d := range ds {
			v := diskView{Path: d.Path, Label: d.Label, Free: HumanSize(d.FreeSpace), Total: HumanSize(d.TotalSpace), FreeBytes: d.FreeSpace, TotalBytes: d.TotalSpace}
			if d.TotalSpace > 0 {
				v.FreePercent = math.Floor(float64(d.FreeSpace)/float64(d.TotalSpace)*1000) / 10
			}
			out = append(out, v)
		}
		return map[string]any{"disks": out}, nil
	}
}

// healthView is one health check as the <app>_health tools show it.
type healthView struct {
	Source  string `json:"source"`
	Type    string `json:"type"`
	Message string `json:"message"`
	WikiURL string `json:"wiki_url,omitempty"`
}

// HealthTool is the read of the <app>_health tools: the app's version
// (GET /system/status) and its health checks (GET /health); a wiki link
// that carries a credential is left out.
func HealthTool(c *Client) func(ctx context.Context, _ toolkit.NoArgs) (any, error) {
	return func(ctx context.Context, _ toolkit.NoArgs) (any, error) {
		st, err := c.SystemStatus(ctx)
		if err != nil {
			return nil, err
		}
		hs, err := c.Health(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]healthView, 0, len(hs))
		for _, h := range hs {
			v := healthView(h)
			if SensitiveLink(v.WikiURL) {
				v.WikiURL = ""
			}
			out = append(out, v)
		}
		return map[string]any{"app": st.AppName, "version": st.Version, "ok": len(out) == 0, "count": len(out), "checks": out}, nil
	}
}

// HistoryView is the part of a history record the <app>_history tools
// show for every app; an app's view embeds it and adds what the record
// is about.
type HistoryView struct {
	ID          int               `json:"id"`
	Date        string            `json:"date"`
	EventType   string            `json:"event_type"`
	SourceTitle string            `json:"source_title"`
	Quality     string            `json:"quality,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
}

// HistoryDetails are the members of a history record's free-form data the
// history tools show, each clipped to 300 bytes; the rest includes
// downloadUrl (with Prowlarr's or an indexer's key), guids and paths.
var HistoryDetails = []string{"indexer", "releaseGroup", "downloadClient", "downloadClientName", "message", "reason", "size", "protocol", "customFormatScore"}

// NewHistoryView builds the shared part of a history record's view.
func NewHistoryView(id int, date, eventType, sourceTitle string, q Quality, data map[string]string) HistoryView {
	return HistoryView{ID: id, Date: date, EventType: eventType, SourceTitle: sourceTitle, Quality: q.Name(), Details: SafeDetails(data, HistoryDetails, 300)}
}
