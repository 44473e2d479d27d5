package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

// maxMembers bounds how many items of a collection a preview reads.
const maxMembers = 5000

// kinds are ErsatzTV's media kinds: the search type of each and the id
// bucket add_collection_items and search_all_items name it by.
var kinds = []struct{ search, bucket string }{
	{"movie", "movieIds"}, {"show", "showIds"}, {"season", "seasonIds"}, {"episode", "episodeIds"},
	{"artist", "artistIds"}, {"music_video", "musicVideoIds"}, {"other_video", "otherVideoIds"},
	{"song", "songIds"}, {"image", "imageIds"}, {"remote_stream", "remoteStreamIds"},
}

type (
	nameOnlyArgs struct {
		Name string `json:"name" schema:"minLength=1,maxLength=50"`
	}
	updateCollectionArgs struct {
		ID                     int     `json:"id" schema:"minimum=1"`
		Name                   *string `json:"name,omitempty" schema:"minLength=1,maxLength=50"`
		UseCustomPlaybackOrder *bool   `json:"useCustomPlaybackOrder,omitempty"`
	}
	// addItemsArgs has one id list per media kind.
	addItemsArgs struct {
		ID              int   `json:"id" schema:"minimum=1"`
		MovieIDs        []int `json:"movieIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		ShowIDs         []int `json:"showIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		SeasonIDs       []int `json:"seasonIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		EpisodeIDs      []int `json:"episodeIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		ArtistIDs       []int `json:"artistIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		MusicVideoIDs   []int `json:"musicVideoIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		OtherVideoIDs   []int `json:"otherVideoIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		SongIDs         []int `json:"songIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		ImageIDs        []int `json:"imageIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
		RemoteStreamIDs []int `json:"remoteStreamIds,omitempty" schema:"maxItems=500,uniqueItems,items.minimum=1"`
	}
	removeItemArgs struct {
		ID          int `json:"id" schema:"minimum=1"`
		MediaItemID int `json:"mediaItemId" schema:"minimum=1"`
	}
	customIndex struct {
		MediaItemID int `json:"mediaItemId" schema:"minimum=1"`
		CustomIndex int `json:"customIndex" schema:"minimum=0"`
	}
	customOrderArgs struct {
		ID      int           `json:"id" schema:"minimum=1"`
		Order   []customIndex `json:"order" schema:"minItems=1,maxItems=1000"`
		IfMatch string        `json:"ifMatch,omitempty" schema:"maxLength=130,pattern=^(\\*|(W/)?\"[!#-~]*\"|[!#-~]+)$"`
	}
)

func (a addItemsArgs) buckets() [][]int {
	return [][]int{a.MovieIDs, a.ShowIDs, a.SeasonIDs, a.EpisodeIDs, a.ArtistIDs, a.MusicVideoIDs, a.OtherVideoIDs, a.SongIDs, a.ImageIDs, a.RemoteStreamIDs}
}

func (s *Service) collectionWrites() []toolkit.Tool {
	return []toolkit.Tool{
		writeTool(s, "ersatztv_create_collection", "Create a collection.", creates,
			func(ctx context.Context, in nameOnlyArgs) (Plan, error) {
				if err := s.collectionNameTaken(ctx, in.Name, 0); err != nil {
					return Plan{}, err
				}
				return Plan{Action: "create collection " + in.Name, Request: s.request(http.MethodPost, map[string]any{"name": in.Name}, "collections")}, nil
			}),
		writeTool(s, "ersatztv_update_collection", "Rename a collection or set useCustomPlaybackOrder; the other is kept.", updates, s.updateCollection),
		writeTool(s, "ersatztv_delete_collection", "Delete a collection and everything using it (schedule, block, playlist items).", destructive, s.deleteCollection),
		writeTool(s, "ersatztv_add_collection_items", "Add media to a collection, ids by kind (from search_all_items); the preview shows which exist and which are new.", updates, s.addItems),
		writeTool(s, "ersatztv_remove_collection_item", "Remove one item from a collection.", destructive, s.removeItem),
		writeTool(s, "ersatztv_update_collection_custom_order", "Set the customIndex of some items; the others keep theirs. ifMatch: the etag of get_collection_items.", updates, s.customOrder),
	}
}

