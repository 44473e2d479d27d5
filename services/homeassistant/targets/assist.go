package targets

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/cases"
)

// Assist is Home Assistant's Assist view of the home, the one its intents
// match against (helpers/intent.py async_match_targets with an
// assistant): which entities are exposed, the names and aliases each
// answers to and the names and aliases of its area. The REST API shows
// none of it; the Assist API's own GetLiveContext tool does (the exposed
// entities but scripts and calendars, "names" = name and aliases, "areas"
// = area name and aliases), and the tool list shows the exposed scripts
// (one tool each, its aliases appended to the description).
type Assist struct {
	entities []LiveEntity
	scripts  map[string]scriptInfo
}

// LiveEntity is one entry of GetLiveContext.
type LiveEntity struct {
	Names       string
	Domain      string
	Areas       string
	DeviceClass string
}

type scriptInfo struct {
	aliases      []string
	aliasesKnown bool
}

// maxLiveEntities bounds the Assist view.
const maxLiveEntities = 10000

// ParseLiveContext reads the text GetLiveContext answers:
// {"success": true, "result": "Live Context: …:\n<YAML list>"}.
func ParseLiveContext(text string) (*Assist, error) {
	var res struct {
		Success bool   `json:"success"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal([]byte(text), &res); err != nil || !res.Success {
		return nil, errors.New("GetLiveContext did not answer with the exposed entities")
	}
	_, body, ok := strings.Cut(res.Result, "\n")
	if !ok {
		return nil, errors.New("GetLiveContext answered without a list")
	}
	var list []map[string]any
	if err := yaml.Unmarshal([]byte(body), &list); err != nil {
		return nil, fmt.Errorf("GetLiveContext's list is not YAML: %w", err)
	}
	if len(list) > maxLiveEntities {
		return nil, fmt.Errorf("GetLiveContext lists more than %d entities", maxLiveEntities)
	}
	a := &Assist{scripts: map[string]scriptInfo{}}
	for _, e := range list {
		le := LiveEntity{Names: scalar(e["names"]), Domain: scalar(e["domain"]), Areas: scalar(e["areas"])}
		if attrs, ok := e["attributes"].(map[string]any); ok {
			le.DeviceClass = scalar(attrs["device_class"])
		}
		if le.Domain == "" {
			return nil, errors.New("GetLiveContext lists an entity without a domain")
		}
		a.entities = append(a.entities, le)
	}
	return a, nil
}

func scalar(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// AddScript records an exposed script (script.<object id>) with the
// description of its tool, whose end names its aliases as HA appends them
// (helpers/llm.py _get_cached_action_parameters: ". Aliases: ['a', 'b']"
// or "Aliases: [...]").
func (a *Assist) AddScript(entityID, description string) {
	aliases, known := scriptAliases(description)
	a.scripts[entityID] = scriptInfo{aliases: aliases, aliasesKnown: known}
}

// scriptAliases reads the Python list HA appends to a script tool's
// description. Without one the script has no aliases; one that cannot be
// read leaves them unknown.
func scriptAliases(desc string) ([]string, bool) {
	i := strings.LastIndex(desc, "Aliases: [")
	if i < 0 {
		return nil, true
	}
	if i > 0 && !strings.HasSuffix(desc[:i], ". ") {
		return nil, false
	}
	list, ok := pyStrings(desc[i+len("Aliases: "):])
	return list, ok
}

// pyStrings parses a Python repr of a list of strings that makes up all of
// s: ['a', "b's"].
func pyStrings(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return nil, false
	}
	s = s[1 : len(s)-1]
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out, true
		}
		q := s[0]
		if q != '\'' && q != '"' {
			return nil, false
		}
		var b strings.Builder
		i := 1
		for ; i < len(s) && s[i] != q; i++ {
			if s[i] == '\\' {
				i++
				if i >= len(s) {
					return nil, false
				}
				if s[i] != '\\' && s[i] != '\'' && s[i] != '"' {
					// \n, \x.. and the like: not worth decoding here.
					return nil, false
				}
			}
			b.WriteByte(s[i])
		}
		if i >= len(s) {
			return nil, false
		}
		out = append(out, b.String())
		s = strings.TrimLeft(s[i+1:], " ")
		if s == "" {
			return out, true
		}
		if s[0] != ',' {
			return nil, false
		}
		s = s[1:]
	}
}

// norm is HA's _normalize_name: strip and casefold. (A Caser may keep
// state, so each call takes its own: previews run concurrently.)
func norm(s string) string { return cases.Fold().String(strings.TrimFunc(s, pySpace)) }

// pySpace is what Python's str.strip() removes: Go's blanks and the
// separators \x1c–\x1f, which str.isspace counts (bidirectional class B
// or S) and unicode.IsSpace does not.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// joinedMatch reports whether s is one of the names HA joined with ", "
// into joined (a name that itself holds ", " is found too).
func joinedMatch(joined, s string) bool {
	if joined == "" {
		return false
	}
	want := norm(s)
	parts := strings.Split(joined, ", ")
	if len(parts) > maxNameParts {
		// Pathological: compare the parts one by one and the whole.
		return norm(joined) == want || anyNorm(parts, s)
	}
	for i := range parts {
		for j := i + 1; j <= len(parts); j++ {
			if norm(strings.Join(parts[i:j], ", ")) == want {
				return true
			}
		}
	}
	return false
}

// maxNameParts bounds the parts joinedMatch recombines.
const maxNameParts = 32

// anyNorm reports whether s is one of names, normalized.
func anyNorm(names []string, s string) bool {
	want := norm(s)
	for _, n := range names {
		if norm(n) == want {
			return true
		}
	}
	return false
}
