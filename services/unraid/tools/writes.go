package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// The managed actions. Each exists only with UNRAID_ALLOW_WRITES=true and
// runs through the gateway's preview → ticket → confirm; the policy data
// makes unraid_parity_check wait for a person. Previews hold only fields
// that do not drift by themselves (no "Up 3 hours", no progress), so an
// unchanged Unraid gives the same preview at confirm.

type (
	containerControlArgs struct {
		Container string `json:"container" jsonschema:"Container name or id." schema:"minLength=1,maxLength=200,pattern=^[A-Za-z0-9][A-Za-z0-9_.:-]*$"`
		Action    string `json:"action" schema:"enum=start|stop|restart"`
	}
	containerChange struct {
		Action    string `json:"action"`
		Container string `json:"container"`
		ID        string `json:"id"`
		Image     string `json:"image"`
		State     string `json:"current_state"`
		Autostart bool   `json:"autostart"`
		Effect    string `json:"effect"`
	}
	vmControlArgs struct {
		VM     string `json:"vm" jsonschema:"VM name or id." schema:"minLength=1,maxLength=200"`
		Action string `json:"action" jsonschema:"start, or stop (a clean shutdown)." schema:"enum=start|stop"`
	}
	vmChange struct {
		Action string `json:"action"`
		VM     string `json:"vm"`
		ID     string `json:"id"`
		State  string `json:"current_state"`
		Effect string `json:"effect"`
	}
	parityArgs struct {
		Action  string `json:"action" schema:"enum=start|pause|resume|cancel"`
		Correct bool   `json:"correct,omitempty" jsonschema:"With start: write corrections to parity (default: check only)."`
	}
	parityChange struct {
		Action     string `json:"action"`
		Correct    bool   `json:"correct,omitempty"`
		ArrayState string `json:"array_state"`
		Status     string `json:"current_status"`
		Effect     string `json:"effect"`
	}
	archiveArgs struct {
		IDs []string `json:"ids" jsonschema:"Ids from unraid_notification_list." schema:"minItems=1,maxItems=20,uniqueItems=true,items.maxLength=200,items.pattern=^[A-Za-z0-9][A-Za-z0-9_.:-]*$"`
	}
	archivedNote struct {
		ID         string `json:"id"`
		Importance string `json:"importance"`
		Subject    string `json:"subject"`
		Time       string `json:"time"`
	}
	archiveChange struct {
		Action        string         `json:"action"`
		Notifications []archivedNote `json:"notifications"`
	}
)

func (s *Service) writes() []toolkit.Tool {
	return []toolkit.Tool{
		{Name: "unraid_container_control", Title: "Start, stop or restart a container",
			Description: "Start, stop or restart one Docker container. Previewed with its current state; applies after confirmation.",
			Annotations: toolkit.Annotations{},
			Handler:     toolkit.WriteFor(s.containerPreview, s.containerApply)},
		{Name: "unraid_vm_control", Title: "Start or stop a VM",
			Description: "Start a VM or shut it down cleanly. Previewed with its current state; applies after confirmation.",
			Annotations: toolkit.Annotations{},
			Handler:     toolkit.WriteFor(s.vmPreview, s.vmApply)},
		{Name: "unraid_parity_check", Title: "Start, pause, resume or cancel a parity check",
			Description: "Start (optionally correcting), pause, resume or cancel the parity check. A person must approve outside the chat.",
			Annotations: toolkit.Annotations{},
			Handler:     toolkit.WriteFor(s.parityPreview, s.parityApply)},
		{Name: "unraid_notification_archive", Title: "Archive notifications",
			Description: "Archive up to 20 unread notifications by id. Previewed with their subjects.",
			Annotations: toolkit.Annotations{Idempotent: true},
			Handler:     toolkit.WriteFor(s.archivePreview, s.archiveApply)},
	}
}

