package arrapi

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/upstream"
)

// The parts of the write tools that are the same in Sonarr and Radarr: a
// search command for exact items, and the grab of one exact release.

// SearchNote is the note of a search command's preview: what the app will
// do for search items (what: "episode", "movie"), how many requested ones
// already have a file and are left out, and what stays as it is.
func SearchNote(display, what string, search, skipped int) string {
	n := fmt.Sprintf("%s will search its indexers for these %d %s(s) and grab what its quality profile accepts.", display, search, what)
	if skipped > 0 {
		n += fmt.Sprintf(" %d requested %s(s) already have a file and are left out.", skipped, what)
	}
	return n + " No monitoring is changed and no other command runs."
}

// Started is what a confirmed search command (command, e.g.
// "EpisodeSearch") answers, with how to follow it.
func (c *Client) Started(cmd Command, command string) CommandStarted {
	return CommandStarted{CommandID: cmd.ID, Command: command, Status: cmd.Status,
		Next: fmt.Sprintf("follow it with %s_command_status and %s_queue", c.cfg.App, c.cfg.App)}
}

// Override decides a grab preview whose release needs force by the app's
// rule (needs): without force the preview is refused (Forbidden, saying
// why and how to ask for it anyway); with force it answers the warning the
// preview shows.
func (r ReleaseRecord) Override(display string, needs, force bool) (warning string, err error) {
	if !needs {
		return "", nil
	}
	why := r.Refusal(display)
	if !force {
		return "", toolerr.New(toolerr.Forbidden,
			"%s. Nothing was grabbed. Grab it anyway only if the user explicitly wants this: request the preview again with force: true (a person must then approve the ticket)", why)
	}
	return why + "; grabbing anyway because force is set.", nil
}

// CheckGUID refuses a guid argument that cannot be one a release search
// returned: control characters, or blanks around it (a model's copy
// mistake, which would otherwise read as "no longer offered").
func CheckGUID(guid, searchTool string) error {
	if err := upstream.HeaderValue(guid); err != nil {
		return toolerr.New(toolerr.InvalidArgument, "guid must not contain control characters")
	}
	if strings.TrimSpace(guid) != guid {
		return toolerr.New(toolerr.InvalidArgument, "guid must be passed exactly as %s returned it, without blanks around it", searchTool)
	}
	return nil
}

// NotOffered is the refusal of a grab preview whose release a fresh
// search (of what: "The Expanse season 1") no longer offers.
func (c *Client) NotOffered(what, searchTool string) error {
	return toolerr.New(toolerr.NotFound,
		"a fresh search of %s does not offer this release (guid and indexer_id) any more; nothing was grabbed — search again with %s and pick a current result", what, searchTool)
}

// GrabbedBy is what a confirmed grab answers: the release, how to follow
// the download, and note (the promise about existing files).
func (c *Client) GrabbedBy(r ReleaseView, note string) Grabbed {
	return Grabbed{Grabbed: true, Title: r.Title, Indexer: r.Indexer, Next: "follow the download with " + c.cfg.App + "_queue", Note: note}
}