// collectionNameTaken names the other collection called name, if any:
// Create/UpdateCollectionHandler refuse it ("Collection name must be
// unique", an exact match; at most 50 characters).
func (s *Service) collectionNameTaken(ctx context.Context, name string, except int) error {
	taken, err := s.rowsWhere(ctx, "collections", true, func(c map[string]any) bool {
		id, _ := c["id"].(float64)
		return c["name"] == name && int(id) != except
	})
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return toolerr.New(toolerr.InvalidArgument, "collection %v is already named %q; collection names are unique", taken[0]["id"], name)
	}
	return nil
}

func (s *Service) updateCollection(ctx context.Context, in updateCollectionArgs) (Plan, error) {
	cur, err := s.current(ctx, "collection", "collections", itoa(in.ID))
	if err != nil {
		return Plan{}, err
	}
	if in.Name != nil {
		if err := s.collectionNameTaken(ctx, *in.Name, in.ID); err != nil {
			return Plan{}, err
		}
	}
	// ErsatzTV requires the name on every update and leaves an absent
	// useCustomPlaybackOrder alone: send the name always, the flag only
	// when it is set.
	fields := []string{"name"}
	if in.UseCustomPlaybackOrder != nil {
		fields = append(fields, "useCustomPlaybackOrder")
	}
	set, err := fieldsOf(in, "id")
	if err != nil {
		return Plan{}, err
	}
	r, err := replace(cur, fields, set, nil)
	if err != nil {
		return Plan{}, err
	}
	if len(r.Changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("collection %d", in.ID))
	}
	return Plan{Action: fmt.Sprintf("update collection %d", in.ID), Target: summary(cur, "id", "name"), Changes: r.Changes, Kept: r.Kept,
		Request: s.request(http.MethodPut, r.Body, "collections", itoa(in.ID))}, nil
}

// member is one item of a collection as its items page reports it.
type member struct {
	MediaItemID int    `json:"mediaItemId"`
	Kind        string `json:"kind"`
	Title       string `json:"title"`
	CustomIndex *int   `json:"customIndex"`
}

// members reads every item of a collection, page by page, and the ETag
// they were read under; a collection that changes while it is read is
// reported rather than mixed.
func (s *Service) members(ctx context.Context, id int) (map[string]any, []member, string, error) {
	coll, err := s.current(ctx, "collection", "collections", itoa(id))
	if err != nil {
		return nil, nil, "", err
	}
	var all []member
	etag := ""
	for num := 0; ; num++ {
		var page struct {
			TotalCount int      `json:"totalCount"`
			Page       []member `json:"page"`
		}
		q := url.Values{"pageNum": {itoa(num)}, "pageSize": {itoa(pageCap)}}
		resp, err := s.c.GetInto(ctx, []string{"collections", itoa(id), "items"}, q, &page)
		if err != nil {
			return nil, nil, "", err
		}
		switch {
		case page.TotalCount > maxMembers:
			return nil, nil, "", toolerr.New(toolerr.TooLarge, "collection %d has %d items; previews read at most %d", id, page.TotalCount, maxMembers)
		case num > 0 && resp.ETag != etag:
			return nil, nil, "", toolerr.New(toolerr.Busy, "collection %d changed while it was read; try again", id)
		}
		etag = resp.ETag
		all = append(all, page.Page...)
		if len(page.Page) == 0 || len(all) >= page.TotalCount {
			return coll, all, etag, nil
		}
	}
}

