package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/internal/approval"
	"github.com/toolgate/toolgate/internal/toolerr"
	"github.com/toolgate/toolgate/internal/toolkit"
	"github.com/toolgate/toolgate/services/unraid/unraidapi"
)

// The managed actions. Each exists only with UNRAID_ALLOW_WRITES=true and
// runs through the gateway's preview → ticket → confirm; the policy data
// makes unraid_parity_check wait for a person, and so does every action
// whose preview reports that it can end in a kill or a hard power-off.
// Previews hold only fields that do not drift by themselves (no "Up 3
// hours", no progress), so an unchanged Unraid gives the same preview at
// confirm. Each effect says what unraid/api 4.37.2 does for the mutation
// (api/src/unraid-api/graph/resolvers/{docker,vms,array}/…; see
// docs/services/unraid.md, Upstream).

// Effects a preview reports to the policy (fact "effects"): the shipped
// policy data makes each of these wait for a person.
const (
	// effectContainerKill: Docker kills the container (SIGKILL) when it
	// has not stopped 10 seconds after its stop signal.
	effectContainerKill = "container_kill"
	// effectVMPowerOff: Unraid powers the VM off hard when its guest has
	// not shut down about 10 seconds after the request.
	effectVMPowerOff = "vm_power_off"
)

// facts are what every unraid action's preview tells the policy: the
// effects that can follow from it (none is a fact too: the policy data
// requires the fact of every unraid write).
func facts(effects ...string) approval.Facts {
	if effects == nil {
		effects = []string{}
	}
	return approval.Facts{"effects": effects}
}

