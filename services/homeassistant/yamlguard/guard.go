// Package yamlguard is the homeassistant service's guarded access to Home
// Assistant's YAML: structured list, get, create, update and delete of the
// entries of automations.yaml, scripts.yaml and scenes.yaml, and bounded
// raw reads and text search over those three and configuration.yaml. No
// tool takes a path; the four files are a closed set, opened only as
// regular files inside the configuration directory (secrets.yaml and
// everything else is unreachable). Raw text leaves masked (mask.Text).
//
// Every change is a write through the gateway (preview with a diff →
// ticket → confirm). On confirm the file must still be what the preview
// saw; then a backup, an atomic write, Home Assistant's full configuration
// check and the reload of the domain follow, and a failed check or reload
// puts the file back byte for byte. Edits splice only the changed entry's
// lines into the file, so every other byte stays as it was.
package yamlguard

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/redact"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/homeassistant/hass"
	"github.com/toolgate/toolgate/services/homeassistant/mask"
	"github.com/toolgate/toolgate/services/homeassistant/targets"
)

// Guard serves the YAML tools over one configuration directory.
type Guard struct {
	dir     *Dir
	ha      *hass.Client
	backups Backups
	write   bool
	log     *slog.Logger
	// mu makes changes one at a time: each re-reads, writes, checks and
	// reloads before the next starts.
	mu sync.Mutex
}

// New returns a guard; write adds the write tools (the toolkit still
// drops them unless HOMEASSISTANT_ALLOW_WRITES is set).
func New(dir *Dir, ha *hass.Client, backups Backups, write bool, log *slog.Logger) *Guard {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Guard{dir: dir, ha: ha, backups: backups, write: write, log: log}
}

var (
	readAnn = toolkit.Annotations{ReadOnly: true, Idempotent: true}
)

type (
	listArgs struct {
		Kind   string `json:"kind" schema:"enum=automation|script|scene"`
		Query  string `json:"query,omitempty" jsonschema:"Only entries whose id, alias or description contains this." schema:"minLength=1,maxLength=100"`
		Offset int    `json:"offset,omitempty" schema:"minimum=0,maximum=100000"`
		Limit  int    `json:"limit,omitempty" schema:"minimum=1,maximum=200"`
	}
	entryArgs struct {
		Kind string `json:"kind" schema:"enum=automation|script|scene"`
		ID   string `json:"id" jsonschema:"Automation or scene id, or script key." schema:"minLength=1,maxLength=100,pattern=^[A-Za-z0-9_-]+$"`
	}
	sourceArgs struct {
		File  string `json:"file" schema:"enum=automations|scripts|scenes|configuration"`
		From  int    `json:"from_line,omitempty" schema:"minimum=1,maximum=1000000"`
		Lines int    `json:"lines,omitempty" jsonschema:"Default 200." schema:"minimum=1,maximum=400"`
	}
	findArgs struct {
		Query   string `json:"query" jsonschema:"Text to find, case-insensitive." schema:"minLength=2,maxLength=100"`
		File    string `json:"file,omitempty" jsonschema:"Default: all four." schema:"enum=automations|scripts|scenes|configuration"`
		Context int    `json:"context,omitempty" jsonschema:"Lines around a match (default 2)." schema:"minimum=0,maximum=5"`
		Limit   int    `json:"limit,omitempty" schema:"minimum=1,maximum=50"`
	}
)

