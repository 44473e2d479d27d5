package prowlarr_test

import (
	"testing"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit/toolkittest"
)

// Prowlarr's own reason reaches the result, framed as its words: a search
// whose selected indexers are all unknown or disabled fails with
// SearchFailedException's message (ReleaseSearchService.Dispatch).
func TestProwlarrsReasonReachesTheResult(t *testing.T) {
	e := start(t, apiKey, 0)
	e.svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "only unavailable indexers", Tool: "prowlarr_search", Args: map[string]any{"query": "matrix", "indexer_ids": []int{99}},
			Code: toolerr.InvalidArgument, Has: []string{`Prowlarr said: \"Search failed due to all selected indexers being unavailable\"`},
			HasNot: []string{"NzbDroneClientException", "   at "}},
	}, apiKey)
}

// Prowlarr hands limit and offset to every indexer (NewznabRequest), so an
// offset skips results on each indexer, not in the merged list; an empty
// answer may be a failed search, which Prowlarr reports as empty.
func TestSearchOffsetSkipsOnEachIndexer(t *testing.T) {
	e := start(t, apiKey, 0)
	e.svc.RunReads(t, []toolkittest.ReadCase{
		{Name: "first page", Tool: "prowlarr_search", Args: map[string]any{"query": "matrix"}, Has: []string{`"total":3`}},
		{Name: "offset 1 on each of three indexers", Tool: "prowlarr_search", Args: map[string]any{"query": "matrix", "offset": 1},
			Has: []string{`"total":0`, "page each indexer", "check prowlarr_indexer_status"}},
	}, apiKey)
}