type (
	containerControlArgs struct {
		Container string `json:"container" jsonschema:"Container name or id." schema:"minLength=1,maxLength=200,pattern=^[A-Za-z0-9][A-Za-z0-9_.:-]*$"`
		Action    string `json:"action" jsonschema:"stop and restart kill the container if it ignores its stop signal for 10 s." schema:"enum=start|stop|restart"`
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
		Action string `json:"action" jsonschema:"start, or stop: shutdown request, hard power-off after ~10 s." schema:"enum=start|stop"`
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

// PreviewFacts: a stop or restart can end in a kill.
func (c containerChange) PreviewFacts() approval.Facts {
	if c.Action == "start" {
		return facts()
	}
	return facts(effectContainerKill)
}

// PreviewFacts: a stop can end in a hard power-off.
func (v vmChange) PreviewFacts() approval.Facts {
	if v.Action == "start" {
		return facts()
	}
	return facts(effectVMPowerOff)
}

// PreviewFacts: a parity check stops nothing (the tool needs a person
// anyway).
func (parityChange) PreviewFacts() approval.Facts { return facts() }

// PreviewFacts: archiving stops nothing.
func (archiveChange) PreviewFacts() approval.Facts { return facts() }

func (s *Service) writes() []toolkit.Tool {
	return []toolkit.Tool{
		{Name: "unraid_container_control", Title: "Start, stop or restart a container",
			Description: "Start, stop or restart one Docker container. Stop and restart send its stop signal and kill it after 10 s; they wait for a person. Previewed first.",
			Annotations: toolkit.Annotations{},
			Handler:     toolkit.WriteFor(s.containerPreview, s.containerApply)},
		{Name: "unraid_vm_control", Title: "Start or stop a VM",
			Description: "Start a VM, or stop it: Unraid asks the guest to shut down and powers it off hard after ~10 s; returns when it is off. Stop waits for a person.",
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

// apiVersion is the release of this Unraid's API (info.versions.core.api),
// "" when it does not say.
func (s *Service) apiVersion(ctx context.Context) (string, error) {
	var d unraidapi.ReadyData
	if _, err := s.api.Query(ctx, unraidapi.Ready, nil, &d); err != nil {
		return "", err
	}
	return str(d.Info.Versions.Core.API), nil
}

// mutationTimeout words a deadline that passed while a mutation ran:
// Unraid may still finish it.
func mutationTimeout(err error, check string) error {
	if unraidapi.IsCode(err, toolerr.Timeout) {
		return toolerr.Wrap(toolerr.Timeout, err, "Unraid did not answer in time; the action may still complete: check with %s before trying again", check)
	}
	return err
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
	if in.Action == "restart" {
		v, err := s.apiVersion(ctx)
		if err != nil {
			return ch, err
		}
		if unraidapi.Older(v, "4.36.0") {
			return ch, toolerr.New(toolerr.InvalidArgument, "this Unraid's API (%s) has no container restart (it came with API 4.36.0): stop the container, then start it", v)
		}
	}
	ch.Effect = map[string]string{
		"start": "Docker starts the container; the call returns with its new state",
		"stop": "Docker sends the container its stop signal (SIGTERM unless its image sets another) and KILLS it if it has not exited after 10 seconds (unsaved work in it is lost); " +
			"the call returns when it has stopped; what it serves is unavailable until it is started again",
		"restart": "Docker stops the container the same way (stop signal, KILLED after 10 seconds) and starts it again; Unraid then waits up to 10 seconds for it to run; " +
			"what it serves is unavailable meanwhile",
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
		return nil, mutationTimeout(err, "unraid_container_list")
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

// vmRefusal says why Unraid's API would not do action to a VM in state,
// or "" when it would: VmsService.setVmState boots only a SHUTOFF VM (a
// PAUSED one it resumes), shuts down only a RUNNING or PAUSED one, refuses
// some transitions and answers true without doing anything for the rest.
func vmRefusal(action, state, vm string) string {
	switch {
	case action == "start" && state == "SHUTOFF", action == "stop" && (state == "RUNNING" || state == "PAUSED"):
		return ""
	case action == "start" && (state == "RUNNING" || state == "IDLE"):
		return fmt.Sprintf("VM %s is already running (%s); nothing to start", vm, strings.ToLower(state))
	case action == "start" && state == "PAUSED":
		return fmt.Sprintf("VM %s is paused, not stopped; resuming is not offered here", vm)
	case action == "stop" && state == "SHUTOFF":
		return fmt.Sprintf("VM %s is already stopped", vm)
	case state == "SHUTDOWN":
		return fmt.Sprintf("VM %s is shutting down; check again with unraid_vm_list in a moment", vm)
	}
	return fmt.Sprintf("VM %s is %s: Unraid's API would refuse to %s it or report success without doing anything; use the Unraid web UI", vm, strings.ToLower(state), action)
}

func (s *Service) vmPreview(ctx context.Context, in vmControlArgs) (vmChange, error) {
	v, err := s.findVM(ctx, in.VM)
	if err != nil {
		return vmChange{}, err
	}
	ch := vmChange{Action: in.Action, VM: clip(str(v.Name), 200), ID: v.ID, State: v.State}
	if why := vmRefusal(in.Action, v.State, ch.VM); why != "" {
		return ch, toolerr.New(toolerr.InvalidArgument, "%s", why)
	}
	switch {
	case in.Action == "start":
		ch.Effect = "libvirt boots the VM; the call returns once it has started"
	case v.State == "PAUSED":
		ch.Effect = "the VM is paused, so its guest cannot answer the shutdown request: after about 10 seconds Unraid POWERS IT OFF HARD " +
			"(like pulling the plug: unsaved data in the guest is lost); the call returns when it is off"
	default:
		ch.Effect = "Unraid asks the guest to shut down (ACPI power button) and checks once a second; if it is not off after about 10 seconds, Unraid POWERS IT OFF HARD " +
			"(like pulling the plug: unsaved data in the guest is lost); the call returns when it is off"
	}
	return ch, nil
}

func (s *Service) vmApply(ctx context.Context, _ vmControlArgs, p vmChange) (any, error) {
	doc := map[string]unraidapi.Document{"start": unraidapi.VMStart, "stop": unraidapi.VMStop}[p.Action]
	var out struct {
		VM map[string]bool `json:"vm"`
	}
	if err := s.api.Mutate(ctx, doc, map[string]any{"id": p.ID}, &out); err != nil {
		return nil, mutationTimeout(err, "unraid_vm_list")
	}
	res := map[string]any{"vm": p.VM, "action": p.Action, "done": out.VM[p.Action]}
	// The mutation returns only when the VM has started or is off; the
	// state shown is read afterwards.
	if v, err := s.findVM(ctx, p.ID); err == nil {
		res["state"] = v.State
	}
	if p.Action == "stop" {
		res["note"] = "Unraid does not say whether the guest shut down by itself or was powered off hard"
	}
	return res, nil
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
		v, err := s.apiVersion(ctx)
		if err != nil {
			return ch, err
		}
		ch.Effect = "resumes the paused check where it stopped"
		if unraidapi.Older(v, "4.35.0") {
			// unraid/api#1815: sent as cmdCheck=Resume, which emhttpd takes
			// for a new check; fixed in 4.35.0 (#2009).
			ch.Effect = fmt.Sprintf("on this Unraid's API (%s) resume STARTS A NEW CHECK FROM THE BEGINNING, without corrections (a bug fixed in API 4.35.0); "+
				"the progress so far is lost; the array stays usable but slower", v)
		}
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
		return nil, mutationTimeout(err, "unraid_array_status")
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
		return nil, mutationTimeout(err, "unraid_notification_list")
	}
	// Unraid archives each id on its own and skips, without a word, one
	// that is no longer unread (notifications.service.ts archiveIds).
	return map[string]any{"requested": len(ids), "unread_left": out.Overview.Unread.Total,
		"note": "Unraid skips, without saying so, any of them that was no longer unread"}, nil
}