// Tools lists the YAML tools: four reads, and the three writes with write.
func (g *Guard) Tools() []toolkit.Tool {
	tools := []toolkit.Tool{
		{
			Name: "ha_yaml_list", Title: "List YAML entries",
			Description: "Entries of automations.yaml, scripts.yaml or scenes.yaml: id (script: key), alias, description, lines; paged.",
			Annotations: readAnn, Handler: toolkit.ReadFor(g.list),
		},
		{
			Name: "ha_yaml_get", Title: "Get a YAML entry",
			Description: "One entry's configuration as JSON. Credentials and !secret names show masked; send masked values back unchanged to keep them.",
			Annotations: readAnn, Handler: toolkit.ReadFor(g.get),
		},
		{
			Name: "ha_yaml_read_source", Title: "Read YAML source",
			Description: "Raw lines of automations, scripts, scenes or configuration.yaml, comments included, credentials masked.",
			Annotations: readAnn, Handler: toolkit.ReadFor(g.readSource),
		},
		{
			Name: "ha_yaml_find_source", Title: "Find in YAML source",
			Description: "Find text in the four files of ha_yaml_read_source (e.g. commented-out blocks); masked.",
			Annotations: readAnn, Handler: toolkit.ReadFor(g.findSource),
		},
	}
	if !g.write {
		return tools
	}
	const after = " Preview shows the diff; confirm backs up, writes, checks, reloads (or restores)."
	return append(tools,
		toolkit.Tool{
			Name: "ha_yaml_create", Title: "Create a YAML entry",
			Description: "Add an automation, script or scene." + after,
			Annotations: toolkit.Annotations{}, Handler: toolkit.WriteFor(g.previewCreate, applyFor[editArgs](g)),
		},
		toolkit.Tool{
			Name: "ha_yaml_update", Title: "Update a YAML entry",
			Description: "Replace an entry's config (as ha_yaml_get shows it; unchanged parts keep comments, tags)." + after,
			Annotations: toolkit.Annotations{Idempotent: true}, Handler: toolkit.WriteFor(g.previewUpdate, applyFor[editArgs](g)),
		},
		toolkit.Tool{
			Name: "ha_yaml_delete", Title: "Delete a YAML entry",
			Description: "Remove an automation, script or scene." + after,
			Annotations: toolkit.Annotations{Destructive: true, Idempotent: true}, Handler: toolkit.WriteFor(g.previewDelete, applyFor[entryArgs](g)),
		},
	)
}

// --- reads -------------------------------------------------------------

type listEntry struct {
	ID          string `json:"id"`
	Alias       string `json:"alias,omitempty"`
	Description string `json:"description,omitempty"`
	Lines       string `json:"lines"`
}

type listResult struct {
	Kind       Kind        `json:"kind"`
	File       File        `json:"file"`
	Entries    []listEntry `json:"entries"`
	Total      int         `json:"total"`
	Offset     int         `json:"offset"`
	Complete   bool        `json:"complete"`
	NextOffset *int        `json:"next_offset,omitempty"`
}

func (g *Guard) doc(k Kind) (*Doc, Snapshot, error) {
	s, err := g.dir.Read(k.File())
	if err != nil {
		return nil, Snapshot{}, err
	}
	d, err := Parse(k, s.Content)
	return d, s, err
}

func (g *Guard) list(_ context.Context, in listArgs) (listResult, error) {
	k := Kind(in.Kind)
	d, _, err := g.doc(k)
	if err != nil {
		return listResult{}, err
	}
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	q := strings.ToLower(in.Query)
	var all []listEntry
	secrets := d.secrets()
	for _, e := range d.Entries {
		le := listEntry{ID: e.ID, Alias: field(e.Node, "alias", secrets), Description: cut(field(e.Node, "description", secrets), 120)}
		from, to := e.Lines()
		le.Lines = fmt.Sprintf("%d-%d", from, to)
		if q != "" && !strings.Contains(strings.ToLower(le.ID+"\n"+le.Alias+"\n"+le.Description), q) {
			continue
		}
		all = append(all, le)
	}
	out := listResult{Kind: k, File: k.File(), Total: len(all), Offset: in.Offset, Entries: []listEntry{}}
	if in.Offset < len(all) {
		end := min(in.Offset+limit, len(all))
		out.Entries = all[in.Offset:end]
		if end < len(all) {
			out.NextOffset = &end
		}
	}
	out.Complete = out.NextOffset == nil
	return out, nil
}

// field is a plain string value of a mapping, masked.
func field(n *yaml.Node, key string, secrets map[*yaml.Node]bool) string {
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			s, _ := toJSON(n.Content[i+1], key, 0, secrets).(string)
			return s
		}
	}
	return ""
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

type getResult struct {
	Kind   Kind   `json:"kind"`
	File   File   `json:"file"`
	ID     string `json:"id"`
	Lines  string `json:"lines"`
	Config any    `json:"config"`
}

// entry reads the file of k and finds the entry with id.
func (g *Guard) entry(k Kind, id string) (*Doc, Snapshot, Entry, error) {
	d, s, err := g.doc(k)
	if err != nil {
		return nil, Snapshot{}, Entry{}, err
	}
	e, err := d.Find(id)
	return d, s, e, err
}

