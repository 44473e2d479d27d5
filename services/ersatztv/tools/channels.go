package tools

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/internal/upstream"
	"github.com/toolgate/toolgate/services/ersatztv/client"
)

// Channel fields besides name, number and ffmpegProfileId: with those,
// the 27 body fields of create; update adds graphicsElementIds. Enum
// fields take the enum's name.
type channelOptional struct {
	Group                         *string  `json:"group,omitempty" schema:"maxLength=100"`
	Categories                    *string  `json:"categories,omitempty" schema:"maxLength=200"`
	SlugSeconds                   *float64 `json:"slugSeconds,omitempty" schema:"minimum=0,maximum=60"`
	Logo                          *logo    `json:"logo,omitempty"`
	StreamSelectorMode            *string  `json:"streamSelectorMode,omitempty" schema:"enum=Default|Custom|Troubleshooting"`
	StreamSelector                *string  `json:"streamSelector,omitempty" schema:"maxLength=200"`
	PreferredAudioLanguageCode    *string  `json:"preferredAudioLanguageCode,omitempty" schema:"maxLength=10"`
	PreferredAudioTitle           *string  `json:"preferredAudioTitle,omitempty" schema:"maxLength=200"`
	PlayoutSource                 *string  `json:"playoutSource,omitempty" schema:"enum=Generated|Mirror"`
	PlayoutMode                   *string  `json:"playoutMode,omitempty" schema:"enum=Continuous|OnDemand"`
	MirrorSourceChannelID         *int     `json:"mirrorSourceChannelId,omitempty" schema:"minimum=1"`
	PlayoutOffset                 *string  `json:"playoutOffset,omitempty" schema:"pattern=^-?[0-9]{1,2}:[0-5][0-9]:[0-5][0-9]$"`
	StreamingMode                 *string  `json:"streamingMode,omitempty" schema:"enum=TransportStream|HttpLiveStreamingDirect|HttpLiveStreamingSegmenter|TransportStreamHybrid"`
	WatermarkID                   *int     `json:"watermarkId,omitempty" schema:"minimum=1"`
	FallbackFillerID              *int     `json:"fallbackFillerId,omitempty" schema:"minimum=1"`
	PreferredSubtitleLanguageCode *string  `json:"preferredSubtitleLanguageCode,omitempty" schema:"maxLength=10"`
	SubtitleMode                  *string  `json:"subtitleMode,omitempty" schema:"enum=None|Forced|Default|Any"`
	MusicVideoCreditsMode         *string  `json:"musicVideoCreditsMode,omitempty" schema:"enum=None|GenerateSubtitles"`
	MusicVideoCreditsTemplate     *string  `json:"musicVideoCreditsTemplate,omitempty" schema:"maxLength=200"`
	SongVideoMode                 *string  `json:"songVideoMode,omitempty" schema:"enum=Default|WithProgress"`
	TranscodeMode                 *string  `json:"transcodeMode,omitempty" schema:"enum=OnDemand"`
	IdleBehavior                  *string  `json:"idleBehavior,omitempty" schema:"enum=StopOnDisconnect|KeepRunning"`
	IsEnabled                     *bool    `json:"isEnabled,omitempty"`
	ShowInEpg                     *bool    `json:"showInEpg,omitempty"`
}

type logo struct {
	Path        string `json:"path" schema:"maxLength=500"`
	ContentType string `json:"contentType" schema:"maxLength=100"`
}

type (
	createChannelArgs struct {
		Name            string `json:"name" schema:"minLength=1,maxLength=50"`
		Number          string `json:"number" schema:"pattern=^[0-9]+(\\.[0-9]{1,2})?$"`
		FFmpegProfileID int    `json:"ffmpegProfileId" schema:"minimum=1"`
		channelOptional
	}
	updateChannelArgs struct {
		ID              int     `json:"id" schema:"minimum=1"`
		Name            *string `json:"name,omitempty" schema:"minLength=1,maxLength=50"`
		Number          *string `json:"number,omitempty" schema:"pattern=^[0-9]+(\\.[0-9]{1,2})?$"`
		FFmpegProfileID *int    `json:"ffmpegProfileId,omitempty" schema:"minimum=1"`
		channelOptional
		GraphicsElementIDs []int    `json:"graphicsElementIds,omitempty" schema:"maxItems=50,uniqueItems,items.minimum=1"`
		Clear              []string `json:"clear,omitempty" schema:"uniqueItems,items.enum=slugSeconds|logo|mirrorSourceChannelId|playoutOffset|watermarkId|fallbackFillerId|graphicsElementIds"`
	}
	legacyResetArgs struct {
		Number string `json:"number" schema:"pattern=^[0-9]+(\\.[0-9]{1,2})?$"`
	}
)