// addItems previews an idempotent add: which of the ids exist (the real
// endpoint rejects the whole batch on one unknown id, so an unknown id is
// refused here, before anything is sent) and which are not in the
// collection yet. The confirm sends only the new ones.
func (s *Service) addItems(ctx context.Context, in addItemsArgs) (Plan, error) {
	total := 0
	for _, b := range in.buckets() {
		total += len(b)
	}
	if total == 0 {
		return Plan{}, toolerr.New(toolerr.InvalidArgument, "name at least one id (movieIds, artistIds, …; ids from ersatztv_search_all_items)")
	}
	if total > 500 {
		return Plan{}, toolerr.New(toolerr.InvalidArgument, "at most 500 ids per call; split the batch")
	}
	coll, items, _, err := s.members(ctx, in.ID)
	if err != nil {
		return Plan{}, err
	}
	present := map[int]bool{}
	for _, m := range items {
		present[m.MediaItemID] = true
	}
	body, already, unknown := map[string]any{}, map[string][]int{}, map[string][]int{}
	added := 0
	for i, ids := range in.buckets() {
		if len(ids) == 0 {
			continue
		}
		k := kinds[i]
		exist, err := s.existing(ctx, k.search, ids)
		if err != nil {
			return Plan{}, err
		}
		var fresh []int
		for _, id := range ids {
			switch {
			case !exist[id]:
				unknown[k.bucket] = append(unknown[k.bucket], id)
			case present[id]:
				already[k.bucket] = append(already[k.bucket], id)
			default:
				fresh = append(fresh, id)
			}
		}
		if len(fresh) > 0 {
			body[k.bucket] = fresh
			added += len(fresh)
		}
	}
	if len(unknown) > 0 {
		return Plan{}, toolerr.New(toolerr.InvalidArgument,
			"ErsatzTV has no media item of that kind for %s; it would reject the whole batch, so nothing is proposed: drop them or search again", describeIDs(unknown))
	}
	if added == 0 {
		return Plan{}, toolerr.New(toolerr.InvalidArgument, "every id is already in collection %d; nothing to add (adding is idempotent)", in.ID)
	}
	return Plan{
		Action: fmt.Sprintf("add %d item(s) to collection %d", added, in.ID), Target: summary(coll, "id", "name", "itemCount"),
		Request: s.request(http.MethodPost, body, "collections", itoa(in.ID), "items"),
		Extra:   map[string]any{"allExist": true, "new": body, "alreadyInCollection": already},
	}, nil
}

func describeIDs(m map[string][]int) string {
	var parts []string
	for bucket, ids := range m {
		if len(ids) > 20 {
			parts = append(parts, fmt.Sprintf("%s %v and %d more", bucket, ids[:20], len(ids)-20))
		} else {
			parts = append(parts, fmt.Sprintf("%s %v", bucket, ids))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// existing asks the search index which ids exist as kind.
func (s *Service) existing(ctx context.Context, kind string, ids []int) (map[int]bool, error) {
	out := map[int]bool{}
	const chunk = 200
	for i := 0; i < len(ids); i += chunk {
		part := ids[i:min(len(ids), i+chunk)]
		terms := make([]string, len(part))
		for j, id := range part {
			terms[j] = itoa(id)
		}
		q := url.Values{"query": {"type:" + kind + " AND id:(" + strings.Join(terms, " OR ") + ")"}, "pageNum": {"0"}, "pageSize": {itoa(allItemsCap)}}
		var res map[string]any
		if _, err := s.c.GetInto(ctx, []string{"search", "all-items"}, q, &res); err != nil {
			return nil, err
		}
		for _, k := range kinds {
			if k.search != kind {
				continue
			}
			list, _ := res[k.bucket].([]any)
			for _, v := range list {
				if n, ok := v.(float64); ok {
					out[int(n)] = true
				}
			}
		}
	}
	return out, nil
}

func (s *Service) removeItem(ctx context.Context, in removeItemArgs) (Plan, error) {
	coll, items, _, err := s.members(ctx, in.ID)
	if err != nil {
		return Plan{}, err
	}
	i := slices.IndexFunc(items, func(m member) bool { return m.MediaItemID == in.MediaItemID })
	if i < 0 {
		return Plan{}, toolerr.New(toolerr.NotFound, "media item %d is not in collection %d", in.MediaItemID, in.ID)
	}
	return Plan{
		Action:  fmt.Sprintf("remove media item %d from collection %d", in.MediaItemID, in.ID),
		Target:  map[string]any{"collection": summary(coll, "id", "name"), "item": items[i]},
		Request: s.request(http.MethodDelete, nil, "collections", itoa(in.ID), "items", itoa(in.MediaItemID)),
	}, nil
}

// customOrder turns the indexes the user wants into the complete order
// the replace-all PUT needs: every item keeps its current index unless
// named, and the PUT carries the ETag the items were read under, so a
// concurrent change answers 412 and nothing is written.
func (s *Service) customOrder(ctx context.Context, in customOrderArgs) (Plan, error) {
	coll, items, etag, err := s.members(ctx, in.ID)
	if err != nil {
		return Plan{}, err
	}
	if want := normalizeETag(in.IfMatch); want != "" && want != "*" && want != etag {
		return Plan{}, toolerr.New(toolerr.Forbidden,
			"collection %d changed since its etag %s was read (now %s); nothing was changed: read it again with ersatztv_get_collection_items", in.ID, want, etag)
	}
	if etag == "" {
		return Plan{}, toolerr.New(toolerr.UpstreamUnavailable, "ErsatzTV sent no ETag for collection %d's items, so a concurrent change could not be detected; not proposing a replace", in.ID)
	}
	wanted := map[int]int{}
	for _, o := range in.Order {
		if _, dup := wanted[o.MediaItemID]; dup {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "media item %d is named twice", o.MediaItemID)
		}
		wanted[o.MediaItemID] = o.CustomIndex
	}
	type entry struct {
		MediaItemID int `json:"mediaItemId"`
		CustomIndex int `json:"customIndex"`
	}
	var order []entry
	var changes []Change
	kept := 0
	for _, m := range items {
		idx, named := wanted[m.MediaItemID]
		delete(wanted, m.MediaItemID)
		switch {
		case named:
			order = append(order, entry{m.MediaItemID, idx})
			if m.CustomIndex == nil || *m.CustomIndex != idx {
				var from any
				if m.CustomIndex != nil {
					from = *m.CustomIndex
				}
				changes = append(changes, Change{Field: fmt.Sprintf("%d (%s)", m.MediaItemID, m.Title), From: from, To: idx})
			}
		case m.CustomIndex != nil:
			order = append(order, entry{m.MediaItemID, *m.CustomIndex})
			kept++
		}
	}
	if len(wanted) > 0 {
		var missing []int
		for id := range wanted {
			missing = append(missing, id)
		}
		sort.Ints(missing)
		return Plan{}, toolerr.New(toolerr.InvalidArgument, "not in collection %d: media items %v", in.ID, missing)
	}
	if len(changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("collection %d's custom order", in.ID))
	}
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].CustomIndex != order[j].CustomIndex {
			return order[i].CustomIndex < order[j].CustomIndex
		}
		return order[i].MediaItemID < order[j].MediaItemID
	})
	req := s.request(http.MethodPut, map[string]any{"mediaItemCustomOrders": order}, "collections", itoa(in.ID), "custom-order")
	req.IfMatch = etag
	return Plan{
		Action: fmt.Sprintf("replace collection %d's custom order with the complete list below (items left out of it lose their index)", in.ID),
		Target: summary(coll, "id", "name", "useCustomPlaybackOrder"), Changes: changes, Request: req,
		Notes: []string{fmt.Sprintf("%d other item(s) keep their index; the request carries If-Match %s, so a change in between is refused (412) and nothing is written", kept, etag)},
	}, nil
}