func (s *Service) containerPreview(ctx context.Context, in containerControlArgs) (containerChange, error) {
	c, err := s.findContainer(ctx, in.Container)
	if err != nil {
		return containerChange{}, err
	}
	ch := containerChange{Action: in.Action, Container: name(c), ID: c.ID, Image: clip(c.Image, 200), State: c.State, Autostart: c.AutoStart}
	switch {
	case in.Action == "start" && c.State == "RUNNING":
		return ch, toolerr.New(toolerr.InvalidArgument, "container %s is already running; nothing to start", ch.Container)
	case in.Action == "start" && c.State == "PAUSED":
		return ch, toolerr.New(toolerr.InvalidArgument, "container %s is paused, not stopped; unpausing is not offered here", ch.Container)
	case in.Action == "stop" && c.State == "EXITED":
		return ch, toolerr.New(toolerr.InvalidArgument, "container %s is already stopped", ch.Container)
	case in.Action == "restart" && c.State != "RUNNING":
		return ch, toolerr.New(toolerr.InvalidArgument, "container %s is not running (%s); use action start", ch.Container, strings.ToLower(c.State))
	}
	ch.Effect = map[string]string{
		"start":   "starts the container",
		"stop":    "stops the container; what it serves is unavailable until it is started again",
		"restart": "stops and starts the container; what it serves is briefly unavailable",
	}[in.Action]
	return ch, nil
}

func (s *Service) containerApply(ctx context.Context, in containerControlArgs, p containerChange) (any, error) {
	doc := map[string]unraidapi.Document{"start": unraidapi.ContainerStart, "stop": unraidapi.ContainerStop, "restart": unraidapi.ContainerRestart}[p.Action]
	var out struct {
		Docker map[string]struct {
			State string `json:"state"`
		} `json:"docker"`
	}
	if err := s.api.Mutate(ctx, doc, map[string]any{"id": p.ID}, &out); err != nil {
		return nil, err
	}
	return map[string]any{"container": p.Container, "action": p.Action, "state": out.Docker[p.Action].State}, nil
}

func (s *Service) findVM(ctx context.Context, ref string) (unraidapi.VM, error) {
	var d unraidapi.VMsData
	if _, err := s.api.Query(ctx, unraidapi.VMs, nil, &d); err != nil {
		return unraidapi.VM{}, err
	}
	for _, v := range d.VMs.Domains {
		if str(v.Name) == ref || v.ID == ref || strip(v.ID) == strip(ref) {
			return v, nil
		}
	}
	return unraidapi.VM{}, toolerr.New(toolerr.NotFound, "Unraid has no VM %q; list them with unraid_vm_list", ref)
}

func (s *Service) vmPreview(ctx context.Context, in vmControlArgs) (vmChange, error) {
	v, err := s.findVM(ctx, in.VM)
	if err != nil {
		return vmChange{}, err
	}
	ch := vmChange{Action: in.Action, VM: clip(str(v.Name), 200), ID: v.ID, State: v.State}
	stopped := slices.Contains([]string{"SHUTOFF", "SHUTDOWN", "CRASHED", "NOSTATE"}, v.State)
	switch {
	case in.Action == "start" && !stopped:
		return ch, toolerr.New(toolerr.InvalidArgument, "VM %s is %s, not stopped; nothing to start", ch.VM, strings.ToLower(v.State))
	case in.Action == "stop" && stopped:
		return ch, toolerr.New(toolerr.InvalidArgument, "VM %s is already stopped", ch.VM)
	}
	ch.Effect = map[string]string{"start": "boots the VM", "stop": "asks the VM's operating system to shut down (like pressing the power button)"}[in.Action]
	return ch, nil
}

func (s *Service) vmApply(ctx context.Context, _ vmControlArgs, p vmChange) (any, error) {
	doc := map[string]unraidapi.Document{"start": unraidapi.VMStart, "stop": unraidapi.VMStop}[p.Action]
	var out struct {
		VM map[string]bool `json:"vm"`
	}
	if err := s.api.Mutate(ctx, doc, map[string]any{"id": p.ID}, &out); err != nil {
		return nil, err
	}
	return map[string]any{"vm": p.VM, "action": p.Action, "accepted": out.VM[p.Action],
		"note": "the VM changes state in the background; check with unraid_vm_list"}, nil
}