// channelUpdateFields are the 28 body fields of PUT /channels/{id}.
var channelUpdateFields = []string{"name", "number", "group", "categories", "ffmpegProfileId", "slugSeconds", "logo",
	"streamSelectorMode", "streamSelector", "preferredAudioLanguageCode", "preferredAudioTitle", "playoutSource", "playoutMode",
	"mirrorSourceChannelId", "playoutOffset", "streamingMode", "watermarkId", "fallbackFillerId", "preferredSubtitleLanguageCode",
	"subtitleMode", "musicVideoCreditsMode", "musicVideoCreditsTemplate", "songVideoMode", "transcodeMode", "idleBehavior",
	"isEnabled", "showInEpg", "graphicsElementIds"}

func (s *Service) channelWrites() []toolkit.Tool {
	return []toolkit.Tool{
		writeTool(s, "ersatztv_create_channel", "Create a channel: name, number, ffmpegProfileId; other fields default.", creates, s.createChannel),
		writeTool(s, "ersatztv_update_channel", "Change channel fields; all others are kept, graphicsElementIds too. clear empties a field.", updates, s.updateChannel),
		writeTool(s, "ersatztv_reset_channel_playout", "Rebuild a channel's playout from scratch. id: the channel (a playout row's channelId).", resets, s.resetPlayout),
		writeTool(s, "ersatztv_delete_channel", "Delete a channel and its playout.", destructive, s.deleteTarget("channel", "channels", "number", "name")),
	}
}

// current reads one object for a preview.
func (s *Service) current(ctx context.Context, what string, segs ...string) (map[string]any, error) {
	v, _, err := s.c.Get(ctx, segs, nil)
	if err != nil {
		if client.IsNotFound(err) {
			return nil, upstream.Explain(toolerr.Wrap(toolerr.NotFound, err, "ErsatzTV has no %s %s", what, segs[len(segs)-1]))
		}
		return nil, err
	}
	return object(v, what)
}

func (s *Service) profileExists(ctx context.Context, id int) error {
	if _, err := s.current(ctx, "FFmpeg profile", "ffmpeg", "profiles", itoa(id)); err != nil {
		if toolerr.CodeOf(err) == toolerr.NotFound {
			return toolerr.New(toolerr.InvalidArgument, "ffmpegProfileId %d is no FFmpeg profile (see ersatztv_list_ffmpeg_profiles)", id)
		}
		return err
	}
	return nil
}

// numberTaken names the channel that has number, if any.
func (s *Service) numberTaken(ctx context.Context, number string, except int) error {
	var rows []struct {
		ID     int    `json:"id"`
		Number string `json:"number"`
		Name   string `json:"name"`
	}
	if _, err := s.c.GetInto(ctx, []string{"channels"}, nil, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Number == number && r.ID != except {
			return toolerr.New(toolerr.InvalidArgument, "channel number %s is taken by channel %d (%s)", number, r.ID, r.Name)
		}
	}
	return nil
}

func (s *Service) createChannel(ctx context.Context, in createChannelArgs) (Plan, error) {
	if err := s.numberTaken(ctx, in.Number, 0); err != nil {
		return Plan{}, err
	}
	if err := s.profileExists(ctx, in.FFmpegProfileID); err != nil {
		return Plan{}, err
	}
	body, err := fieldsOf(in)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Action: fmt.Sprintf("create channel %s (%s)", in.Number, in.Name), Request: s.request(http.MethodPost, body, "channels"),
		Notes: []string{"fields left out take ErsatzTV's defaults"}}, nil
}