func (g *Guard) get(_ context.Context, in entryArgs) (getResult, error) {
	k := Kind(in.Kind)
	d, _, e, err := g.entry(k, in.ID)
	if err != nil {
		return getResult{}, err
	}
	from, to := e.Lines()
	return getResult{Kind: k, File: k.File(), ID: e.ID, Lines: fmt.Sprintf("%d-%d", from, to), Config: d.ToJSONIn(e.Node)}, nil
}

// maxSourceBytes bounds the text of one read_source answer.
const maxSourceBytes = 48 << 10

type sourceResult struct {
	File       File   `json:"file"`
	FromLine   int    `json:"from_line"`
	ToLine     int    `json:"to_line"`
	TotalLines int    `json:"total_lines"`
	Text       string `json:"text"`
	Complete   bool   `json:"complete"`
	NextLine   *int   `json:"next_line,omitempty"`
}

func fileOf(name string) File { return File(name + ".yaml") }

// maskedLines reads f and masks it as one text (a value is judged with
// its key and the lines around it), then splits it into lines, each
// passed through the generic redaction the answer gets anyway: reads show
// and searches see the same text, so no search can confirm what an
// answer hides.
func (g *Guard) maskedLines(f File) ([]string, error) {
	s, err := g.dir.Read(f)
	if err != nil {
		return nil, err
	}
	lines := splitLines(mask.Text(string(s.Content)))
	var generic *redact.Redactor // every rule but known values
	for i, l := range lines {
		lines[i] = generic.String(l)
	}
	return lines, nil
}

func (g *Guard) readSource(_ context.Context, in sourceArgs) (sourceResult, error) {
	f := fileOf(in.File)
	lines, err := g.maskedLines(f)
	if err != nil {
		return sourceResult{}, err
	}
	from, n := max(in.From, 1), in.Lines
	if n == 0 {
		n = 200
	}
	out := sourceResult{File: f, FromLine: from, TotalLines: len(lines)}
	if from > len(lines) {
		out.ToLine, out.Complete = from-1, true
		return out, nil
	}
	var b strings.Builder
	i := from - 1
	for ; i < len(lines) && i < from-1+n; i++ {
		if b.Len()+len(lines[i]) > maxSourceBytes && i > from-1 {
			break
		}
		b.WriteString(lines[i])
	}
	out.Text, out.ToLine = b.String(), i
	if i < len(lines) {
		next := i + 1
		out.NextLine = &next
	}
	out.Complete = out.NextLine == nil
	return out, nil
}

type match struct {
	File File   `json:"file"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

type findResult struct {
	Matches  []match           `json:"matches"`
	Total    int               `json:"total"`
	Complete bool              `json:"complete"`
	Skipped  map[string]string `json:"skipped,omitempty"`
}

// findSource searches the masked text, so a search cannot confirm a
// credential's value that the answers never show.
func (g *Guard) findSource(_ context.Context, in findArgs) (findResult, error) {
	files := Files
	if in.File != "" {
		files = []File{fileOf(in.File)}
	}
	ctxLines, limit := 2, in.Limit
	if in.Context > 0 {
		ctxLines = in.Context
	}
	if limit == 0 {
		limit = 20
	}
	q := strings.ToLower(in.Query)
	out := findResult{Matches: []match{}}
	for _, f := range files {
		lines, err := g.maskedLines(f)
		if err != nil {
			if in.File != "" {
				return findResult{}, err
			}
			if out.Skipped == nil {
				out.Skipped = map[string]string{}
			}
			out.Skipped[string(f)] = toolerr.MessageOf(err)
			continue
		}
		for i, l := range lines {
			if !strings.Contains(strings.ToLower(l), q) {
				continue
			}
			out.Total++
			if len(out.Matches) >= limit {
				continue
			}
			var b strings.Builder
			for j := max(0, i-ctxLines); j <= min(len(lines)-1, i+ctxLines); j++ {
				fmt.Fprintf(&b, "%d: %s", j+1, cut(strings.TrimRight(lines[j], "\r\n"), 300))
				b.WriteByte('\n')
			}
			out.Matches = append(out.Matches, match{File: f, Line: i + 1, Text: b.String()})
		}
	}
	out.Complete = out.Total == len(out.Matches)
	return out, nil
}

// --- writes ------------------------------------------------------------

// editArgs are create's and update's arguments. The configuration's raw
// JSON is kept too: its key order is the order new keys are written in.
type editArgs struct {
	Kind   string         `json:"kind" schema:"enum=automation|script|scene"`
	ID     string         `json:"id" jsonschema:"Automation or scene id, or script key." schema:"minLength=1,maxLength=100,pattern=^[A-Za-z0-9_-]+$"`
	Config map[string]any `json:"config" jsonschema:"As in HA's YAML, without id; \"!secret x\", \"!include f\" become tags."`
	raw    []byte
}

// UnmarshalJSON decodes the arguments and keeps config's raw JSON.
func (a *editArgs) UnmarshalJSON(b []byte) error {
	type plain editArgs
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var f struct {
		Config json.RawMessage `json:"config"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*a = editArgs(p)
	a.raw = f.Config
	return nil
}

