package arrapi

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
)

// The reads below exist in more than one app and are one implementation,
// so the apps answer in one shape (they had drifted apart: a queue's
// progress was "42%" in one and 42.3 in the other, a size GB in one
// app and bytes or GiB in the other).

// Sized is a size as every tool shows it: the exact bytes, and binary
// units to read ("1.4 GiB").
type Sized struct {
	SizeBytes int64  `json:"size_bytes"`
	Size      string `json:"size"`
}

// SizeOf is n bytes as Sized.
func SizeOf(n int64) Sized { return Sized{SizeBytes: n, Size: HumanSize(n)} }

// OnDisk is what a series, season or movie holds on disk, as Sized does
// it; both are left out when it holds nothing.
type OnDisk struct {
	SizeOnDiskBytes int64  `json:"size_on_disk_bytes,omitempty"`
	SizeOnDisk      string `json:"size_on_disk,omitempty"`
}

// OnDiskOf is n bytes on disk as OnDisk.
func OnDiskOf(n int64) OnDisk {
	if n <= 0 {
		return OnDisk{}
	}
	return OnDisk{SizeOnDiskBytes: n, SizeOnDisk: HumanSize(n)}
}

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
	ID              int     `json:"id"`
	Title           string  `json:"title"`
	Status          string  `json:"status"`
	TrackedStatus   string  `json:"tracked_status,omitempty"`
	TrackedState    string  `json:"tracked_state,omitempty"`
	ProgressPercent float64 `json:"progress_percent"`
	Sized
	TimeLeft       string          `json:"time_left,omitempty"`
	Estimated      string          `json:"estimated_completion,omitempty"`
	Quality        string          `json:"quality,omitempty"`
	Protocol       string          `json:"protocol,omitempty"`
	DownloadClient string          `json:"download_client,omitempty"`
	Indexer        string          `json:"indexer,omitempty"`
	ErrorMessage   string          `json:"error_message,omitempty"`
	StatusMessages []StatusMessage `json:"status_messages,omitempty"`
}