func (s *Service) updateChannel(ctx context.Context, in updateChannelArgs) (Plan, error) {
	cur, err := s.current(ctx, "channel", "channels", itoa(in.ID))
	if err != nil {
		return Plan{}, err
	}
	set, err := fieldsOf(in, "id", "clear")
	if err != nil {
		return Plan{}, err
	}
	r, err := replace(cur, channelUpdateFields, set, in.Clear)
	if err != nil {
		return Plan{}, err
	}
	if len(r.Changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("channel %d", in.ID))
	}
	if in.Number != nil {
		if err := s.numberTaken(ctx, *in.Number, in.ID); err != nil {
			return Plan{}, err
		}
	}
	if in.FFmpegProfileID != nil {
		if err := s.profileExists(ctx, *in.FFmpegProfileID); err != nil {
			return Plan{}, err
		}
	}
	return Plan{
		Action: fmt.Sprintf("replace channel %d with the complete request below (a full replace: every field is sent)", in.ID),
		Target: summary(cur, "id", "number", "name"), Changes: r.Changes, Kept: r.Kept,
		Request: s.request(http.MethodPut, r.Body, "channels", itoa(in.ID)),
	}, nil
}

// playoutOf finds the playout of a channel by paging through the playouts.
func (s *Service) playoutOf(ctx context.Context, channelID int) (map[string]any, error) {
	found, err := s.playoutsWhere(ctx, true, func(p map[string]any) bool {
		n, ok := p["channelId"].(float64)
		return ok && int(n) == channelID
	})
	if err != nil || len(found) == 0 {
		return nil, err
	}
	return found[0], nil
}

// playoutsWhere pages through the playouts and returns those match
// accepts (only the first when first is set).
func (s *Service) playoutsWhere(ctx context.Context, first bool, match func(map[string]any) bool) ([]map[string]any, error) {
	return s.rowsWhere(ctx, "playouts", first, match)
}

// rowsWhere pages through a paged list and returns the rows match accepts
// (only the first when first is set).
func (s *Service) rowsWhere(ctx context.Context, kind string, first bool, match func(map[string]any) bool) ([]map[string]any, error) {
	const maxPages = 50
	var out []map[string]any
	for num := 0; num < maxPages; num++ {
		q := url.Values{"pageNum": {itoa(num)}, "pageSize": {itoa(pageCap)}}
		var page struct {
			TotalCount int              `json:"totalCount"`
			Page       []map[string]any `json:"page"`
		}
		if _, err := s.c.GetInto(ctx, []string{kind}, q, &page); err != nil {
			return nil, err
		}
		for _, p := range page.Page {
			if match(p) {
				out = append(out, p)
				if first {
					return out, nil
				}
			}
		}
		if (num+1)*pageCap >= page.TotalCount || len(page.Page) == 0 {
			return out, nil
		}
	}
	return nil, toolerr.New(toolerr.TooLarge, "more than %d %s; cannot look through them all", maxPages*pageCap, kind)
}

func (s *Service) resetPlayout(ctx context.Context, in idArgs) (Plan, error) {
	ch, err := s.current(ctx, "channel", "channels", itoa(in.ID))
	if err != nil {
		return Plan{}, err
	}
	p, err := s.playoutOf(ctx, in.ID)
	if err != nil {
		return Plan{}, err
	}
	if p == nil {
		return Plan{}, toolerr.New(toolerr.NotFound, "channel %d has no playout to reset (the id is a channel id; a playout row's channelId)", in.ID)
	}
	return Plan{
		Action:  fmt.Sprintf("reset the playout of channel %d: rebuild its schedule from scratch", in.ID),
		Target:  map[string]any{"channel": summary(ch, "id", "number", "name"), "playout": summary(p, "id", "scheduleKind", "scheduleName")},
		Request: s.request(http.MethodPost, nil, "channels", itoa(in.ID), "playout", "reset"),
	}, nil
}