func (s *Service) parityPreview(ctx context.Context, in parityArgs) (parityChange, error) {
	if in.Correct && in.Action != "start" {
		return parityChange{}, toolerr.New(toolerr.InvalidArgument, "correct applies only to action start")
	}
	var d struct {
		Array unraidapi.Array `json:"array"`
	}
	if _, err := s.api.Query(ctx, unraidapi.ArrayStatus, nil, &d); err != nil {
		return parityChange{}, err
	}
	p := d.Array.ParityCheckStatus
	if p == nil {
		return parityChange{}, toolerr.New(toolerr.UpstreamUnavailable, "this Unraid's API does not report the parity check's state (array.parityCheckStatus came with API 4.16.0), so what the action would do cannot be shown; update Unraid (or the Unraid Connect plugin)")
	}
	running, paused := p.Running != nil && *p.Running, p.Paused != nil && *p.Paused
	ch := parityChange{Action: in.Action, Correct: in.Correct, ArrayState: d.Array.State, Status: p.Status}
	switch {
	case in.Action == "start" && d.Array.State != "STARTED":
		return ch, toolerr.New(toolerr.InvalidArgument, "the array is %s; a parity check needs a started array", strings.ToLower(d.Array.State))
	case in.Action == "start" && (running || paused):
		return ch, toolerr.New(toolerr.InvalidArgument, "a parity check is already %s", strings.ToLower(p.Status))
	case in.Action == "pause" && (!running || paused):
		return ch, toolerr.New(toolerr.InvalidArgument, "no parity check is running (status %s)", strings.ToLower(p.Status))
	case in.Action == "resume" && !paused:
		return ch, toolerr.New(toolerr.InvalidArgument, "no parity check is paused (status %s)", strings.ToLower(p.Status))
	case in.Action == "cancel" && !running && !paused:
		return ch, toolerr.New(toolerr.InvalidArgument, "no parity check is running (status %s)", strings.ToLower(p.Status))
	}
	switch {
	case in.Action == "start" && in.Correct:
		ch.Effect = "reads every disk for many hours and WRITES corrections to the parity disk(s); the array stays usable but slower"
	case in.Action == "start":
		ch.Effect = "reads every disk for many hours and only reports errors; the array stays usable but slower"
	case in.Action == "pause":
		ch.Effect = "pauses the running check; it can be resumed"
	case in.Action == "resume":
		ch.Effect = "resumes the paused check where it stopped"
	default:
		ch.Effect = "cancels the check; a later check starts from the beginning"
	}
	return ch, nil
}

func (s *Service) parityApply(ctx context.Context, _ parityArgs, p parityChange) (any, error) {
	doc := map[string]unraidapi.Document{"start": unraidapi.ParityStart, "pause": unraidapi.ParityPause,
		"resume": unraidapi.ParityResume, "cancel": unraidapi.ParityCancel}[p.Action]
	var vars map[string]any
	if p.Action == "start" {
		vars = map[string]any{"correct": p.Correct}
	}
	// Unraid answers with its parity history (JSON); it says nothing about
	// the new state, so the answer points to the status instead.
	if err := s.api.Mutate(ctx, doc, vars, nil); err != nil {
		return nil, err
	}
	return map[string]any{"action": p.Action, "requested": true, "note": "see unraid_array_status for the check's progress"}, nil
}

func (s *Service) archivePreview(ctx context.Context, in archiveArgs) (archiveChange, error) {
	// Unread notifications are few in practice; 500 bounds the lookup.
	var d unraidapi.NotificationsData
	filter := map[string]any{"type": "UNREAD", "offset": 0, "limit": 500}
	if _, err := s.api.Query(ctx, unraidapi.Notifications, map[string]any{"filter": filter}, &d); err != nil {
		return archiveChange{}, err
	}
	ch := archiveChange{Action: "archive"}
	var missing int
	for _, id := range in.IDs {
		i := slices.IndexFunc(d.Notifications.List, func(n unraidapi.Notification) bool { return n.ID == id || strip(n.ID) == strip(id) })
		if i < 0 {
			missing++
			continue
		}
		n := d.Notifications.List[i]
		ch.Notifications = append(ch.Notifications, archivedNote{ID: n.ID, Importance: n.Importance, Subject: clip(n.Subject, 300), Time: str(n.Timestamp)})
	}
	if missing > 0 {
		return ch, toolerr.New(toolerr.NotFound, "%d of the ids are not unread notifications; list them with unraid_notification_list", missing)
	}
	return ch, nil
}

func (s *Service) archiveApply(ctx context.Context, _ archiveArgs, p archiveChange) (any, error) {
	ids := make([]any, 0, len(p.Notifications))
	for _, n := range p.Notifications {
		ids = append(ids, n.ID)
	}
	var out struct {
		Overview unraidapi.NotificationOverview `json:"archiveNotifications"`
	}
	if err := s.api.Mutate(ctx, unraidapi.ArchiveNotifications, map[string]any{"ids": ids}, &out); err != nil {
		return nil, err
	}
	return map[string]any{"archived": len(ids), "unread_left": out.Overview.Unread.Total}, nil
}