// View is r as the queue tools show it: progress in percent with one
// decimal, rounded down so a download is never shown done before it is.
func (r QueueRecord) View() QueueView {
	v := QueueView{
		ID: r.ID, Title: r.Title, Status: r.Status, TrackedStatus: r.TrackedDownloadStatus, TrackedState: r.TrackedDownloadState,
		Sized: SizeOf(int64(r.Size)), TimeLeft: r.Timeleft, Estimated: r.EstimatedCompletion, Quality: r.Quality.Name(),
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

// Pager is the arguments of a paged list tool (they embed Paging).
type Pager interface{ Defaults() (page, size int) }

// Paged is the read of a paged list tool (<app>_queue, <app>_history,
// <app>_wanted_missing): the page in asks for, read by fetch, each record
// as view shows it, under key (PageResult).
func Paged[R, V any](in Pager, key string, fetch func(page, size int) (Page[R], error), view func(R) V) (any, error) {
	page, size := in.Defaults()
	p, err := fetch(page, size)
	if err != nil {
		return nil, err
	}
	out := make([]V, 0, len(p.Records))
	for _, r := range p.Records {
		out = append(out, view(r))
	}
	return PageResult(page, p, key, out), nil
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
	ID          int            `json:"id"`
	Date        string         `json:"date"`
	EventType   string         `json:"event_type"`
	SourceTitle string         `json:"source_title"`
	Quality     string         `json:"quality,omitempty"`
	Details     map[string]any `json:"details,omitempty"`
}

// HistoryDetails are the members of a history record's free-form data the
// history tools show, each clipped to 300 bytes, and their names there; the
// rest includes downloadUrl (with Prowlarr's or an indexer's key), guids
// and paths.
var HistoryDetails = map[string]string{
	"indexer": "indexer", "releaseGroup": "release_group", "downloadClient": "download_client",
	"downloadClientName": "download_client_name", "message": "message", "reason": "reason", "size": "size",
	"protocol": "protocol", "customFormatScore": "custom_format_score",
}

// details are the shown members of a history record's data, named as every
// tool names them: a size in bytes is shown as Sized is, a number as a
// number.
func details(data map[string]string) map[string]any {
	kept := SafeDetails(data, slices.Sorted(maps.Keys(HistoryDetails)), 300)
	if kept == nil {
		return nil
	}
	out := make(map[string]any, len(kept)+1)
	for k, v := range kept {
		name := HistoryDetails[k]
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case err == nil && name == "size":
			out["size"], out["size_bytes"] = HumanSize(n), n
		case err == nil && name == "custom_format_score":
			out[name] = n
		default:
			out[name] = v
		}
	}
	return out
}

// HistoryRecord is the part of a HistoryResource that Sonarr and Radarr
// share; an app's record embeds it and adds what it is about.
type HistoryRecord struct {
	ID          int               `json:"id"`
	SourceTitle string            `json:"sourceTitle"`
	Quality     Quality           `json:"quality"`
	Date        string            `json:"date"`
	EventType   string            `json:"eventType"`
	Data        map[string]string `json:"data"`
}

// View is the shared part of r's view.
func (r HistoryRecord) View() HistoryView {
	return HistoryView{ID: r.ID, Date: r.Date, EventType: r.EventType, SourceTitle: r.SourceTitle, Quality: r.Quality.Name(), Details: details(r.Data)}
}

// LibraryList is the answer of the library list tools (<app>_series_list,
// <app>_movie_list): the items match keeps (all for a nil match), sorted
// by title without regard to case, from offset on, at most limit, as view
// shows them under key; library_size counts the whole library.
func LibraryList[T, V any](all []T, title func(T) string, match func(T) bool, offset, limit int, key string, view func(T) V) map[string]any {
	var hit []T
	for _, x := range all {
		if match == nil || match(x) {
			hit = append(hit, x)
		}
	}
	sort.SliceStable(hit, func(i, j int) bool { return strings.ToLower(title(hit[i])) < strings.ToLower(title(hit[j])) })
	out := []V{}
	for i := max(offset, 0); i < len(hit) && len(out) < limit; i++ {
		out = append(out, view(hit[i]))
	}
	return map[string]any{"library_size": len(all), "matched": len(hit), "returned": len(out), key: out}
}

// Days is the range of the <app>_calendar tools, both days included.
type Days struct{ Start, End time.Time }

// Window reads the range of the <app>_calendar tools: start and end are
// YYYY-MM-DD days (start defaults to today in UTC, end to start plus
// days), end not before start and at most maxDays after it.
func Window(now time.Time, start, end string, days, maxDays int) (Days, error) {
	day := func(s string, def time.Time) (time.Time, error) {
		if s == "" {
			return def, nil
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return time.Time{}, toolerr.New(toolerr.InvalidArgument, "date %q is not a valid YYYY-MM-DD date", s)
		}
		return d, nil
	}
	var d Days
	var err error
	if d.Start, err = day(start, now.UTC().Truncate(24*time.Hour)); err != nil {
		return Days{}, err
	}
	if d.End, err = day(end, d.Start.AddDate(0, 0, days)); err != nil {
		return Days{}, err
	}
	if d.End.Before(d.Start) {
		return Days{}, toolerr.New(toolerr.InvalidArgument, "end (%s) is before start (%s)", d.End.Format(time.DateOnly), d.Start.Format(time.DateOnly))
	}
	if d.End.Sub(d.Start) > time.Duration(maxDays)*24*time.Hour {
		return Days{}, toolerr.New(toolerr.InvalidArgument, "start and end are more than %d days apart; ask for a shorter range", maxDays)
	}
	return d, nil
}

// Until is the last second of the range: the end day counts whole.
func (d Days) Until() time.Time { return d.End.Add(24*time.Hour - time.Second) }

// CalendarResult is the answer of the <app>_calendar tools.
func CalendarResult[V any](d Days, key string, items []V) map[string]any {
	return map[string]any{"start": d.Start.Format(time.DateOnly), "end": d.End.Format(time.DateOnly), "count": len(items), key: items}
}
