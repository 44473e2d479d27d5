package tools

import (
	"context"
	"fmt"
	"net/http"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

type (
	librarySync struct {
		ID              int  `json:"id" schema:"minimum=1"`
		ShouldSyncItems bool `json:"shouldSyncItems"`
	}
	syncArgs struct {
		ID        int           `json:"id" schema:"minimum=1"`
		Libraries []librarySync `json:"libraries" schema:"minItems=1,maxItems=100"`
	}
)

func (s *Service) libraryWrites() []toolkit.Tool {
	return []toolkit.Tool{
		writeTool(s, "ersatztv_enable_jellyfin_library_sync", "Turn sync on or off per library of a Jellyfin source; libraries not named are untouched.", updates, s.librarySync),
		writeTool(s, "ersatztv_refresh_jellyfin_libraries", "Re-read a Jellyfin source's list of libraries.", updates, s.jellyfinJob("refresh the library list of", "refresh-libraries")),
		writeTool(s, "ersatztv_scan_jellyfin_collections", "Scan a Jellyfin source's collections.", updates, s.jellyfinJob("scan the collections of", "scan-collections")),
		s.scanLibrary(),
	}
}

func (s *Service) librarySync(ctx context.Context, in syncArgs) (Plan, error) {
	var libs []struct {
		ID              int    `json:"id"`
		Name            string `json:"name"`
		ShouldSyncItems bool   `json:"shouldSyncItems"`
	}
	if _, err := s.c.GetInto(ctx, []string{"media-sources", "jellyfin", itoa(in.ID), "libraries"}, nil, &libs); err != nil {
		if client.IsNotFound(err) {
			return Plan{}, toolerr.New(toolerr.NotFound, "ErsatzTV has no Jellyfin media source %d", in.ID)
		}
		return Plan{}, err
	}
	var changes []Change
	seen := map[int]bool{}
	for _, want := range in.Libraries {
		if seen[want.ID] {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "library %d is named twice", want.ID)
		}
		seen[want.ID] = true
		found := false
		for _, l := range libs {
			if l.ID != want.ID {
				continue
			}
			found = true
			if l.ShouldSyncItems != want.ShouldSyncItems {
				changes = append(changes, Change{Field: fmt.Sprintf("library %d (%s).shouldSyncItems", l.ID, l.Name), From: l.ShouldSyncItems, To: want.ShouldSyncItems})
			}
		}
		if !found {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "library %d does not belong to Jellyfin source %d (see ersatztv_get_jellyfin_libraries)", want.ID, in.ID)
		}
	}
	if len(changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("Jellyfin source %d", in.ID))
	}
	return Plan{
		Action: fmt.Sprintf("set library sync on Jellyfin source %d", in.ID), Changes: changes,
		Request: s.request(http.MethodPut, map[string]any{"libraries": in.Libraries}, "media-sources", "jellyfin", itoa(in.ID), "libraries"),
		Notes:   []string{fmt.Sprintf("%d other librar(ies) of this source are untouched", len(libs)-len(in.Libraries))},
	}, nil
}

// jellyfinSource finds a Jellyfin media source by id.
func (s *Service) jellyfinSource(ctx context.Context, id int) (map[string]any, error) {
	var rows []map[string]any
	if _, err := s.c.GetInto(ctx, []string{"media-sources"}, nil, &rows); err != nil {
		return nil, err
	}
	for _, r := range rows {
		if n, ok := r["id"].(float64); ok && int(n) == id && r["kind"] == "Jellyfin" {
			return r, nil
		}
	}
	return nil, toolerr.New(toolerr.NotFound, "ErsatzTV has no Jellyfin media source %d (see ersatztv_list_media_sources)", id)
}

func (s *Service) jellyfinJob(what, action string) func(context.Context, idArgs) (Plan, error) {
	return func(ctx context.Context, in idArgs) (Plan, error) {
		src, err := s.jellyfinSource(ctx, in.ID)
		if err != nil {
			return Plan{}, err
		}
		return Plan{Action: fmt.Sprintf("%s Jellyfin source %d", what, in.ID), Target: summary(src, "id", "name"),
			Request: s.request(http.MethodPost, nil, "media-sources", "jellyfin", itoa(in.ID), action)}, nil
	}
}

// scanLibrary queues a scan in either API. Upstream ErsatzTV lists no
// libraries, so its preview can only name the id.
func (s *Service) scanLibrary() toolkit.Tool {
	return writeTool(s, "ersatztv_scan_library", "Queue a scan of a library.", updates,
		func(ctx context.Context, in idArgs) (Plan, error) {
			p := Plan{Action: fmt.Sprintf("queue a scan of library %d", in.ID), Request: s.request(http.MethodPost, nil, "libraries", itoa(in.ID), "scan")}
			if s.Mode() == client.Legacy {
				// QueueLibraryScanByLibraryIdHandler: the scan is queued
				// only if no scan of the library holds its lock, and a
				// media server library with sync off is refused like an
				// unknown id.
				p.Notes = []string{
					"upstream ErsatzTV has no list of libraries to check the id against; it answers not_found for an unknown id and also for a Plex, Jellyfin or Emby library whose sync is off",
					"a Plex, Jellyfin or Emby library's scan first refreshes its media source's list of libraries",
				}
				p.Queued = "ErsatzTV answers OK without queueing anything when a scan of this library is already running; the scan then is the running one"
				return p, nil
			}
			var libs []map[string]any
			if _, err := s.c.GetInto(ctx, []string{"libraries", "local"}, nil, &libs); err != nil {
				return Plan{}, err
			}
			for _, l := range libs {
				if n, ok := l["id"].(float64); ok && int(n) == in.ID {
					p.Target = summary(l, "id", "name", "mediaKind")
					return p, nil
				}
			}
			p.Notes = []string{"not a local library; ErsatzTV answers not_found if no library has this id"}
			return p, nil
		})
}
