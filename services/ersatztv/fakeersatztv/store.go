// Package fakeersatztv is a fake ErsatzTV for tests and the demo profile, in
// the two shapes users run:
//
//   - V1 serves the versioned /api/v1 contract of ErsatzTV forks such as
//     ChicoryTV, as the seed describes it: X-Api-Key on every request (401
//     without), 0-based pageNum/pageSize clamped per endpoint with the
//     offset taken from the effective page size, ETag on the collection and
//     schedule item reads, If-Match on the custom-order replace (412 when
//     stale, 400 when malformed, "*" or none force-writes), 422 when a batch
//     names an unknown id, 204 for an idempotent add, full-replace PUTs that
//     write an omitted field as empty.
//   - Legacy serves upstream ErsatzTV's unversioned /api as its published
//     OpenAPI document describes it (checked in a test): no key, verb-style
//     paths, channels addressed by number strings, Problem (500) for a failed
//     command, the Blazor fallback page (200 text/html) for unknown paths, and
//     the Host check that answers 404 to management requests that arrive
//     neither on the UI port nor with a localhost host.
//
// Both fakes share one Store, so a test can look at what a write did.
package fakeersatztv

import (
	"slices"
	"sort"
	"strings"
	"sync"
)

// Channel is one channel with every field ErsatzTV's channel DTO carries.
type Channel struct {
	ID                            int      `json:"id"`
	Number                        string   `json:"number"`
	Name                          string   `json:"name"`
	Group                         string   `json:"group"`
	Categories                    string   `json:"categories"`
	FFmpegProfileID               int      `json:"ffmpegProfileId"`
	SlugSeconds                   *float64 `json:"slugSeconds"`
	Logo                          *Logo    `json:"logo"`
	StreamSelectorMode            string   `json:"streamSelectorMode"`
	StreamSelector                string   `json:"streamSelector"`
	PreferredAudioLanguageCode    string   `json:"preferredAudioLanguageCode"`
	PreferredAudioTitle           string   `json:"preferredAudioTitle"`
	PlayoutSource                 string   `json:"playoutSource"`
	PlayoutMode                   string   `json:"playoutMode"`
	MirrorSourceChannelID         *int     `json:"mirrorSourceChannelId"`
	PlayoutOffset                 *string  `json:"playoutOffset"`
	StreamingMode                 string   `json:"streamingMode"`
	WatermarkID                   *int     `json:"watermarkId"`
	FallbackFillerID              *int     `json:"fallbackFillerId"`
	PreferredSubtitleLanguageCode string   `json:"preferredSubtitleLanguageCode"`
	SubtitleMode                  string   `json:"subtitleMode"`
	MusicVideoCreditsMode         string   `json:"musicVideoCreditsMode"`
	MusicVideoCreditsTemplate     string   `json:"musicVideoCreditsTemplate"`
	SongVideoMode                 string   `json:"songVideoMode"`
	TranscodeMode                 string   `json:"transcodeMode"`
	IdleBehavior                  string   `json:"idleBehavior"`
	IsEnabled                     bool     `json:"isEnabled"`
	ShowInEpg                     bool     `json:"showInEpg"`
	GraphicsElementIDs            []int    `json:"graphicsElementIds"`
}

// Logo is a channel's artwork reference.
type Logo struct {
	Path        string `json:"path"`
	ContentType string `json:"contentType"`
}

// ChannelEnums are the channel's enum fields and their names, the first
// being what ErsatzTV writes when the field is left out.
var ChannelEnums = map[string][]string{
	"streamSelectorMode":    {"Default", "Custom", "Troubleshooting"},
	"playoutSource":         {"Generated", "Mirror"},
	"playoutMode":           {"Continuous", "OnDemand"},
	"streamingMode":         {"TransportStream", "HttpLiveStreamingDirect", "HttpLiveStreamingSegmenter", "TransportStreamHybrid"},
	"subtitleMode":          {"None", "Forced", "Default", "Any"},
	"musicVideoCreditsMode": {"None", "GenerateSubtitles"},
	"songVideoMode":         {"Default", "WithProgress"},
	"transcodeMode":         {"OnDemand"},
	"idleBehavior":          {"StopOnDisconnect", "KeepRunning"},
}

