package radarr

import "github.com/toolgate/toolgate/services/arr/arrapi"

// The tools' arguments. The toolkit derives each tool's strict schema from
// these types (jsonschema: the description; schema: the bounds) and hands
// the handlers decoded values.

type (
	movieListArgs struct {
		Search string `json:"search,omitempty" jsonschema:"Case-insensitive part of the title." schema:"minLength=1,maxLength=200"`
		Limit  int    `json:"limit,omitempty" jsonschema:"Most movies to return (default 50)." schema:"minimum=1,maximum=500"`
		Offset int    `json:"offset,omitempty" jsonschema:"Movies to skip (default 0)." schema:"minimum=0"`
	}
	lookupArgs struct {
		Term string `json:"term" jsonschema:"Title, or tmdb:<id> / imdb:<tt…>." schema:"minLength=1,maxLength=200"`
	}
	movieArgs struct {
		MovieID int `json:"movie_id" jsonschema:"Movie id from radarr_movie_list." schema:"minimum=1,maximum=2147483647"`
	}
	missingArgs struct {
		arrapi.Paging
		Monitored *bool `json:"monitored,omitempty" jsonschema:"Monitored movies (default true) or unmonitored ones."`
	}
	calendarArgs struct {
		Start       string `json:"start,omitempty" jsonschema:"First day (YYYY-MM-DD)." schema:"format=date"`
		End         string `json:"end,omitempty" jsonschema:"Last day (YYYY-MM-DD)." schema:"format=date"`
		Unmonitored bool   `json:"unmonitored,omitempty" jsonschema:"Include unmonitored movies (default false)."`
	}
	historyArgs struct {
		arrapi.Paging
		MovieID int `json:"movie_id,omitempty" jsonschema:"Only this movie." schema:"minimum=1,maximum=2147483647"`
	}
	releaseSearchArgs struct {
		MovieID int `json:"movie_id" jsonschema:"Movie id from radarr_movie_list." schema:"minimum=1,maximum=2147483647"`
		Limit   int `json:"limit,omitempty" jsonschema:"Most releases to return (default 25)." schema:"minimum=1,maximum=100"`
	}
	movieSearchArgs struct {
		MovieIDs []int `json:"movie_ids" jsonschema:"Library movie ids from radarr_movie_list or radarr_wanted_missing." schema:"minItems=1,maxItems=50,uniqueItems,items.minimum=1,items.maximum=2147483647"`
	}
	grabArgs struct {
		MovieID   int    `json:"movie_id" jsonschema:"Library movie id." schema:"minimum=1,maximum=2147483647"`
		GUID      string `json:"guid" jsonschema:"The release's guid exactly as radarr_release_search returned it." schema:"minLength=1,maxLength=2000"`
		IndexerID int    `json:"indexer_id" jsonschema:"The release's indexer_id." schema:"minimum=1,maximum=2147483647"`
		Force     bool   `json:"force,omitempty" jsonschema:"Grab even though Radarr rejected the release or does not allow its download; needs a person's approval."`
	}
)
