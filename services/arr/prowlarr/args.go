package prowlarr

import "time"

// The tools' arguments. The toolkit derives each tool's strict schema from
// these types (jsonschema: the description; schema: the bounds) and hands
// the handlers decoded values.
type (
	indexerArgs struct {
		ID int `json:"id" jsonschema:"Indexer id from prowlarr_indexer_list." schema:"minimum=1,maximum=2147483647"`
	}
	statsArgs struct {
		Start      *time.Time `json:"start,omitempty" jsonschema:"Window start (RFC 3339)." schema:"format=date-time"`
		End        *time.Time `json:"end,omitempty" jsonschema:"Window end (RFC 3339)." schema:"format=date-time"`
		IndexerIDs []int      `json:"indexer_ids,omitempty" jsonschema:"Only these indexers." schema:"maxItems=50,uniqueItems,items.minimum=1,items.maximum=2147483647"`
	}
	searchArgs struct {
		Query      string `json:"query" jsonschema:"Search text." schema:"minLength=1,maxLength=200"`
		Type       string `json:"type,omitempty" jsonschema:"Search type." schema:"enum=search|tvsearch|movie|music|book,default=search"`
		Categories []int  `json:"categories,omitempty" jsonschema:"Newznab category ids." schema:"maxItems=20,uniqueItems,items.minimum=1,items.maximum=999999"`
		IndexerIDs []int  `json:"indexer_ids,omitempty" jsonschema:"Only these indexers (default: all enabled)." schema:"maxItems=50,uniqueItems,items.minimum=1,items.maximum=2147483647"`
		Limit      int    `json:"limit,omitempty" jsonschema:"Most results to return; Prowlarr also asks each indexer for at most this many." schema:"minimum=1,maximum=100,default=25"`
		Offset     int    `json:"offset,omitempty" jsonschema:"Results each indexer skips (Prowlarr pages every indexer separately)." schema:"minimum=0,maximum=10000,default=0"`
	}
)