// Profile is an FFmpeg profile (the fields both APIs report).
type Profile struct {
	ID                    int    `json:"id"`
	Name                  string `json:"name"`
	ThreadCount           int    `json:"threadCount"`
	HardwareAcceleration  string `json:"hardwareAcceleration"`
	VaapiDisplay          string `json:"vaapiDisplay"`
	VaapiDriver           string `json:"vaapiDriver"`
	VaapiDevice           string `json:"vaapiDevice"`
	QsvExtraHardwareFrame *int   `json:"qsvExtraHardwareFrames"`
	ResolutionID          int    `json:"-"`
	ScalingBehavior       string `json:"scalingBehavior"`
	VideoFormat           string `json:"videoFormat"`
	VideoProfile          string `json:"videoProfile"`
	VideoPreset           string `json:"videoPreset"`
	AllowBFrames          bool   `json:"allowBFrames"`
	BitDepth              string `json:"bitDepth"`
	VideoBitrate          int    `json:"videoBitrate"`
	VideoBufferSize       int    `json:"videoBufferSize"`
	TonemapAlgorithm      string `json:"tonemapAlgorithm"`
	AudioFormat           string `json:"audioFormat"`
	AudioBitrate          int    `json:"audioBitrate"`
	AudioBufferSize       int    `json:"audioBufferSize"`
	NormalizeLoudnessMode string `json:"normalizeLoudnessMode"`
	AudioChannels         int    `json:"audioChannels"`
	AudioSampleRate       int    `json:"audioSampleRate"`
	NormalizeFramerate    bool   `json:"normalizeFramerate"`
	DeinterlaceVideo      bool   `json:"deinterlaceVideo"`
}

// Resolution is a named frame size.
type Resolution struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
	IsCustom bool   `json:"isCustom"`
}

// MediaItem is one item of a library: a movie, a show, an episode, an
// artist, a song, …; ids are unique across kinds, as in ErsatzTV.
type MediaItem struct {
	ID        int
	Kind      string // a search type: movie, show, season, episode, artist, music_video, other_video, song, image, remote_stream
	Title     string
	Year      int
	LibraryID int
}

// Kinds are the media kinds in the order of ErsatzTV's id buckets, with
// the JSON name of each bucket.
var Kinds = []struct{ Kind, Bucket string }{
	{"movie", "movieIds"}, {"show", "showIds"}, {"season", "seasonIds"}, {"episode", "episodeIds"},
	{"artist", "artistIds"}, {"music_video", "musicVideoIds"}, {"other_video", "otherVideoIds"},
	{"song", "songIds"}, {"image", "imageIds"}, {"remote_stream", "remoteStreamIds"},
}

// Member is a media item in a collection, with its custom playback index.
type Member struct {
	MediaItemID int
	CustomIndex *int
}

// Collection is a manual collection.
type Collection struct {
	ID                     int
	Name                   string
	UseCustomPlaybackOrder bool
	Members                []Member
	// Version is the collection's ETag; every change of its items bumps it.
	Version int
}

// SmartCollection is a saved search.
type SmartCollection struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Query string `json:"query"`
}

// Schedule is a classic schedule.
type Schedule struct {
	ID                            int            `json:"id"`
	Name                          string         `json:"name"`
	KeepMultiPartEpisodesTogether bool           `json:"keepMultiPartEpisodesTogether"`
	TreatCollectionsAsShows       bool           `json:"treatCollectionsAsShows"`
	ShuffleScheduleItems          bool           `json:"shuffleScheduleItems"`
	RandomStartPoint              bool           `json:"randomStartPoint"`
	FixedStartTimeBehavior        string         `json:"fixedStartTimeBehavior"`
	PadToNearestMinute            *int           `json:"padToNearestMinute"`
	Items                         []ScheduleItem `json:"-"`
	Version                       int            `json:"-"`
}

// ScheduleItem is one item of a classic schedule.
type ScheduleItem struct {
	ID             int     `json:"id"`
	Index          int     `json:"index"`
	StartType      string  `json:"startType"`
	StartTime      *string `json:"startTime"`
	PlayoutMode    string  `json:"playoutMode"`
	CollectionType string  `json:"collectionType"`
	CollectionID   *int    `json:"collectionId"`
	PlaybackOrder  string  `json:"playbackOrder"`
	CustomTitle    *string `json:"customTitle"`
}

// Playout ties a channel to what it plays.
type Playout struct {
	ID                int
	ChannelID         int
	ProgramScheduleID *int
	ScheduleKind      string
	ScheduleFile      *string
	DailyRebuildTime  *string
	Items             []PlayoutItem
	// Resets counts playout resets (POST …/playout/reset); Refreshes the
	// refresh builds other writes queue.
	Resets, Refreshes int
}

// PlayoutItem is one scheduled item.
type PlayoutItem struct {
	ID          int    `json:"id"`
	MediaItemID int    `json:"mediaItemId"`
	Title       string `json:"title"`
	Start       string `json:"start"`
	Finish      string `json:"finish"`
	IsFiller    bool   `json:"isFiller"`
}

// MediaSource is a media server or the local source.
type MediaSource struct {
	ID        int
	Kind      string // Local, Jellyfin, Plex, Emby
	Name      string
	Address   string
	Libraries []Library
	// Refreshes and CollectionScans count the queued jobs.
	Refreshes, CollectionScans int
}