// normalizeETag quotes a bare tag ("3" → "\"3\"").
func normalizeETag(tag string) string {
	if tag == "" || tag == "*" || strings.HasPrefix(tag, `"`) || strings.HasPrefix(tag, `W/"`) {
		return tag
	}
	return `"` + tag + `"`
}

// --- smart collections (both APIs) -----------------------------------------

type (
	// ErsatzTV refuses a smart collection name that is empty, longer
	// than 50 characters or another's (Create/UpdateSmartCollectionHandler).
	smartArgs struct {
		Name  string `json:"name" schema:"minLength=1,maxLength=50"`
		Query string `json:"query" schema:"minLength=1,maxLength=2000"`
	}
	updateSmartArgs struct {
		ID    int     `json:"id" schema:"minimum=1"`
		Name  *string `json:"name,omitempty" schema:"minLength=1,maxLength=50"`
		Query *string `json:"query,omitempty" schema:"minLength=1,maxLength=2000"`
	}
)

func (s *Service) smartCollectionWrites() []toolkit.Tool {
	return []toolkit.Tool{
		writeTool(s, "ersatztv_create_smart_collection", "Create a smart collection: a name and a Lucene query.", creates, s.createSmart),
		writeTool(s, "ersatztv_update_smart_collection", "Change a smart collection's name or query; the other is kept. Playouts using it are rebuilt.", updates, s.updateSmart),
		writeTool(s, "ersatztv_delete_smart_collection", "Delete a smart collection and everything using it (schedule, block, playlist items).", destructive, s.deleteSmart),
	}
}

func (s *Service) smartList(ctx context.Context) ([]map[string]any, error) {
	path := []string{"smart-collections"}
	if s.Mode() == client.Legacy {
		path = []string{"collections", "smart"}
	}
	var rows []map[string]any
	_, err := s.c.GetInto(ctx, path, nil, &rows)
	return rows, err
}