// legacyReset resets by channel number, as upstream ErsatzTV addresses
// channels.
func (s *Service) legacyReset() toolkit.Tool {
	return writeTool(s, "ersatztv_reset_channel_playout", "Queue a rebuild of a channel's playout from scratch; its progress is lost. number: the channel's number.", resets,
		func(ctx context.Context, in legacyResetArgs) (Plan, error) {
			var rows []map[string]any
			if _, err := s.c.GetInto(ctx, []string{"channels"}, nil, &rows); err != nil {
				return Plan{}, err
			}
			for _, r := range rows {
				if r["number"] == in.Number {
					return Plan{
						Action:  fmt.Sprintf("reset the playout of channel %s: rebuild its schedule from scratch", in.Number),
						Target:  summary(r, "id", "number", "name"),
						Request: s.request(http.MethodPost, nil, "channels", in.Number, "playout", "reset"),
						Notes: []string{
							"a reset clears the playout's state (collection progress, rerun history, its items) and builds it again from now",
							"ErsatzTV answers not_found if the channel has no playout (this API cannot show it beforehand)",
						},
						// ChannelController writes BuildPlayout(Reset) to a
						// background worker and answers 200 at once.
						Queued: "ErsatzTV queued the rebuild and answered before it ran; a failed build is not reported here (see ErsatzTV's log)",
					}, nil
				}
			}
			return Plan{}, toolerr.New(toolerr.NotFound, "ErsatzTV has no channel numbered %s", in.Number)
		})
}

// deleteTarget previews a DELETE of kind/{id} by reading what it removes.
func (s *Service) deleteTarget(what, kind string, keys ...string) func(context.Context, idArgs) (Plan, error) {
	return func(ctx context.Context, in idArgs) (Plan, error) {
		cur, err := s.current(ctx, what, kind, itoa(in.ID))
		if err != nil {
			return Plan{}, err
		}
		return Plan{
			Action: fmt.Sprintf("delete %s %d", what, in.ID), Target: summary(cur, append([]string{"id"}, keys...)...),
			Request: s.request(http.MethodDelete, nil, kind, itoa(in.ID)),
		}, nil
	}
}

// --- schedules ---------------------------------------------------------

type (
	scheduleFields struct {
		KeepMultiPartEpisodesTogether *bool   `json:"keepMultiPartEpisodesTogether,omitempty"`
		TreatCollectionsAsShows       *bool   `json:"treatCollectionsAsShows,omitempty"`
		ShuffleScheduleItems          *bool   `json:"shuffleScheduleItems,omitempty"`
		RandomStartPoint              *bool   `json:"randomStartPoint,omitempty"`
		FixedStartTimeBehavior        *string `json:"fixedStartTimeBehavior,omitempty" schema:"enum=Strict|Flexible"`
		PadToNearestMinute            *int    `json:"padToNearestMinute,omitempty" schema:"minimum=1,maximum=60"`
	}
	createScheduleArgs struct {
		Name string `json:"name" schema:"minLength=1,maxLength=50"`
		scheduleFields
	}
	updateScheduleArgs struct {
		ID   int     `json:"id" schema:"minimum=1"`
		Name *string `json:"name,omitempty" schema:"minLength=1,maxLength=50"`
		scheduleFields
		Clear []string `json:"clear,omitempty" schema:"uniqueItems,items.enum=padToNearestMinute"`
	}
)

var scheduleUpdateFields = []string{"name", "keepMultiPartEpisodesTogether", "treatCollectionsAsShows", "shuffleScheduleItems",
	"randomStartPoint", "fixedStartTimeBehavior", "padToNearestMinute"}

func (s *Service) scheduleWrites() []toolkit.Tool {
	return []toolkit.Tool{
		writeTool(s, "ersatztv_create_schedule", "Create a schedule.", creates,
			func(ctx context.Context, in createScheduleArgs) (Plan, error) {
				if err := s.scheduleNameTaken(ctx, in.Name, 0); err != nil {
					return Plan{}, err
				}
				body, err := fieldsOf(in)
				if err != nil {
					return Plan{}, err
				}
				return Plan{Action: "create schedule " + in.Name, Request: s.request(http.MethodPost, body, "schedules")}, nil
			}),
		writeTool(s, "ersatztv_update_schedule", "Change schedule settings; all others are kept. clear empties padToNearestMinute.", updates, s.updateSchedule),
		writeTool(s, "ersatztv_delete_schedule", "Delete a schedule and every playout using it; the preview lists those channels.", destructive, s.deleteSchedule),
	}
}

