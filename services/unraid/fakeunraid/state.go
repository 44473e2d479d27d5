package fakeunraid

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// State is what the fake Unraid holds. Info, Metrics, Network and UPS are
// JSON trees in the API's own field names; the rest is typed, since
// mutations and arguments work on it.
type State struct {
	ServerID      string
	Info          map[string]any
	Metrics       map[string]any
	UPS           []any
	Array         unraidapi.Array
	Disks         []unraidapi.Disk
	Containers    []unraidapi.Container
	ContainerLogs map[string][]LogLine // by container id without prefix
	VMs           []unraidapi.VM
	Shares        []unraidapi.Share
	Notifications []unraidapi.Notification
	ParityHistory []unraidapi.ParityCheck
	LogFiles      []unraidapi.LogFileInfo
	LogContent    map[string]string // by file name
}

// upstreamError is an error message as Unraid words it (capitalised, from
// its resolvers), passed into a GraphQL error unchanged.
type upstreamError string

func (e upstreamError) Error() string { return string(e) }

// LogLine is a container log line.
type LogLine struct {
	Timestamp time.Time
	Message   string
}

// strip removes the server prefix of a PrefixedID, as Unraid does on input.
func strip(id string) string {
	if _, after, ok := strings.Cut(id, ":"); ok {
		return after
	}
	return id
}

func str(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

func num(args map[string]any, name string) (int, bool) {
	switch v := args[name].(type) {
	case int64:
		return int(v), true
	case int:
		return v, true
	case float64:
		return int(v), true
	case interface{ Int64() (int64, error) }:
		n, err := v.Int64()
		return int(n), err == nil
	}
	return 0, false
}

func (f *Fake) queryRoot() map[string]any {
	s := f.state
	return map[string]any{
		"info":    s.Info,
		"metrics": s.Metrics,
		"array":   s.Array,
		"disks":   s.Disks,
		"docker": map[string]any{
			"containers": resolver(func(map[string]any) (any, error) { return s.Containers, nil }),
			"logs":       resolver(f.containerLogs),
		},
		"vms":           map[string]any{"domains": s.VMs},
		"shares":        s.Shares,
		"parityHistory": s.ParityHistory,
		"upsDevices":    s.UPS,
		"logFiles":      s.LogFiles,
		"logFile":       resolver(f.logFile),
		"notifications": map[string]any{
			"overview": f.overview(),
			"list":     resolver(f.notificationList),
		},
	}
}

func (f *Fake) containerLogs(args map[string]any) (any, error) {
	id := strip(str(args, "id"))
	var c *unraidapi.Container
	for i := range f.state.Containers {
		if strip(f.state.Containers[i].ID) == id {
			c = &f.state.Containers[i]
		}
	}
	if c == nil {
		return nil, upstreamError(fmt.Sprintf("No such container: %s", id))
	}
	// docker logs --timestamps --tail N (default 200, at most 2000).
	tail := 200
	if n, ok := num(args, "tail"); ok && n > 0 {
		tail = min(n, 2000)
	}
	var since time.Time
	if v := str(args, "since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return nil, fmt.Errorf("invalid since")
		}
		since = t
	}
	var lines []map[string]any
	for _, l := range f.state.ContainerLogs[id] {
		if !since.IsZero() && !l.Timestamp.After(since) {
			continue
		}
		lines = append(lines, map[string]any{"timestamp": l.Timestamp.UTC().Format(time.RFC3339Nano), "message": l.Message})
	}
	if len(lines) > tail {
		lines = lines[len(lines)-tail:]
	}
	out := map[string]any{"containerId": c.ID, "lines": lines, "cursor": nil}
	if len(lines) > 0 {
		out["cursor"] = lines[len(lines)-1]["timestamp"]
	} else {
		out["lines"] = []any{}
	}
	return out, nil
}