// maxConfigBytes bounds one entry's configuration.
const maxConfigBytes = 64 << 10

// maxDiffBytes bounds a preview's diff: a preview too large to show gets
// no ticket at the gateway anyway.
const maxDiffBytes = 32 << 10

// Preview is what a change would do: the diff of the file, masked, and
// the digest of the file it was computed from.
type Preview struct {
	Action     string `json:"action"`
	Kind       Kind   `json:"kind"`
	ID         string `json:"id"`
	File       File   `json:"file"`
	Diff       string `json:"diff"`
	FileSHA256 string `json:"file_sha256"`
	Then       string `json:"then"`

	facts   approval.Facts
	before  Snapshot
	content []byte
}

// PreviewFacts are what the changed entries operate, for the policy.
func (p Preview) PreviewFacts() approval.Facts { return p.facts }

func checkID(k Kind, id string) error {
	if k == Script && !hass.ValidName(id) {
		return toolerr.New(toolerr.InvalidArgument, "a script key is lower-case letters, digits and _")
	}
	return nil
}

// entryNode builds the entry node from the model's configuration: for lists
// the id goes first (and must match when config repeats it).
func entryNode(k Kind, id string, raw []byte) (*yaml.Node, error) {
	if len(raw) > maxConfigBytes {
		return nil, toolerr.New(toolerr.TooLarge, "config is larger than %d bytes", maxConfigBytes)
	}
	n, err := FromJSON(raw)
	if err != nil {
		return nil, err
	}
	if !k.list() {
		return n, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "id" {
			if v := n.Content[i+1]; v.Kind != yaml.ScalarNode || v.Value != id {
				return nil, toolerr.New(toolerr.InvalidArgument, "config.id differs from id; an id cannot be changed (delete and create instead)")
			}
			return n, nil
		}
	}
	idNode := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: id}
	if ambiguous(id) {
		idNode.Style = yaml.SingleQuotedStyle
	}
	n.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "id"}, idNode}, n.Content...)
	return n, nil
}

func (g *Guard) previewCreate(ctx context.Context, in editArgs) (Preview, error) {
	k := Kind(in.Kind)
	if err := checkID(k, in.ID); err != nil {
		return Preview{}, err
	}
	node, err := entryNode(k, in.ID, in.raw)
	if err != nil {
		return Preview{}, err
	}
	if err := unmaskedCheck(node); err != nil {
		return Preview{}, err
	}
	d, s, err := g.doc(k)
	if err != nil {
		return Preview{}, err
	}
	if _, err := d.Find(in.ID); toolerr.CodeOf(err) != toolerr.NotFound {
		return Preview{}, toolerr.New(toolerr.InvalidArgument, "%s already has %s %q; use ha_yaml_update", k.File(), k, in.ID)
	}
	content, err := d.Append(in.ID, node)
	if err != nil {
		return Preview{}, err
	}
	return g.preview(ctx, "create", k, in.ID, s, content, nil, node)
}

func (g *Guard) previewUpdate(ctx context.Context, in editArgs) (Preview, error) {
	k := Kind(in.Kind)
	node, err := entryNode(k, in.ID, in.raw)
	if err != nil {
		return Preview{}, err
	}
	d, s, e, err := g.entry(k, in.ID)
	if err != nil {
		return Preview{}, err
	}
	merged, err := Merge(e.Node, node)
	if err != nil {
		return Preview{}, err
	}
	if same(merged, e.Node) {
		return Preview{}, toolerr.New(toolerr.InvalidArgument, "the configuration is the same as %s %q has now; nothing to change", k, in.ID)
	}
	content, err := d.Replace(e, merged)
	if err != nil {
		return Preview{}, err
	}
	return g.preview(ctx, "update", k, in.ID, s, content, e.Node, merged)
}

