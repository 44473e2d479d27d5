package fakeersatztv

import "time"

// DemoAPIKey is the v1 fake's key in tests; the demo profile reads its
// own from a secret file.
const DemoAPIKey = "demo-ersatztv-machine-key-0f3c9a"

func ptr[T any](v T) *T { return &v }

// NewDemoStore returns a small, plausible ErsatzTV: three channels, two
// FFmpeg profiles, a movie, TV and music library, collections, a smart
// collection, two schedules and two playouts. Playout ids overlap channel
// ids on purpose (playout 1 plays channel 3), as they do in ErsatzTV.
func NewDemoStore(now time.Time) *Store {
	s := &Store{AppVersion: "v25.6.0-chicory"}
	s.Profiles = []*Profile{
		{ID: 1, Name: "1080p H264 (software)", ThreadCount: 0, HardwareAcceleration: "None", VaapiDriver: "Default", VaapiDevice: "/dev/dri/renderD128",
			ResolutionID: 3, ScalingBehavior: "ScaleAndPad", VideoFormat: "H264", VideoProfile: "high", VideoPreset: "veryfast", BitDepth: "EightBit",
			VideoBitrate: 4000, VideoBufferSize: 8000, TonemapAlgorithm: "Linear", AudioFormat: "Aac", AudioBitrate: 192, AudioBufferSize: 384,
			NormalizeLoudnessMode: "Off", AudioChannels: 2, AudioSampleRate: 48, NormalizeFramerate: false, DeinterlaceVideo: true},
		{ID: 2, Name: "720p NVENC", ThreadCount: 0, HardwareAcceleration: "Nvenc", VaapiDriver: "Default", VaapiDevice: "",
			ResolutionID: 2, ScalingBehavior: "ScaleAndPad", VideoFormat: "Hevc", VideoProfile: "main", VideoPreset: "p4", BitDepth: "EightBit",
			VideoBitrate: 2500, VideoBufferSize: 5000, TonemapAlgorithm: "Hable", AudioFormat: "Aac", AudioBitrate: 128, AudioBufferSize: 256,
			NormalizeLoudnessMode: "LoudNorm", AudioChannels: 2, AudioSampleRate: 48, NormalizeFramerate: true, DeinterlaceVideo: true},
	}
	s.Resolutions = []*Resolution{
		{ID: 1, Name: "640x480", Width: 640, Height: 480}, {ID: 2, Name: "1280x720", Width: 1280, Height: 720},
		{ID: 3, Name: "1920x1080", Width: 1920, Height: 1080}, {ID: 4, Name: "3840x2160", Width: 3840, Height: 2160},
	}
	base := Channel{StreamSelectorMode: "Default", PlayoutSource: "Generated", PlayoutMode: "Continuous", StreamingMode: "TransportStreamHybrid",
		SubtitleMode: "None", MusicVideoCreditsMode: "None", SongVideoMode: "Default", TranscodeMode: "OnDemand", IdleBehavior: "StopOnDisconnect",
		IsEnabled: true, ShowInEpg: true, PreferredAudioLanguageCode: "eng", GraphicsElementIDs: []int{}}
	movies, cartoons, music := base, base, base
	movies.ID, movies.Number, movies.Name, movies.Group, movies.Categories, movies.FFmpegProfileID = 1, "1", "Classic Movies", "ErsatzTV", "Movies", 1
	movies.Logo = &Logo{Path: "logos/classic-movies.png", ContentType: "image/png"}
	movies.WatermarkID = ptr(3)
	movies.GraphicsElementIDs = []int{7} // the On Now/Next overlay
	cartoons.ID, cartoons.Number, cartoons.Name, cartoons.Group, cartoons.FFmpegProfileID = 2, "2", "Saturday Cartoons", "ErsatzTV", 2
	cartoons.PreferredSubtitleLanguageCode, cartoons.SubtitleMode = "eng", "Forced"
	music.ID, music.Number, music.Name, music.Group, music.FFmpegProfileID = 3, "3.1", "Music Videos", "Music", 1
	music.MusicVideoCreditsMode, music.SongVideoMode, music.StreamingMode = "GenerateSubtitles", "WithProgress", "HttpLiveStreamingSegmenter"
	s.Channels = []*Channel{&movies, &cartoons, &music}

	add := func(kind string, lib int, titles ...string) {
		for i, t := range titles {
			s.Items = append(s.Items, &MediaItem{ID: len(s.Items) + 101, Kind: kind, Title: t, Year: 1980 + i*3, LibraryID: lib})
		}
	}
	add("movie", 1, "The Thing", "Blade Runner", "Back to the Future", "Ghostbusters", "Aliens", "The Princess Bride")
	add("show", 2, "Looney Tunes", "DuckTales")
	add("season", 2, "Looney Tunes Season 1", "DuckTales Season 1")
	add("episode", 2, "Rabbit Seasoning", "Duck Amuck", "Don't Give Up the Sheep", "Woolly Mammoth", "Launchpad's Big Crash")
	add("artist", 3, "a-ha", "Talking Heads", "Eurythmics")
	add("music_video", 3, "Take On Me", "Once in a Lifetime", "Sweet Dreams", "Road to Nowhere")
	add("song", 3, "The Sun Always Shines on T.V.", "Burning Down the House")
	add("other_video", 4, "Station ident 1987")

	idOf := func(title string) int {
		for _, m := range s.Items {
			if m.Title == title {
				return m.ID
			}
		}
		panic("no demo item " + title)
	}
	s.Collections = []*Collection{
		{ID: 10, Name: "Friday Night Movies", Version: 1, Members: []Member{
			{MediaItemID: idOf("The Thing")}, {MediaItemID: idOf("Blade Runner")}, {MediaItemID: idOf("Aliens")}}},
		{ID: 11, Name: "80s Music Videos", UseCustomPlaybackOrder: true, Version: 4, Members: []Member{
			{MediaItemID: idOf("Take On Me"), CustomIndex: ptr(0)}, {MediaItemID: idOf("Once in a Lifetime"), CustomIndex: ptr(1)},
			{MediaItemID: idOf("Sweet Dreams"), CustomIndex: ptr(2)}}},
		{ID: 12, Name: "Cartoon Block", Version: 1},
	}
	s.SmartCollections = []*SmartCollection{
		{ID: 20, Name: "80s movies", Query: "type:movie AND release_date:[19800101 TO 19891231]"},
		{ID: 21, Name: "Talking Heads videos", Query: "type:music_video AND artist:\"Talking Heads\""},
	}
	s.Schedules = []*Schedule{
		{ID: 30, Name: "Movie Nights", KeepMultiPartEpisodesTogether: false, TreatCollectionsAsShows: false, ShuffleScheduleItems: false,
			RandomStartPoint: true, FixedStartTimeBehavior: "Flexible", PadToNearestMinute: ptr(15), Version: 2, Items: []ScheduleItem{
				{ID: 301, Index: 0, StartType: "Fixed", StartTime: ptr("20:00:00"), PlayoutMode: "One", CollectionType: "Collection", CollectionID: ptr(10), PlaybackOrder: "Shuffle"},
				{ID: 302, Index: 1, StartType: "Dynamic", PlayoutMode: "Flood", CollectionType: "SmartCollection", CollectionID: ptr(20), PlaybackOrder: "Random", CustomTitle: ptr("More 80s")},
			}},
		{ID: 31, Name: "Music Loop", ShuffleScheduleItems: true, FixedStartTimeBehavior: "Strict", Version: 1, Items: []ScheduleItem{
			{ID: 311, Index: 0, StartType: "Dynamic", PlayoutMode: "Flood", CollectionType: "Collection", CollectionID: ptr(11), PlaybackOrder: "Chronological"},
		}},
	}
	start := now.UTC().Truncate(time.Hour)
	slot := func(i int, minutes int) (string, string) {
		a := start.Add(time.Duration(i*minutes) * time.Minute)
		return a.Format(time.RFC3339), a.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
	}
	var musicItems []PlayoutItem
	for i, title := range []string{"Take On Me", "Station ident 1987", "Once in a Lifetime", "Station ident 1987", "Sweet Dreams"} {
		a, b := slot(i, 4)
		musicItems = append(musicItems, PlayoutItem{ID: 9000 + i, MediaItemID: idOf(title), Title: title, Start: a, Finish: b, IsFiller: title == "Station ident 1987"})
	}
	var movieItems []PlayoutItem
	for i, title := range []string{"Aliens", "The Thing", "Blade Runner"} {
		a, b := slot(i, 120)
		movieItems = append(movieItems, PlayoutItem{ID: 9100 + i, MediaItemID: idOf(title), Title: title, Start: a, Finish: b})
	}
	s.Playouts = []*Playout{
		{ID: 1, ChannelID: 3, ProgramScheduleID: ptr(31), ScheduleKind: "Classic", DailyRebuildTime: ptr("04:00:00"), Items: musicItems},
		{ID: 2, ChannelID: 1, ProgramScheduleID: ptr(30), ScheduleKind: "Classic", Items: movieItems},
	}
	s.Sources = []*MediaSource{
		{ID: 1, Kind: "Local", Name: "Local", Libraries: []Library{
			{ID: 1, Name: "Movies", MediaKind: "Movies", ShouldSyncItems: true, Paths: []string{"/media/movies"}},
			{ID: 2, Name: "Shows", MediaKind: "Shows", ShouldSyncItems: true, Paths: []string{"/media/shows"}},
			{ID: 3, Name: "Music Videos", MediaKind: "MusicVideos", ShouldSyncItems: true, Paths: []string{"/media/music-videos"}, Progress: ptr(0.4)},
			{ID: 4, Name: "Other Videos", MediaKind: "OtherVideos", ShouldSyncItems: true, Paths: []string{"/media/idents"}},
		}},
		{ID: 5, Kind: "Jellyfin", Name: "Living Room Jellyfin", Address: "http://jellyfin.lan:8096", Libraries: []Library{
			{ID: 41, Name: "Movies", MediaKind: "Movies", ShouldSyncItems: true},
			{ID: 42, Name: "Music", MediaKind: "Songs", ShouldSyncItems: false},
			{ID: 43, Name: "Kids Shows", MediaKind: "Shows", ShouldSyncItems: false},
		}},
	}
	s.Sessions = []*Session{{ChannelNumber: "1", State: "SeekAndWorkAhead",
		TranscodedUntil: now.UTC().Add(2 * time.Minute).Format(time.RFC3339), LastAccess: now.UTC().Add(-10 * time.Second).Format(time.RFC3339)}}
	return s
}