// deleteSchedule previews a schedule's delete with what goes with it.
// ErsatzTV's data model (ProgramScheduleConfiguration: Items, Playouts
// and ProgramScheduleAlternates OnDelete Cascade) deletes every playout
// whose schedule it is, so those channels are left without one.
func (s *Service) deleteSchedule(ctx context.Context, in idArgs) (Plan, error) {
	cur, err := s.current(ctx, "schedule", "schedules", itoa(in.ID))
	if err != nil {
		return Plan{}, err
	}
	name, _ := cur["name"].(string)
	// Playout rows name their schedule; schedule names are unique
	// (ProgramScheduleConfiguration: a unique index on Name).
	using, err := s.playoutsWhere(ctx, false, func(p map[string]any) bool { return name != "" && p["scheduleName"] == name })
	if err != nil {
		return Plan{}, err
	}
	lost := make([]map[string]any, 0, len(using))
	for _, p := range using {
		lost = append(lost, summary(p, "id", "channelId", "channelNumber", "channelName"))
	}
	note := "ErsatzTV's database deletes with the schedule its items and alternates (cascade)"
	if len(lost) > 0 {
		note = fmt.Sprintf("ErsatzTV's database deletes with the schedule its items, its alternates and the %d playout(s) that use it (cascade): those channels are left without a playout until one is created", len(lost))
	}
	return Plan{Action: fmt.Sprintf("delete schedule %d", in.ID), Target: summary(cur, "id", "name"),
		Request: s.request(http.MethodDelete, nil, "schedules", itoa(in.ID)), Notes: []string{note},
		Extra: map[string]any{"playoutsDeleted": lost}}, nil
}

// scheduleNameTaken names the other schedule called name, if any: names
// are unique in ErsatzTV's data model (Create/UpdateProgramScheduleHandler
// "Schedule name must be unique", an exact match; at most 50 characters).
func (s *Service) scheduleNameTaken(ctx context.Context, name string, except int) error {
	var rows []struct {
		ID   int    `json:"id"`
		Name string `json:"name"`
	}
	if _, err := s.c.GetInto(ctx, []string{"schedules"}, nil, &rows); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Name == name && r.ID != except {
			return toolerr.New(toolerr.InvalidArgument, "schedule %d is already named %q; schedule names are unique", r.ID, name)
		}
	}
	return nil
}

func (s *Service) updateSchedule(ctx context.Context, in updateScheduleArgs) (Plan, error) {
	cur, err := s.current(ctx, "schedule", "schedules", itoa(in.ID))
	if err != nil {
		return Plan{}, err
	}
	if in.Name != nil {
		if err := s.scheduleNameTaken(ctx, *in.Name, in.ID); err != nil {
			return Plan{}, err
		}
	}
	set, err := fieldsOf(in, "id", "clear")
	if err != nil {
		return Plan{}, err
	}
	r, err := replace(cur, scheduleUpdateFields, set, in.Clear)
	if err != nil {
		return Plan{}, err
	}
	if len(r.Changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("schedule %d", in.ID))
	}
	return Plan{
		Action: fmt.Sprintf("replace schedule %d's settings with the complete request below (a full replace)", in.ID),
		Target: summary(cur, "id", "name"), Changes: r.Changes, Kept: r.Kept,
		Request: s.request(http.MethodPut, r.Body, "schedules", itoa(in.ID)),
	}, nil
}

// --- playouts ------------------------------------------------------------