func (g *Guard) previewDelete(ctx context.Context, in entryArgs) (Preview, error) {
	k := Kind(in.Kind)
	d, s, e, err := g.entry(k, in.ID)
	if err != nil {
		return Preview{}, err
	}
	return g.preview(ctx, "delete", k, in.ID, s, d.Delete(e), e.Node, nil)
}

// preview checks that the new file still parses to the intended entry and
// renders the diff and facts.
func (g *Guard) preview(ctx context.Context, action string, k Kind, id string, s Snapshot, content []byte, old, new *yaml.Node) (Preview, error) {
	if len(content) > MaxFileBytes {
		return Preview{}, toolerr.New(toolerr.TooLarge, "%s would grow past %d bytes", k.File(), MaxFileBytes)
	}
	if err := verify(k, id, content, new); err != nil {
		return Preview{}, err
	}
	diff := maskedDiff(k.File(), string(s.Content), string(content))
	if len(diff) > maxDiffBytes {
		return Preview{}, toolerr.New(toolerr.TooLarge, "the change's diff is larger than %d bytes; make it in smaller steps", maxDiffBytes)
	}
	return Preview{
		Action: action, Kind: k, ID: id, File: k.File(), Diff: diff, FileSHA256: s.SHA256,
		Then:  fmt.Sprintf("back up %s, write it, run HA's configuration check, call %s.reload; a failed check or reload restores the file", k.File(), k),
		facts: g.facts(ctx, old, new), before: s, content: content,
	}, nil
}

// verify re-parses the new file: it must hold the entry exactly once
// (or not at all after a delete) with the intended content.
func verify(k Kind, id string, content []byte, want *yaml.Node) error {
	d, err := Parse(k, content)
	if err != nil {
		return toolerr.Wrap(toolerr.Internal, err, "the edited %s would not parse", k.File())
	}
	e, err := d.Find(id)
	switch {
	case want == nil && toolerr.CodeOf(err) == toolerr.NotFound:
		return nil
	case want == nil:
		return toolerr.New(toolerr.Internal, "the edited %s still holds %q", k.File(), id)
	case err != nil:
		return toolerr.Wrap(toolerr.Internal, err, "the edited %s lacks %q", k.File(), id)
	case !same(e.Node, want):
		return toolerr.New(toolerr.Internal, "the edited %s does not hold the intended %q", k.File(), id)
	}
	return nil
}

// facts are what the old and the new entry operate (a change of an
// automation that locks the door touches the lock either way). Whatever
// cannot be read makes them unresolved, which the policy sends to a
// person.
func (g *Guard) facts(ctx context.Context, old, new *yaml.Node) approval.Facts {
	var cfgs []any
	for _, n := range []*yaml.Node{old, new} {
		if n == nil {
			continue
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return approval.Facts{"kind": "yaml", "domains": []string{}, "device_classes": []string{}, "unresolved": true, "opaque": false}
		}
		cfgs = append(cfgs, v)
	}
	snap, err := targets.Take(ctx, g.ha, false)
	if err != nil {
		return approval.Facts{"kind": "yaml", "domains": []string{}, "device_classes": []string{}, "unresolved": true, "opaque": false}
	}
	lookup := func(ctx context.Context, key string) (map[string]any, error) { return g.ha.ScriptConfig(ctx, key) }
	return snap.Config(ctx, cfgs, lookup).Facts("yaml")
}

// Applied is a change's answer.
type Applied struct {
	Status          string `json:"status"`
	Action          string `json:"action"`
	Kind            Kind   `json:"kind"`
	ID              string `json:"id"`
	File            File   `json:"file"`
	Backup          string `json:"backup"`
	Reloaded        string `json:"reloaded"`
	RestartRequired bool   `json:"restart_required"`
	Warnings        string `json:"check_warnings,omitempty"`
}

// applyFor is apply for a tool's argument type: the preview, recomputed
// and checked against the approved one by the toolkit, says everything.
func applyFor[In any](g *Guard) func(context.Context, In, Preview) (Applied, error) {
	return func(ctx context.Context, _ In, p Preview) (Applied, error) { return g.apply(ctx, p) }
}

