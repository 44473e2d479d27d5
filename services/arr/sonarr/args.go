package sonarr

import "github.com/toolgate/toolgate/services/arr/arrapi"

// The tools' arguments. The toolkit derives each tool's strict schema from
// these types (jsonschema: the description; schema: the bounds) and hands
// the handlers decoded values.
type (
	seriesListArgs struct {
		Query string `json:"query,omitempty" jsonschema:"Case-insensitive part of the title." schema:"maxLength=200"`
		Limit int    `json:"limit,omitempty" jsonschema:"Most series to return (default 50)." schema:"minimum=1,maximum=500"`
	}
	seriesArgs struct {
		SeriesID int `json:"series_id" jsonschema:"Series id from sonarr_series_list." schema:"minimum=1"`
	}
	episodesArgs struct {
		SeriesID int  `json:"series_id" schema:"minimum=1"`
		Season   *int `json:"season,omitempty" jsonschema:"Season number (0 = specials); omit for all seasons." schema:"minimum=0,maximum=1000"`
	}
	calendarArgs struct {
		Start       string `json:"start,omitempty" schema:"format=date,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
		End         string `json:"end,omitempty" schema:"format=date,pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
		Unmonitored bool   `json:"include_unmonitored,omitempty" jsonschema:"Also list unmonitored episodes (default false)."`
	}
	historyArgs struct {
		SeriesID  int    `json:"series_id,omitempty" schema:"minimum=1"`
		EpisodeID int    `json:"episode_id,omitempty" schema:"minimum=1"`
		EventType string `json:"event_type,omitempty" schema:"enum=grabbed|seriesFolderImported|downloadFolderImported|downloadFailed|episodeFileDeleted|episodeFileRenamed|downloadIgnored"`
		arrapi.Paging
	}
	releaseArgs struct {
		SeriesID  int  `json:"series_id,omitempty" schema:"minimum=1"`
		Season    *int `json:"season,omitempty" schema:"minimum=0,maximum=1000"`
		EpisodeID int  `json:"episode_id,omitempty" jsonschema:"Search one episode instead of a season." schema:"minimum=1"`
		Limit     int  `json:"limit,omitempty" jsonschema:"Most releases to return, Sonarr's preferred first (default 25)." schema:"minimum=1,maximum=100"`
	}
	episodeSearchArgs struct {
		SeriesID int   `json:"series_id" schema:"minimum=1"`
		Season   int   `json:"season" schema:"minimum=0,maximum=1000"`
		Episodes []int `json:"episodes" jsonschema:"Episode numbers within the season." schema:"minItems=1,maxItems=100,uniqueItems,items.minimum=0,items.maximum=100000"`
	}
	grabArgs struct {
		SeriesID  int    `json:"series_id" schema:"minimum=1"`
		Season    int    `json:"season" schema:"minimum=0,maximum=1000"`
		EpisodeID int    `json:"episode_id,omitempty" jsonschema:"Only if the release came from an episode search (episode_id)." schema:"minimum=1"`
		GUID      string `json:"guid" jsonschema:"The release's guid exactly as sonarr_release_search returned it." schema:"minLength=1,maxLength=2000"`
		IndexerID int    `json:"indexer_id" schema:"minimum=1"`
		Force     bool   `json:"force,omitempty" jsonschema:"Grab although Sonarr rejected the release; needs a person's approval."`
	}
)