// smart reads one smart collection: by id on /api/v1, from the list on
// upstream ErsatzTV, which has no single read.
func (s *Service) smart(ctx context.Context, id int) (map[string]any, error) {
	if s.Mode() == client.V1 {
		return s.current(ctx, "smart collection", "smart-collections", itoa(id))
	}
	rows, err := s.smartList(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if n, ok := r["id"].(float64); ok && int(n) == id {
			return r, nil
		}
	}
	return nil, toolerr.New(toolerr.NotFound, "ErsatzTV has no smart collection %d", id)
}

func (s *Service) createSmart(ctx context.Context, in smartArgs) (Plan, error) {
	rows, err := s.smartList(ctx)
	if err != nil {
		return Plan{}, err
	}
	for _, r := range rows {
		if r["name"] == in.Name {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "a smart collection is already named %q; names are unique", in.Name)
		}
	}
	body := map[string]any{"name": in.Name, "query": in.Query}
	req := s.request(http.MethodPost, body, "smart-collections")
	if s.Mode() == client.Legacy {
		req = s.request(http.MethodPost, body, "collections", "smart", "new")
	}
	return Plan{Action: "create smart collection " + in.Name, Request: req}, nil
}

// updateSmart sends the complete name and query (upstream ErsatzTV
// requires both, with the id), the current value of whichever is omitted.
func (s *Service) updateSmart(ctx context.Context, in updateSmartArgs) (Plan, error) {
	cur, err := s.smart(ctx, in.ID)
	if err != nil {
		return Plan{}, err
	}
	set, err := fieldsOf(in, "id")
	if err != nil {
		return Plan{}, err
	}
	r, err := replace(cur, []string{"name", "query"}, set, nil)
	if err != nil {
		return Plan{}, err
	}
	if len(r.Changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("smart collection %d", in.ID))
	}
	if in.Name != nil {
		// ErsatzTV refuses a name another smart collection has, with a
		// bare 500; say so before anything is sent.
		rows, err := s.smartList(ctx)
		if err != nil {
			return Plan{}, err
		}
		for _, row := range rows {
			if n, ok := row["id"].(float64); ok && int(n) != in.ID && row["name"] == *in.Name {
				return Plan{}, toolerr.New(toolerr.InvalidArgument, "another smart collection is already named %q; names are unique", *in.Name)
			}
		}
	}
	req := s.request(http.MethodPut, r.Body, "smart-collections", itoa(in.ID))
	if s.Mode() == client.Legacy {
		r.Body["id"] = in.ID
		req = s.request(http.MethodPut, r.Body, "collections", "smart", "update")
	}
	return Plan{Action: fmt.Sprintf("update smart collection %d", in.ID), Target: summary(cur, "id", "name"),
		Changes: r.Changes, Kept: r.Kept, Request: req,
		Notes: []string{"ErsatzTV then rebuilds (refresh mode) every playout whose schedule uses this smart collection"}}, nil
}

// deleteCollection previews a collection's delete: in ErsatzTV's data
// model everything that uses it goes too (ProgramScheduleItem-, BlockItem-,
// PlaylistItem-, FillerPreset-, DecoBreakContent-, RerunCollection-,
// PlayoutProgramScheduleAnchor- and the CollectionItem and
// MultiCollection join configurations: OnDelete Cascade).
func (s *Service) deleteCollection(ctx context.Context, in idArgs) (Plan, error) {
	p, err := s.deleteTarget("collection", "collections", "name", "itemCount")(ctx, in)
	if err != nil {
		return Plan{}, err
	}
	p.Notes = []string{"ErsatzTV's database deletes with it every schedule item, block item, playlist item, filler preset, deco break content, rerun collection, " +
		"multi-collection membership and playout anchor that uses this collection (cascade); schedules and playouts lose those items. The media items themselves stay"}
	return p, nil
}

func (s *Service) deleteSmart(ctx context.Context, in idArgs) (Plan, error) {
	cur, err := s.smart(ctx, in.ID)
	if err != nil {
		return Plan{}, err
	}
	req := s.request(http.MethodDelete, nil, "smart-collections", itoa(in.ID))
	if s.Mode() == client.Legacy {
		req = s.request(http.MethodDelete, nil, "collections", "smart", "delete", itoa(in.ID))
	}
	return Plan{Action: fmt.Sprintf("delete smart collection %d", in.ID), Target: summary(cur, "id", "name", "query"), Request: req,
		Notes: []string{"ErsatzTV's database deletes with it every schedule item, block item, playlist item, filler preset, deco, rerun collection, " +
			"multi-collection membership and playout anchor that uses this smart collection (cascade); schedules and playouts lose those items"}}, nil
}