func (g *Guard) apply(ctx context.Context, p Preview) (Applied, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f := p.File
	cur, err := g.dir.Read(f)
	if err != nil {
		return Applied{}, err
	}
	if cur.SHA256 != p.before.SHA256 {
		return Applied{}, toolerr.New(toolerr.Forbidden, "%s changed since the preview; nothing was written: preview the change again", f)
	}
	// A configuration that is invalid already would fail the check after
	// any change, and the restore would hide whose fault it was.
	pre, err := g.ha.CheckConfig(ctx)
	if err != nil {
		return Applied{}, err
	}
	if !pre.Valid() {
		return Applied{}, toolerr.New(toolerr.InvalidArgument, "Home Assistant's configuration is invalid before this change (%s); nothing was written: fix that first (ha_config_check)", checkText(pre.Errors))
	}
	backup, err := g.backups.Save(cur)
	if err != nil {
		g.log.Error("yaml backup failed", "file", string(f), "error", err)
		return Applied{}, toolerr.New(toolerr.Internal, "could not back up %s (HA_YAML_BACKUP_DIR); nothing was written", f)
	}
	if err := g.dir.Replace(cur, p.content); err != nil {
		return Applied{}, err
	}
	g.log.Info("yaml written", "file", string(f), "action", p.Action, "id", p.ID, "backup", backup)
	// The rest runs even if the caller gives up: a written file is either
	// checked and reloaded or restored.
	ctx = context.WithoutCancel(ctx)
	check, err := g.ha.CheckConfig(ctx)
	switch {
	case err != nil:
		return Applied{}, g.restore(ctx, cur, backup, false, fmt.Sprintf("Home Assistant's configuration check could not run (%s)", toolerr.MessageOf(err)))
	case !check.Valid():
		return Applied{}, g.restore(ctx, cur, backup, false, fmt.Sprintf("Home Assistant's configuration check failed: %s", checkText(check.Errors)))
	}
	domain := string(p.Kind)
	if err := g.ha.CallService(ctx, domain, "reload", nil); err != nil {
		return Applied{}, g.restore(ctx, cur, backup, true, fmt.Sprintf("%s.reload failed (%s)", domain, toolerr.MessageOf(err)))
	}
	return Applied{
		Status: "applied", Action: p.Action, Kind: p.Kind, ID: p.ID, File: f, Backup: backup,
		Reloaded: domain + ".reload", Warnings: checkText(check.Warnings),
	}, nil
}

// restore puts the file back as it was and says what failed. After a
// failed reload it reloads again, so HA runs the restored file.
func (g *Guard) restore(ctx context.Context, was Snapshot, backup string, reload bool, failed string) error {
	err := g.dir.Replace(was, was.Content)
	if err == nil {
		var now Snapshot
		if now, err = g.dir.Read(was.File); err == nil && now.SHA256 != was.SHA256 {
			err = fmt.Errorf("restored file differs")
		}
	}
	if err != nil {
		g.log.Error("yaml restore failed", "file", string(was.File), "backup", backup, "error", err)
		return toolerr.New(toolerr.Internal, "%s; restoring %s FAILED: copy the backup %s from HA_YAML_BACKUP_DIR back by hand", failed, was.File, backup)
	}
	g.log.Warn("yaml change undone", "file", string(was.File), "reason", failed)
	msg := fmt.Sprintf("%s. %s was restored byte-identically; nothing changed", failed, was.File)
	if reload {
		domain := strings.TrimSuffix(strings.TrimSuffix(string(was.File), ".yaml"), "s")
		if err := g.ha.CallService(ctx, domain, "reload", nil); err != nil {
			msg += fmt.Sprintf(" (reloading the restored file failed as well: restart Home Assistant or reload %s by hand)", domain)
		}
	}
	code := toolerr.UpstreamUnavailable
	if strings.Contains(failed, "check failed") {
		code = toolerr.InvalidArgument
	}
	return toolerr.New(code, "%s", msg)
}

// checkText is a check's errors or warnings, masked and bounded.
func checkText(s *string) string {
	if s == nil {
		return ""
	}
	return cut(mask.Text(strings.TrimSpace(*s)), 600)
}