// logFile reads like unraid/api's LogsService: the path is reduced to its
// base name under /var/log; the last `lines` lines (default 100), or from
// startLine (1-based).
func (f *Fake) logFile(args map[string]any) (any, error) {
	p := str(args, "path")
	name := p[strings.LastIndex(p, "/")+1:]
	content, ok := f.state.LogContent[name]
	if !ok {
		return nil, upstreamError(fmt.Sprintf("Error reading log file: ENOENT: no such file or directory, open '/var/log/%s'", name))
	}
	all := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	lines := 100
	if n, ok := num(args, "lines"); ok {
		lines = n
	}
	start, hasStart := num(args, "startLine")
	var window []string
	if hasStart {
		from := max(start, 1) - 1
		if from < len(all) {
			window = all[from:min(len(all), from+lines)]
		}
	} else {
		start = max(1, len(all)-lines+1)
		window = all[start-1:]
	}
	text := strings.Join(window, "\n")
	if len(window) > 0 {
		text += "\n"
	}
	return map[string]any{"path": "/var/log/" + name, "content": text, "totalLines": len(all), "startLine": start}, nil
}

func (f *Fake) overview() map[string]any {
	var unread, archive unraidapi.NotificationCounts
	for _, n := range f.state.Notifications {
		c := &unread
		if n.Type == "ARCHIVE" {
			c = &archive
		}
		switch n.Importance {
		case "INFO":
			c.Info++
		case "WARNING":
			c.Warning++
		case "ALERT":
			c.Alert++
		}
		c.Total++
	}
	return map[string]any{"unread": unread, "archive": archive}
}