// Library is a library of a media source.
type Library struct {
	ID              int      `json:"id"`
	Name            string   `json:"name"`
	MediaKind       string   `json:"mediaKind"`
	ShouldSyncItems bool     `json:"shouldSyncItems"`
	Paths           []string `json:"-"`
	// Scans counts queued scans; Progress is set while one runs.
	Scans    int      `json:"-"`
	Progress *float64 `json:"-"`
}

// Session is a running HLS session.
type Session struct {
	ChannelNumber   string `json:"channelNumber"`
	State           string `json:"state"`
	TranscodedUntil string `json:"transcodedUntil"`
	LastAccess      string `json:"lastAccess"`
}

// Store is the fake's data. Its exported fields may be read and changed
// by a test while holding Lock.
type Store struct {
	sync.Mutex
	AppVersion       string
	Channels         []*Channel
	Profiles         []*Profile
	Resolutions      []*Resolution
	Items            []*MediaItem
	Collections      []*Collection
	SmartCollections []*SmartCollection
	Schedules        []*Schedule
	Playouts         []*Playout
	Sources          []*MediaSource
	Sessions         []*Session
	nextID           int
}

func (s *Store) id() int {
	if s.nextID == 0 {
		s.nextID = 1000
	}
	s.nextID++
	return s.nextID
}

func (s *Store) channel(id int) *Channel {
	for _, c := range s.Channels {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (s *Store) channelByNumber(n string) *Channel {
	for _, c := range s.Channels {
		if c.Number == n {
			return c
		}
	}
	return nil
}

func (s *Store) profile(id int) *Profile {
	for _, p := range s.Profiles {
		if p.ID == id {
			return p
		}
	}
	return nil
}

func (s *Store) resolution(id int) *Resolution {
	for _, r := range s.Resolutions {
		if r.ID == id {
			return r
		}
	}
	return nil
}

func (s *Store) item(id int) *MediaItem {
	for _, m := range s.Items {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Collection returns the collection with id, or nil.
func (s *Store) Collection(id int) *Collection {
	for _, c := range s.Collections {
		if c.ID == id {
			return c
		}
	}
	return nil
}

func (s *Store) smart(id int) *SmartCollection {
	for _, c := range s.SmartCollections {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Schedule returns the schedule with id, or nil.
func (s *Store) Schedule(id int) *Schedule {
	for _, c := range s.Schedules {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// Playout returns the playout with id, or nil.
func (s *Store) Playout(id int) *Playout {
	for _, p := range s.Playouts {
		if p.ID == id {
			return p
		}
	}
	return nil
}

func (s *Store) playoutOf(channelID int) *Playout {
	for _, p := range s.Playouts {
		if p.ChannelID == channelID {
			return p
		}
	}
	return nil
}

// Channel returns the channel with id, or nil.
func (s *Store) Channel(id int) *Channel { return s.channel(id) }

func (s *Store) source(id int) *MediaSource {
	for _, m := range s.Sources {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (s *Store) library(id int) *Library {
	for _, m := range s.Sources {
		for i := range m.Libraries {
			if m.Libraries[i].ID == id {
				return &m.Libraries[i]
			}
		}
	}
	return nil
}

// sourceOf returns the media source of library id (the library exists).
func (s *Store) sourceOf(id int) *MediaSource {
	for _, m := range s.Sources {
		for i := range m.Libraries {
			if m.Libraries[i].ID == id {
				return m
			}
		}
	}
	return nil
}

// playoutsUsingSmart lists the playouts whose schedule has an item of
// smart collection id.
func (s *Store) playoutsUsingSmart(id int) []*Playout {
	var out []*Playout
	for _, p := range s.Playouts {
		if p.ProgramScheduleID == nil {
			continue
		}
		if sc := s.Schedule(*p.ProgramScheduleID); sc != nil {
			for _, it := range sc.Items {
				if it.CollectionType == "SmartCollection" && it.CollectionID != nil && *it.CollectionID == id {
					out = append(out, p)
					break
				}
			}
		}
	}
	return out
}

// Library returns the library with id, or nil.
func (s *Store) Library(id int) *Library { return s.library(id) }

// Source returns the media source with id, or nil.
func (s *Store) Source(id int) *MediaSource { return s.source(id) }

// sortedMembers orders a collection's items as ErsatzTV shows them:
// custom index first when set, then by id.
func sortedMembers(ms []Member) []Member {
	out := slices.Clone(ms)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.CustomIndex != nil && b.CustomIndex != nil && *a.CustomIndex != *b.CustomIndex:
			return *a.CustomIndex < *b.CustomIndex
		case (a.CustomIndex == nil) != (b.CustomIndex == nil):
			return a.CustomIndex != nil
		}
		return a.MediaItemID < b.MediaItemID
	})
	return out
}

func contains(haystack, needle string) bool {
	return strings.Contains(strings.ToLower(haystack), strings.ToLower(needle))
}