type (
	createPlayoutArgs struct {
		ChannelID         int     `json:"channelId" schema:"minimum=1"`
		ScheduleKind      string  `json:"scheduleKind" schema:"enum=Classic|Block|Sequential|Scripted|ExternalJson"`
		ProgramScheduleID *int    `json:"programScheduleId,omitempty" schema:"minimum=1"`
		ScheduleFile      *string `json:"scheduleFile,omitempty" schema:"minLength=1,maxLength=500"`
	}
	updatePlayoutArgs struct {
		ID               int      `json:"id" schema:"minimum=1"`
		ScheduleFile     *string  `json:"scheduleFile,omitempty" schema:"minLength=1,maxLength=500"`
		DailyRebuildTime *string  `json:"dailyRebuildTime,omitempty" schema:"pattern=^([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]$"`
		Clear            []string `json:"clear,omitempty" schema:"uniqueItems,items.enum=dailyRebuildTime"`
	}
)

func (s *Service) playoutWrites() []toolkit.Tool {
	return []toolkit.Tool{
		writeTool(s, "ersatztv_create_playout", "Create a channel's playout: Classic needs programScheduleId; Sequential, Scripted, ExternalJson a scheduleFile.", creates, s.createPlayout),
		writeTool(s, "ersatztv_update_playout", "Set scheduleFile or dailyRebuildTime (HH:MM:SS); the other is kept. clear removes dailyRebuildTime.", updates, s.updatePlayout),
		writeTool(s, "ersatztv_delete_playout", "Delete a playout.", destructive, s.deleteTarget("playout", "playouts", "channelId", "channelNumber", "channelName", "scheduleName")),
	}
}

func (s *Service) createPlayout(ctx context.Context, in createPlayoutArgs) (Plan, error) {
	switch in.ScheduleKind {
	case "Classic":
		if in.ProgramScheduleID == nil || in.ScheduleFile != nil {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "a Classic playout takes programScheduleId and no scheduleFile")
		}
	case "Block":
		if in.ProgramScheduleID != nil || in.ScheduleFile != nil {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "a Block playout takes neither programScheduleId nor scheduleFile")
		}
	default:
		if in.ScheduleFile == nil || in.ProgramScheduleID != nil {
			return Plan{}, toolerr.New(toolerr.InvalidArgument, "a %s playout takes scheduleFile and no programScheduleId", in.ScheduleKind)
		}
	}
	ch, err := s.current(ctx, "channel", "channels", itoa(in.ChannelID))
	if err != nil {
		return Plan{}, err
	}
	target := map[string]any{"channel": summary(ch, "id", "number", "name")}
	if in.ProgramScheduleID != nil {
		sc, err := s.current(ctx, "schedule", "schedules", itoa(*in.ProgramScheduleID))
		if err != nil {
			return Plan{}, err
		}
		target["schedule"] = summary(sc, "id", "name")
	}
	body, err := fieldsOf(in)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Action: fmt.Sprintf("create a %s playout for channel %d", in.ScheduleKind, in.ChannelID), Target: target,
		Request: s.request(http.MethodPost, body, "playouts")}, nil
}

// updatePlayout sends dailyRebuildTime every time, because ErsatzTV clears
// it whenever it is absent: its current value unless it is changed or
// cleared. scheduleFile is sent only when it changes (absent means kept).
func (s *Service) updatePlayout(ctx context.Context, in updatePlayoutArgs) (Plan, error) {
	cur, err := s.current(ctx, "playout", "playouts", itoa(in.ID))
	if err != nil {
		return Plan{}, err
	}
	set, err := fieldsOf(in, "id", "clear")
	if err != nil {
		return Plan{}, err
	}
	fields := []string{"dailyRebuildTime"}
	if in.ScheduleFile != nil {
		fields = append([]string{"scheduleFile"}, fields...)
	}
	r, err := replace(cur, fields, set, in.Clear)
	if err != nil {
		return Plan{}, err
	}
	if len(r.Changes) == 0 {
		return Plan{}, nothingChanges(fmt.Sprintf("playout %d", in.ID))
	}
	return Plan{
		Action: fmt.Sprintf("update playout %d", in.ID),
		Target: summary(cur, "id", "channelId", "channelName", "scheduleKind"), Changes: r.Changes, Kept: r.Kept,
		Request: s.request(http.MethodPut, r.Body, "playouts", itoa(in.ID)),
		Notes:   []string{"dailyRebuildTime is always sent: ErsatzTV clears it when a request leaves it out"},
	}, nil
}