func (f *Fake) notificationList(args map[string]any) (any, error) {
	filter, _ := args["filter"].(map[string]any)
	typ, _ := filter["type"].(string)
	imp, _ := filter["importance"].(string)
	offset, _ := num(filter, "offset")
	limit, _ := num(filter, "limit")
	var out []unraidapi.Notification
	for _, n := range f.state.Notifications {
		if n.Type == typ {
			out = append(out, n)
		}
	}
	// Newest first, as Unraid lists the files. It pages the files first
	// and only then filters the page by importance
	// (notifications.service.ts loadNotificationsFromPaths): a page of an
	// importance can be short, even empty, before the end.
	slices.SortStableFunc(out, func(a, b unraidapi.Notification) int { return strings.Compare(deref(b.Timestamp), deref(a.Timestamp)) })
	if offset >= len(out) {
		return []any{}, nil
	}
	out = out[offset:]
	if limit < len(out) {
		out = out[:max(limit, 0)]
	}
	out = slices.DeleteFunc(out, func(n unraidapi.Notification) bool { return imp != "" && n.Importance != imp })
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (f *Fake) mutationRoot() map[string]any {
	container := func(action string) resolver {
		return func(args map[string]any) (any, error) {
			id := strip(str(args, "id"))
			for i := range f.state.Containers {
				c := &f.state.Containers[i]
				if strip(c.ID) != id {
					continue
				}
				// DockerService (docker.service.ts) calls dockerode, which
				// fails on Docker's 304 for a container already in the
				// state asked for; stop and restart pass t=10 (SIGKILL
				// after 10 seconds), restart also starts a stopped one.
				switch {
				case action == "start" && c.State == "RUNNING":
					return nil, upstreamError("(HTTP code 304) container already started - ")
				case action == "stop" && c.State == "EXITED":
					return nil, upstreamError("(HTTP code 304) container already stopped - ")
				case action == "start" || action == "restart":
					c.State, c.Status = "RUNNING", "Up Less than a second"
				case action == "stop":
					c.State, c.Status = "EXITED", "Exited (0) Less than a second ago"
				}
				return c, nil
			}
			return nil, upstreamError(fmt.Sprintf("(HTTP code 404) no such container - No such container: %s ", id))
		}
	}
	vm := func(action string) resolver {
		return func(args map[string]any) (any, error) {
			id := strip(str(args, "id"))
			for i := range f.state.VMs {
				v := &f.state.VMs[i]
				if strip(v.ID) == id {
					return vmTransition(v, action)
				}
			}
			return nil, upstreamError("Failed to set VM state: Domain not found")
		}
	}
	parity := func(action string) resolver {
		return func(args map[string]any) (any, error) {
			p := f.state.Array.ParityCheckStatus
			if p == nil {
				p = &unraidapi.ParityCheck{Status: "NEVER_RUN"}
				f.state.Array.ParityCheckStatus = p
			}
			running := p.Running != nil && *p.Running
			// unraid/api refuses only a start while a check runs
			// (parity.service.ts: mdResync != 0).
			if action == "start" && running {
				return nil, upstreamError("Invalid parity check state: start")
			}
			// Before 4.35.0 resume was sent to emhttpd as cmdCheck=Resume,
			// which emhttpd takes for a new check from the start, without
			// corrections (unraid/api#1815, fixed by #2009).
			if action == "resume" && unraidapi.Older(f.opts.Release, "4.35.0") {
				action, args = "start", map[string]any{"correct": false}
			}
			t, fl := true, false
			switch action {
			case "start":
				correct, _ := args["correct"].(bool)
				zero := int64(0)
				*p = unraidapi.ParityCheck{Status: "RUNNING", Running: &t, Paused: &fl, Correcting: &correct, Progress: &zero, Errors: &zero}
			case "pause":
				p.Status, p.Paused = "PAUSED", &t
			case "resume":
				p.Status, p.Paused = "RUNNING", &fl
			case "cancel":
				p.Status, p.Running, p.Paused = "CANCELLED", &fl, &fl
			}
			return f.state.ParityHistory, nil
		}
	}
	return map[string]any{
		"docker":      map[string]any{"start": container("start"), "stop": container("stop"), "restart": container("restart")},
		"vm":          map[string]any{"start": vm("start"), "stop": vm("stop")},
		"parityCheck": map[string]any{"start": parity("start"), "pause": parity("pause"), "resume": parity("resume"), "cancel": parity("cancel")},
		"archiveNotifications": resolver(func(args map[string]any) (any, error) {
			ids, _ := args["ids"].([]any)
			for _, raw := range ids {
				id, _ := raw.(string)
				for i := range f.state.Notifications {
					if strip(f.state.Notifications[i].ID) == strip(id) {
						f.state.Notifications[i].Type = "ARCHIVE"
					}
				}
			}
			return f.overview(), nil
		}),
	}
}

// vmTransition changes v as VmsService.setVmState (vms.service.ts) does:
// it refuses a transition its table does not allow, acts only from the
// states its switch handles (start: SHUTOFF boots, PAUSED resumes; stop:
// RUNNING or PAUSED shut down, then power off after ten one-second polls)
// and answers true for an allowed transition it does nothing for.
func vmTransition(v *unraidapi.VM, action string) (any, error) {
	target := map[string]string{"start": "RUNNING", "stop": "SHUTOFF"}[action]
	allowed := map[string][]string{
		"NOSTATE": {"RUNNING", "SHUTOFF"}, "RUNNING": {"PAUSED", "SHUTOFF"}, "IDLE": {"RUNNING", "SHUTOFF"},
		"PAUSED": {"RUNNING", "SHUTOFF"}, "SHUTDOWN": {"SHUTOFF"}, "SHUTOFF": {"RUNNING"}, "CRASHED": {"SHUTOFF"},
		"PMSUSPENDED": {"RUNNING", "SHUTOFF"},
	}[v.State]
	if !slices.Contains(allowed, target) {
		return nil, upstreamError(fmt.Sprintf("Failed to set VM state: Invalid state transition from %s to %s", v.State, target))
	}
	switch {
	case target == "RUNNING" && (v.State == "SHUTOFF" || v.State == "PAUSED"):
		v.State = "RUNNING"
	case target == "SHUTOFF" && (v.State == "RUNNING" || v.State == "PAUSED"):
		v.State = "SHUTOFF"
	}
	return true, nil
}
